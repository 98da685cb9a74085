"""The worker pool sends checks in batches; a stuck check costs its own verdict, never its batch's."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from attngrade.grading import resolver
from attngrade.checkers import REGISTRY, Check, Outcome
from attngrade.grading import InProcess, load_all, plan
from attngrade.grading.loading import Loading
from attngrade.grading.execute import GRACE, TRIVIAL, WorkerPool, _batches, executor, start_fork_server
from attngrade.grading.tasks import check_of
from attngrade.grading.tasks import timed_out
from attngrade.grading import Class, Options, grade

ROOT = Path(__file__).resolve().parents[2]
STOP = threading.Event()


@pytest.fixture(scope="module")
def planned():
    """The bundled example classes: enough distinct checks for batches of several."""
    items = load_all([ROOT / "examples" / name for name in
                      ("cs224n-w21-a5", "mimuw-2022-p4", "eecs182-sp23-transformers", "nyu-dl-transformer")])
    return plan(items, resolver(Options(solutions=ROOT / "solutions")))


def _quick(planned):
    return {k: t for k, t in planned.tasks.items() if check_of(k, planned.assignments) not in TRIVIAL}


def test_batches_hold_every_task_once_and_code_checks_alone(planned):
    keys = list(_quick(planned))
    batches = _batches(keys, planned.assignments, workers=2)
    assert Counter(k for b in batches for k in b) == Counter(keys)
    assert max(len(b) for b in batches) > 1  # this class is large enough for batching to happen
    assert len(batches) >= 8  # several a worker: the last ones finish together
    for batch in batches:
        if any(REGISTRY[check_of(k, planned.assignments)].runs_code for k in batch):
            assert len(batch) == 1


def test_batched_outcomes_are_the_one_process_outcomes(planned):
    tasks = _quick(planned)
    assert WorkerPool(2, 2.0).run(tasks, planned.assignments) == InProcess(2.0).run(tasks, planned.assignments)


def test_trivial_checks_done_here_while_workers_check_give_the_same_outcomes(planned):
    tasks = dict(planned.tasks)
    assert len(tasks) > len(_quick(planned)) > 1  # both kinds, so both paths run
    assert WorkerPool(2, 2.0).run(tasks, planned.assignments) == InProcess(2.0).run(tasks, planned.assignments)


def test_a_finished_pool_leaves_no_worker_behind(planned):
    # run() returns without waiting for pebble to notice the pool stopped; settle() (called
    # before report processes fork, and at exit) waits for that, and the workers are gone.
    import multiprocessing

    from attngrade.grading.execute import settle

    assert WorkerPool(2, 2.0).run(_quick(planned), planned.assignments)
    settle()
    assert multiprocessing.active_children() == []
    assert not [t for t in threading.enumerate() if t.name == "attngrade-pool-join"]


def test_workers_started_by_the_fork_server_give_the_same_outcomes(planned):
    tasks = _quick(planned)
    assert start_fork_server()
    served = executor(2, 2.0, from_server=True)
    assert served.start_method == "forkserver" and executor(2, 2.0).start_method is None
    assert served.run(tasks, planned.assignments) == InProcess(2.0).run(tasks, planned.assignments)


def test_a_large_class_is_read_lazily_and_checked_by_served_workers(monkeypatch, tmp_path):
    # The thresholds of a class of 5,000, lowered to the example class's 16 submissions.
    from attngrade.grading import pipeline as batch_module
    from attngrade.grading import execute

    folder = ROOT / "examples" / "cs224n-w21-a5"
    small = grade(Class([folder]), Options(solutions=ROOT / "solutions", workers=2))
    started, pools, loaded = [], [], []
    monkeypatch.setattr(batch_module, "LARGE_CLASS", 2)
    monkeypatch.setattr(batch_module, "start_fork_server", lambda: started.append(True) or start_fork_server())
    monkeypatch.setattr(execute, "WorkerPool", lambda *a, **k: pools.append(k) or WorkerPool(*a, **k))
    real_split = batch_module.plan_split
    monkeypatch.setattr(batch_module, "plan_split", lambda items, *a, **k: loaded.append(type(items)) or
                        real_split(items, *a, **k))
    large = grade(Class([folder]), Options(solutions=ROOT / "solutions", workers=2))
    assert started == [True] and pools == [{"start_method": "forkserver"}] and loaded == [Loading]
    assert [r.to_json() for r in large.results] == [r.to_json() for r in small.results]

    # One worker checks here: no server is started for it.
    started.clear(), pools.clear()
    alone = grade(Class([folder]), Options(solutions=ROOT / "solutions", workers=1))
    assert started == [] and pools == [{"start_method": None}]
    assert [r.to_json() for r in alone.results] == [r.to_json() for r in small.results]


def test_a_worker_is_given_the_sandbox_this_process_started(monkeypatch):
    # A worker from the fork server has the server's environment, from before the plan started
    # the code sandbox; without the socket it would start a zygote (and import torch) of its own.
    import resource

    from attngrade.grading.execute import _sandbox_socket, _start_worker
    from attngrade.sandbox import ENV_SOCKET

    monkeypatch.setenv(ENV_SOCKET, "/tmp/attngrade-zygote-x/sock")
    socket_path = _sandbox_socket()
    monkeypatch.delenv(ENV_SOCKET)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != hard:
        pytest.skip("the worker's memory cap would lower this process's hard limit")
    _start_worker(soft, None, socket_path)  # the cap this process has already: nothing changes
    assert os.environ[ENV_SOCKET] == "/tmp/attngrade-zygote-x/sock"


def test_a_fork_server_that_cannot_start_leaves_workers_forked_from_here(monkeypatch):
    from multiprocessing import forkserver

    def refuse():
        raise OSError("AF_UNIX path too long")

    monkeypatch.setattr(forkserver, "ensure_running", refuse)
    assert start_fork_server() is False


def _stubborn(answers, ctx):
    """Ignores SIGALRM, as C code that never returns to Python would: only killing its process stops it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    STOP.wait(60)  # in a forked worker nothing sets it
    return Outcome(0.0, ("the stubborn check finished",))


