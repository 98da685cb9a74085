"""Reports written by forked processes are the reports written in one process."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest


from attngrade.outputs.layout import folder_names
from attngrade.reports import parallel
from attngrade.reports.parallel import SERIAL_BELOW, ClassPage, ReportJob, ReportPool, write_reports
from attngrade.grading import Class, Options, grade

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def large_class():
    """The bundled A5 class, repeated under new ids until the pool is worth starting."""
    batch = grade(Class([ROOT / "examples" / "cs224n-w21-a5"]), Options(solutions=ROOT / "solutions"))
    graded = batch.results
    copies = -(-SERIAL_BELOW // len(graded))
    results = [replace(r, student=f"{r.student}-{i}") for i in range(copies) for r in graded]
    return results, batch.homeworks


def _write(results, homeworks, out: Path, workers: int) -> list[str]:
    calls: list[str] = []
    folders = folder_names(results)
    with ReportPool(workers) as pool:
        pool.start(len(results))
        assert (pool._pool is not None) == (workers > 1 and len(results) >= parallel.FORK_EARLY_FROM)
        job = ReportJob(results, folders, out, homeworks, False, ClassPage(out / "index.html", "Class results"))
        write_reports(job, workers, lambda n: None, pool=pool, meanwhile=lambda: calls.append("tables"))
    return calls


@pytest.mark.parametrize("how", ["inherited", "pickled"])
def test_forked_reports_and_class_page_match_the_serial_ones_byte_for_byte(large_class, tmp_path, monkeypatch, how):
    """Both ways the children get the class: forked late and inheriting it (a class below
    FORK_EARLY_FROM), or forked before it was read and sent it pickled (a larger one)."""
    results, homeworks = large_class
    if how == "pickled":
        monkeypatch.setattr(parallel, "FORK_EARLY_FROM", len(results))
    inherited = []
    monkeypatch.setattr(parallel, "_write_inherited",
                        lambda *a, _real=parallel._write_inherited: inherited.append(1) or _real(*a))
    serial, forked = tmp_path / "serial", tmp_path / "forked"
    assert _write(results, homeworks, serial, 1) == ["tables"]
    assert _write(results, homeworks, forked, 2) == ["tables"]  # the parent's own outputs, once, while children render
    assert len(inherited) == (how == "inherited")  # the path under test is the one taken
    written = sorted(p.relative_to(serial) for p in serial.rglob("*.html"))
    assert len(written) == len(results) + 1
    assert written == sorted(p.relative_to(forked) for p in forked.rglob("*.html"))
    for rel in written:
        assert (serial / rel).read_bytes() == (forked / rel).read_bytes(), rel


@pytest.mark.parametrize("thaws", [False, True])
def test_a_caller_that_unfreezes_itself_is_not_made_to_count_what_is_frozen(large_class, tmp_path, monkeypatch,
                                                                             thaws):
    # Counting the frozen objects walks them all (17 ms with sympy loaded) while nothing else runs;
    # `grade run` unfreezes everything itself, so the count is asked only of other callers.
    import gc

    results, homeworks = large_class
    counted = []
    real = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counted.append(1) or real())
    frozen_before = real()
    with ReportPool(2, thaws=thaws) as pool:
        pool.write(ReportJob(results, folder_names(results), tmp_path / "out", homeworks, False, None), lambda n: None)
    try:
        assert len(counted) == (not thaws)
        assert (tmp_path / "out" / folder_names(results)[0] / "report.html").is_file()
        if thaws:
            assert real() > frozen_before, "left frozen, for the caller to unfreeze"
    finally:
        if thaws:  # what grade run's own end does
            gc.unfreeze()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_pool_that_will_fork_prepares_what_each_process_needs_first(workers):
    # Done once in the parent (while the run stage's workers check), the processes forked for the
    # reports inherit it; with one worker the reports are rendered here and it waits for the first.
    import subprocess
    import sys

    probe = ("import sys\n"
             "from attngrade.reports.environment import environment\n"
             "from attngrade.reports.parallel import ReportPool\n"
             f"ReportPool({workers}).prepare()\n"
             "print('latex2mathml.converter' in sys.modules, bool(environment().cache))\n")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert shown == [str(workers > 1)] * 2


@pytest.mark.parametrize("workers", [2, 3])
def test_this_process_renders_beside_the_children_once_its_own_outputs_are_written(large_class, tmp_path,
                                                                                    monkeypatch, workers):
    # It is one of the `workers`: one child fewer to fork, and no third process on two cores.
    results, homeworks = large_class
    forked, here, order = [], [], []
    monkeypatch.setattr(parallel, "_fork", lambda n, _real=parallel._fork: forked.append(n) or _real(n))
    # Recorded in this process only: a child forked after the patch appends to its own copy.
    monkeypatch.setattr(parallel, "_render",
                        lambda rs, *a, _real=parallel._render: here.append(len(rs)) or order.append("range")
                        or _real(rs, *a))
    counted: list[int] = []
    with ReportPool(workers) as pool:
        job = ReportJob(results, folder_names(results), tmp_path / "out", homeworks, False,
                        ClassPage(tmp_path / "out" / "index.html", "Class results"))
        pool.write(job, counted.append, meanwhile=lambda: order.append("tables"))
    assert forked == [workers - 1]
    assert here and order[0] == "tables", "its own outputs first, then ranges beside the children"
    assert len(here) < -(-len(results) // parallel.CHUNK), "the children rendered the others"
    assert sum(counted) == len(results)
    assert all((tmp_path / "out" / f / "report.html").is_file() for f in folder_names(results))


def test_a_failure_in_this_process_stops_the_ranges_and_is_raised(large_class, tmp_path, monkeypatch, caplog):
    # A full disk (say) while this process renders: the children are sent nothing more, and no
    # callback of the pool fails on a pool that is shutting down.
    import logging
    import os

    results, homeworks = large_class
    parent = os.getpid()

    def render(rs, *a, _real=parallel._render):
        if os.getpid() == parent:
            raise OSError(28, "No space left on device")
        return _real(rs, *a)

    monkeypatch.setattr(parallel, "_render", render)
    caplog.set_level(logging.ERROR)
    with pytest.raises(OSError, match="No space left"):
        with ReportPool(2) as pool:
            pool.write(ReportJob(results * 2, folder_names(results * 2), tmp_path / "out", homeworks, False, None),
                       lambda n: None)
    assert not [r for r in caplog.records if "callback" in r.getMessage()]
    written = sum(1 for _ in (tmp_path / "out").rglob("report.html"))
    assert 0 < written < len(results * 2), "the child stopped after what it held"


def test_a_pool_that_cannot_be_prepared_costs_the_run_nothing(monkeypatch):
    # Prepared while the run stage's outcomes come in: a failure there would lose every outcome.
    def broken():
        raise ImportError("latex2mathml: no module named 'latex2mathml.converter'")

    monkeypatch.setattr(parallel, "warm", broken)
    ReportPool(2).prepare()  # does not raise; the renderers import and compile what they need themselves


class _Pool:
    """A pool that runs what it is given at once (in this thread): enough to follow the ranges."""

    def __init__(self):
        self.given: list[tuple] = []

    def submit(self, fn, *args):
        from concurrent.futures import Future

        self.given.append(args)
        future: Future = Future()
        future.set_result(args[1] - args[0])
        return future


def test_ranges_are_each_given_once_and_none_after_a_stop():
    size = parallel.CHUNK
    pool = _Pool()
    ranges = parallel._Ranges(pool, 7 * size + 3, ahead=1)
    ranges.send()  # each range a child ends calls for the next: here, all of them at once
    assert pool.given == [(i, min(i + size, 7 * size + 3)) for i in range(0, 7 * size + 3, size)]
    assert ranges.take() is None and len(ranges.sent) == 8

    pool = _Pool()
    ranges = parallel._Ranges(pool, 7 * parallel.CHUNK, ahead=1)
    assert ranges.take() == (0, parallel.CHUNK)
    ranges.stop()
    ranges.send()
    assert pool.given == [] and ranges.take() is None
