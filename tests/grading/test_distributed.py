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
from attngrade.reports.cluster import render_chunk as _RENDER_CHUNK  # noqa: E402
from attngrade.grading.distributed import run_chunk  # noqa: E402
from attngrade.problems.keys import load_keys  # noqa: E402
from attngrade.problems import load_homework  # noqa: E402
from attngrade.intake.submissions import load_submission  # noqa: E402
from attngrade.grading import Class, Options, grade

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_local_cluster_of_two_workers_gives_byte_identical_outputs(tmp_path, capsys):
    folder = ROOT / "examples" / "cs224n-w21-a5"
    assert main(["run", str(folder), "-o", str(tmp_path / "local"), "--workers", "1"]) == 0
    assert main(["run", str(folder), "-o", str(tmp_path / "dask"), "--executor", "dask", "--workers", "2"]) == 0
    written = {path.relative_to(tmp_path / "local") for path in (tmp_path / "local").rglob("*") if path.is_file()}
    assert written == {path.relative_to(tmp_path / "dask") for path in (tmp_path / "dask").rglob("*") if path.is_file()}
    # these name their OUT, or are its own secret
    for name in sorted(written - {Path("overrides.yaml"), Path(".overrides.sha256"), Path(".salt")}):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name


RENDERED: list[int] = []  # chunk sizes, as in-process (threaded) workers render them


def _recorded_render_chunk(results, homeworks, rubric):
    RENDERED.append(len(results))
    return _RENDER_CHUNK(results, homeworks, rubric)


def test_reports_are_rendered_on_the_cluster_as_they_are_here(tmp_path, monkeypatch):
    from dask.distributed import LocalCluster

    from attngrade.grading.distributed import DaskExecutor
    from attngrade.reports import cluster
    from attngrade.reports.parallel import ReportJob, write_reports

    batch = grade(Class([ROOT / "examples" / "cs224n-w21-a5"]), Options(solutions=ROOT / "solutions", workers=0))
    folders = [r.student for r in batch.results]
    write_reports(ReportJob(batch.results, folders, tmp_path / "here", batch.homeworks, False, None), 1, lambda n: None)
    RENDERED.clear()
    monkeypatch.setattr(cluster, "render_chunk", _recorded_render_chunk)
    monkeypatch.setattr(cluster, "CHUNK", 5)
    with LocalCluster(n_workers=2, processes=False, dashboard_address=None) as local:  # threads: sees the patch
        executor = DaskExecutor(address=local.scheduler_address)
        try:
            advanced = []
            job = ReportJob(batch.results, folders, tmp_path / "there", batch.homeworks, False, None)
            cluster.ClusterReports(executor).write(job, advanced.append)
        finally:
            executor.close()
    assert sorted(RENDERED) == [1, 5, 5, 5] and sum(advanced) == len(folders) == 16
    for folder in folders:
        here = (tmp_path / "here" / folder / "report.html").read_bytes()
        assert (tmp_path / "there" / folder / "report.html").read_bytes() == here, folder


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


def _run_into(tmp_path, address: str) -> int:
    return main(["run", str(ROOT / "examples" / "eecs182-fa22-hw8"), "-o", str(tmp_path / "out"),
                 "--executor", f"dask={address}", "--workers", "1"])


def test_a_server_that_never_answers_as_a_scheduler_is_said_in_bounded_time(tmp_path, capsys, monkeypatch):
    import socket

    monkeypatch.setattr("attngrade.grading.distributed.CONNECT_SECONDS", 1)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # accepts the connection, then says nothing (a web server, say)
    try:
        start = time.monotonic()
        code = _run_into(tmp_path, f"tcp://127.0.0.1:{listener.getsockname()[1]}")
        assert code == 2 and time.monotonic() - start < 20
    finally:
        listener.close()
    assert "nothing answered as a Dask scheduler within 1 s" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_address_that_is_not_one_is_said(tmp_path, capsys):
    assert _run_into(tmp_path, "foo") == 2
    assert "--executor dask=foo: no Dask scheduler answers there" in capsys.readouterr().err


@pytest.mark.slow
def test_a_cluster_that_cannot_check_is_said_before_the_class_is_read(tmp_path, capsys, monkeypatch):
    from dask.distributed import LocalCluster

    monkeypatch.setattr("attngrade.grading.distributed.CONNECT_SECONDS", 1)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty:
        assert _run_into(tmp_path, empty.scheduler_address) == 2
    assert "no worker has joined the scheduler" in capsys.readouterr().err
    monkeypatch.setattr("attngrade.grading.distributed.CONNECT_SECONDS", 10)  # a loaded machine connects slowly
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as daemonic:
        assert _run_into(tmp_path, daemonic.scheduler_address) == 2  # Dask's default: workers are daemons
    assert "cannot start processes" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_local_cluster_has_every_core_unless_told(monkeypatch):
    from attngrade.grading.distributed import executor_from
    from attngrade.grading.execute import default_workers

    assert executor_from("dask", 2.0, None).workers == default_workers()
    assert executor_from("dask", 2.0, 3).workers == 3 and executor_from("dask", 2.0, 0).workers == 1


def test_two_chunks_of_two_homeworks_at_once_in_one_worker_each_check_their_own():
    # A Dask worker with two threads runs two chunks at once, each through a pool of its own.
    chunks = []
    for folder, name in (("cs224n-w21-a5", "full-marks.yaml"), ("eecs182-fa22-hw8", None)):
        path = ROOT / "examples" / folder
        path = path / name if name else sorted(path.glob("*.yaml"))[0]
        submission = load_submission(path)
        hw = load_homework(submission.homework)
        given = assignment(hw, load_keys(ROOT / "solutions", hw))
        planned = plan([submission], lambda _, given=given: given)
        chunks.append((list(planned.tasks.values()), planned.assignments))
    failures: list = []

    def chunk(tasks, assignments):
        try:
            for _ in range(3):
                assert len(run_chunk(tasks, assignments, 2.0)) == len(tasks)
        except BaseException as err:  # noqa: BLE001 - reported below
            failures.append(err)

    threads = [threading.Thread(target=chunk, args=one) for one in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures, failures