def test_a_stuck_check_costs_its_own_verdict_and_about_two_budgets(planned, monkeypatch):
    tasks = _quick(planned)
    expected = InProcess(2.0).run(tasks, planned.assignments)
    monkeypatch.setitem(REGISTRY, "bigO", Check("bigO", _stubborn))  # the workers are forked: inherited
    budget = 1.0
    start = time.monotonic()
    try:
        outcomes = WorkerPool(2, budget).run(tasks, planned.assignments)
    finally:
        STOP.set()
    elapsed = time.monotonic() - start
    stuck = [k for k in tasks if check_of(k, planned.assignments) == "bigO"]
    assert stuck
    for key in tasks:
        assert outcomes[key] == (timed_out(budget) if key in stuck else expected[key]), key
    # each stuck check: its batch is killed after one budget, then it runs alone for another
    assert elapsed < len(stuck) * 2 * (budget + GRACE) + 5, f"took {elapsed:.1f} s"


def _children() -> set[int]:
    """This process's living children (Linux /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            found.update(int(pid) for pid in (task / "children").read_text().split())
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
    return found


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="children listed by /proc")
def test_with_two_workers_the_class_is_checked_while_it_is_read(monkeypatch):
    from attngrade.grading import pipeline as batch_module
    from attngrade.grading import execute

    folder = ROOT / "examples" / "cs224n-w21-a5"
    alone = grade(Class([folder]), Options(solutions=ROOT / "solutions", workers=1))
    monkeypatch.setattr(execute, "BATCH", 2)  # the example class has few distinct answers
    reading, sent = [], []
    real_split, real_send = batch_module.plan_split, execute.Stream._send

    def split(*args, **kwargs):
        reading.append(True)
        try:
            return real_split(*args, **kwargs)
        finally:
            reading.clear()

    monkeypatch.setattr(batch_module, "plan_split", split)
    showing = []
    monkeypatch.setattr(execute.Stream, "_send", lambda self, batch, pool=None, **kw: sent.append(bool(reading)) or
                        showing.append(kw.get("show", False)) or real_send(self, batch, pool, **kw))
    two = grade(Class([folder]), Options(solutions=ROOT / "solutions", workers=2))
    assert sent.count(True) >= 2, "batches went to the workers while the class was still being read"
    assert showing == sent, "the batches sent while the class was read, and only those, carry more than checks"
    assert [r.to_json() for r in two.results] == [r.to_json() for r in alone.results]
    assert two.stats.tasks == alone.stats.tasks


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="children listed by /proc")
def test_a_run_stopped_after_its_checking_began_takes_its_workers_with_it(monkeypatch):
    from attngrade.errors import ConfigError
    from attngrade.grading import execute

    monkeypatch.setattr(execute, "BATCH", 2)
    sent = []
    real_send = execute.Stream._send
    monkeypatch.setattr(execute.Stream, "_send",
                        lambda self, batch, pool=None, **kw: sent.append(batch) or real_send(self, batch, pool, **kw))
    before = _children()
    with pytest.raises(ConfigError, match="--gold nonsense"):  # found once the class is read
        grade(Class([ROOT / "examples" / "cs224n-w21-a5"]), Options(solutions=ROOT / "solutions", workers=2, gold={"nonsense": ROOT / "solutions"}))
    assert sent, "checking had begun"
    execute.settle()
    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _children() - before, "the workers that checked while the class was read are gone"


def test_a_worker_forked_before_the_sandbox_started_is_told_its_socket(monkeypatch):
    # A stream's workers are forked before the plan meets code and starts the sandbox: each
    # batch carries the socket, or a worker would start a zygote (and import torch) of its own.
    from attngrade.grading.execute import _run_batch_in_worker
    from attngrade.sandbox import ENV_SOCKET

    monkeypatch.setenv(ENV_SOCKET, "")  # recorded, so the test's own value goes with it
    monkeypatch.delenv(ENV_SOCKET)
    assert _run_batch_in_worker([], 1.0, "/run/attngrade-zygote/sock").outcomes == []
    assert os.environ[ENV_SOCKET] == "/run/attngrade-zygote/sock"


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="address space read from /proc")
def test_a_worker_forked_from_a_large_process_may_still_use_its_memory_budget():
    # A worker forked from a process that maps more than the cap (torch imported in a notebook
    # or a test session) failed its first allocation: every answer it checked was "too large".
    import multiprocessing

    from attngrade.grading.execute import _mapped

    held = bytearray(300 * 1024 * 1024)  # this process now maps more than the cap below
    try:
        with multiprocessing.get_context("fork").Pool(1, initializer=_worker_cap_start) as pool:
            allocated, cap = pool.apply(_allocate_and_read_cap, (64 * 1024 * 1024,))
    finally:
        del held
    assert allocated, "the worker could allocate within its budget"
    assert cap >= 200 * 1024 * 1024 + 300 * 1024 * 1024 and _mapped() > 0


def _worker_cap_start() -> None:
    from attngrade.grading.execute import _start_worker

    _start_worker(200 * 1024 * 1024, None, None)


def _allocate_and_read_cap(size: int) -> tuple[bool, int]:
    import resource

    try:
        bytearray(size)
        allocated = True
    except MemoryError:
        allocated = False
    return allocated, resource.getrlimit(resource.RLIMIT_AS)[0]


def _where(answers, ctx):
    time.sleep(0.2)  # as a code check waits on its sandbox
    return Outcome(1.0, (f"pid {os.getpid()}",))


def test_code_checks_after_a_plan_have_every_worker(planned, monkeypatch):
    # Beside a plan a stream has one worker fewer (this process reads); the code checks it holds
    # to the end get a pool for the missing one, or a class of code checks would run on one.
    tasks = {k: t for k, t in _quick(planned).items() if check_of(k, planned.assignments) == "bigO"}
    assert len(tasks) >= 4
    monkeypatch.setitem(REGISTRY, "bigO", Check("bigO", _where, runs_code=True))
    stream = WorkerPool(2, 5.0).stream(planned.assignments)
    assert stream is not None and stream._fewer == 1
    outcomes = stream.outcomes(tasks)
    pids = {o.feedback[0] for o in outcomes.values()}
    assert len(pids) == 2 and all(p != f"pid {os.getpid()}" for p in pids)


def test_what_a_stream_sends_after_the_plan_has_every_worker(planned, monkeypatch):
    # Nothing is sent while a split plan reads: everything comes at the end, and must not be left
    # to the one worker a stream keeps beside the plan (the worst case ran on one core).
    from attngrade.grading import execute

    monkeypatch.setattr(execute, "BATCH", 2)
    tasks = {k: t for k, t in _quick(planned).items() if check_of(k, planned.assignments) == "bigO"}
    assert len(tasks) >= 4
    monkeypatch.setitem(REGISTRY, "bigO", Check("bigO", _where))
    stream = WorkerPool(2, 5.0).stream(planned.assignments)
    outcomes = stream.outcomes(tasks)
    assert len({o.feedback[0] for o in outcomes.values()}) == 2


def test_workers_streaming_for_reports_hand_back_the_mathml_of_what_they_checked(planned, monkeypatch):
    # Report processes forked after the run find it made, instead of each making it again for the
    # readings their students share (reports.mathml.shown).
    from attngrade.grading import execute
    from attngrade.mathlang import Value
    from attngrade.reports import mathml

    monkeypatch.setattr(mathml, "_CACHE", {})
    monkeypatch.setattr(mathml, "_STATEMENTS", {})
    made_here: list[str] = []
    real = mathml._convert
    monkeypatch.setattr(mathml, "_convert", lambda value: made_here.append(value.canonical) or real(value))
    tasks = _quick(planned)
    values = {v.canonical: v for t in tasks.values() for v in t.answers.values() if isinstance(v, Value)}
    assert len(values) > 10
    monkeypatch.setattr(execute, "BATCH", 1)  # each sent as the plan lists it
    stream = WorkerPool(2, 5.0).stream(planned.assignments, execute.Showing(mathml.shown_of, mathml.remember))
    for task in tasks.values():
        stream.add(task)
    outcomes = stream.outcomes(tasks)
    assert outcomes == InProcess(5.0).run(tasks, planned.assignments)
    assert made_here == [], "made by the workers, not here"
    assert set(values) <= set(mathml._CACHE)
    assert all(mathml.to_mathml(v) == real(v) for v in values.values()) and made_here == []
    statements = {p.statement for a in planned.assignments.values() for p in a.homework.parts}
    assert statements <= set(mathml._STATEMENTS)


def test_what_is_sent_after_the_plan_is_only_checked(planned, monkeypatch):
    # The run stage's end waits for those batches: nothing more is asked of them.
    from attngrade.grading import execute
    from attngrade.reports import mathml

    monkeypatch.setattr(mathml, "_CACHE", {})
    kept: list = []
    WorkerPool(2, 5.0).stream(planned.assignments, execute.Showing(mathml.shown_of, kept.append)).outcomes(
        _quick(planned))
    assert kept == []


def test_what_a_worker_cannot_make_beside_the_checks_costs_no_outcome(planned, monkeypatch):
    from attngrade.grading import execute

    tasks = _quick(planned)
    monkeypatch.setattr(execute, "BATCH", 1)
    stream = WorkerPool(2, 5.0).stream(planned.assignments, execute.Showing(_cannot_make, _kept.append))
    for task in tasks.values():
        stream.add(task)
    assert stream.outcomes(tasks) == InProcess(5.0).run(tasks, planned.assignments)
    assert _kept == []


_kept: list = []


def _cannot_make(tasks, assignments):
    raise RuntimeError("a report's own failure")


def test_work_of_its_own_is_done_once_every_batch_is_sent(planned, monkeypatch, tmp_path):
    # `grade run` prepares its report processes there (`ReportPool.prepare`): while the workers
    # check, not before the last batch is sent (they would idle) nor after the outcomes (it would wait).
    from attngrade.grading import execute

    tasks = {k: t for k, t in _quick(planned).items() if check_of(k, planned.assignments) == "bigO"}
    last = list(tasks)[-1]
    monkeypatch.setenv("ATTNGRADE_TEST_STARTED", str(tmp_path / "started"))
    monkeypatch.setitem(REGISTRY, "bigO", Check("bigO", _tells_it_started))
    monkeypatch.setattr(execute, "BATCH", 2)
    stream = WorkerPool(2, 5.0).stream(planned.assignments)
    for task in list(tasks.values())[:-1]:
        stream.add(task)
    seen: list[bool] = []

    def meanwhile() -> None:
        # The task the plan never announced was sent with the rest: its check starts while this waits.
        deadline = time.monotonic() + 20
        while not (tmp_path / "started" / _name(last)).exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append((tmp_path / "started" / _name(last)).exists())

    outcomes = stream.outcomes(tasks, meanwhile)
    assert seen == [True]
    assert set(outcomes) == set(tasks) and all(o.feedback == ("checked",) for o in outcomes.values())


def _name(key) -> str:
    return _marker(key.part, key.inputs)


def _marker(part: str, inputs: tuple) -> str:
    import hashlib

    return hashlib.sha256(repr((part, inputs)).encode()).hexdigest()[:16]


def _tells_it_started(answers, ctx):
    """Marks, in a file named for its answer, that its check began (in a worker: seen from the parent)."""
    from attngrade.grading.tasks import canonical

    folder = Path(os.environ["ATTNGRADE_TEST_STARTED"])
    folder.mkdir(exist_ok=True)
    (folder / _marker(ctx.part.id, tuple(canonical(answers[name]) for name in ctx.spec.fields))).touch()
    time.sleep(0.05)
    return Outcome(1.0, ("checked",))


def test_work_beside_the_checks_gets_only_what_is_left_of_the_budget(planned):
    # A batch whose checks took their time is only checked: the work beside them must not bring it
    # to its hard limit (killed, its tasks would be checked again one by one).
    from attngrade.grading import execute

    tasks = list(_quick(planned).values())[:2]
    asked: list[int] = []
    assert execute._made(lambda ts, a: asked.append(len(ts)) or "made", tasks, execute.MAKE_AT_LEAST / 2) is None
    assert asked == []
    started = time.monotonic()
    assert execute._made(lambda ts, a: time.sleep(5) or "made", tasks, 0.3) is None
    assert time.monotonic() - started < 3, "stopped at what was left"
    assert execute._made(lambda ts, a: "made", tasks, 1.0) == "made"
