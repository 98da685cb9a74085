"""The Dask executor: the run stage on a cluster, with the same results as on a laptop."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")

from attngrade.checkers import REGISTRY, Outcome  # noqa: E402
from attngrade.checkers.base import Check  # noqa: E402
from attngrade.cli import main  # noqa: E402
from attngrade.grading import assignment, plan  # noqa: E402
from attngrade.grading.distributed import run_chunk  # noqa: E402
from attngrade.keys import load_keys  # noqa: E402
from attngrade.problems import load_homework  # noqa: E402
from attngrade.submissions import load_submission  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_local_cluster_of_two_workers_gives_byte_identical_outputs(tmp_path, capsys):
    folder = ROOT / "examples" / "cs224n-w21-a5"
    assert main(["run", str(folder), "-o", str(tmp_path / "local"), "--workers", "1"]) == 0
    assert main(["run", str(folder), "-o", str(tmp_path / "dask"), "--executor", "dask", "--workers", "2"]) == 0
    for name in ("results.json", "grades.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name


def _hangs(answers, ctx):
    time.sleep(30)
    return Outcome(0.0, ("finished",))


def test_on_a_worker_each_check_still_runs_under_the_budget(monkeypatch):
    """What a Dask worker runs (a chunk, off the main thread) stops a hanging check at its budget."""
    monkeypatch.setitem(REGISTRY, "attention_qkv", Check("attention_qkv", _hangs))  # forked pool: inherited
    hw = load_homework("cs224n-w21-a5")
    given = assignment(hw, load_keys(ROOT / "solutions", hw))
    planned = plan([load_submission(ROOT / "examples/cs224n-w21-a5/full-marks.yaml")], lambda _: given)
    tasks = list(planned.tasks.values())
    done: list = []
    start = time.monotonic()
    worker = threading.Thread(target=lambda: done.extend(run_chunk(tasks, planned.assignments, 0.5)))
    worker.start()
    worker.join(20)
    assert not worker.is_alive() and time.monotonic() - start < 15
    by_key = dict(zip((t.key for t in tasks), done))
    hung = [o for k, o in by_key.items() if k.part == "1e.ii"]
    assert hung and all(o.invalid and "longer than the 0.5 s limit" in o.feedback[0] for o in hung)
    assert any(o.earned > 0 for k, o in by_key.items() if k.part == "1b")  # the others were checked


def test_a_scheduler_that_does_not_answer_is_a_configuration_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("attngrade.grading.distributed.CONNECT_SECONDS", 1)
    code = main(["run", str(ROOT / "examples" / "eecs182-fa22-hw8"), "-o", str(tmp_path / "out"),
                 "--executor", "dask=tcp://127.0.0.1:9", "--workers", "1"])
    assert code == 2 and "no Dask scheduler answers there" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_unknown_executor_is_a_usage_error(tmp_path, capsys):
    assert main(["run", str(ROOT / "examples" / "eecs182-fa22-hw8"), "-o", str(tmp_path / "o"),
                 "--executor", "spark"]) == 2
    assert "the executors are 'local' (the default) and 'dask[=ADDRESS]'" in capsys.readouterr().err
