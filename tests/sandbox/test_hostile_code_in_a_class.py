"""The whole hostile corpus as one class through `grade run` (worker processes, the shared zygote), as
root, as an ordinary user, and as root in a container that refuses namespaces and mounts, on a kernel with
Landlock and on one without (shared/tools/container-sim): each hostile student gets a verdict on their code, the
correct students keep full code marks, no part is left pending because student code said so, no
output passes 5 MB or quotes a secret, no socket outside a job's folder is reached, and nothing of
any job (process, IPC object, folder) outlives the run, nor a grader killed while jobs run.

Each run happens in a PID namespace of the test's own (tests/data/sandbox/ns_init.py is its first
process), which lists whatever process of the run is still there once it ended. As root, the user
is `nobody`, with no capability; a Python installed where only root may enter (pyenv under /root)
is made reachable to it in that namespace's own mounts. Run as a user, the tests have that user
only."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from attngrade.checkers.torch_module import MISSING_HERE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_cases import (  # noqa: E402
    CASES,
    CLASS_MODES,
    CONTAINERS,
    INTERNAL,
    RAW,
    IPC_KEY,
    MODES,
    NOBODY,
    POINTS,
    ROOT,
    SECRET,
    WITHOUT_LANDLOCK,
    Outside,
    confinable,
    hand_over,
    hostile_submission,
    ipc_keys,
    other_part,
    owned_folder,
    part_of,
    run_confined,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkers"))
from code_fixtures import code_submission  # noqa: E402

MARK = "solutions-4c9e2a"  # in the grader's command line only: no output may show it
MAX_OUTPUT = 5 * 1024**2
CLASS_SECONDS = 300  # the whole hostile class, on a 2-core machine
MAX_TREE = int(2.5 * 1024**3)  # bytes the grader's folders (class, output, temporary) may hold at once
COMMON_LAYERS = ("separate uid" , "seccomp", "memory of all its processes together", "CPU")
EXPECTED_LAYERS = {
    "root": ("IPC namespace", "IPC limits", "PID namespace", "minimal root", "/proc of its own",
             "memory of all its processes together", "Landlock", "separate uid", "seccomp"),
    "user": ("IPC namespace", "IPC limits", "PID namespace", "minimal root", "/proc of its own",
             "memory of all its processes together", "Landlock", "seccomp"),
    "container": (*COMMON_LAYERS, "Landlock"),
    "container-no-landlock": COMMON_LAYERS,
}


class TreeSize:
    """The most bytes a folder tree held at any look, looked at again and again while a block runs."""

    def __init__(self, top: Path):
        self.top, self.peak, self._done = top, 0, threading.Event()

    def __enter__(self) -> "TreeSize":
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(0.2):
            self.peak = max(self.peak, _allocated(self.top))


def _allocated(top: Path) -> int:
    total, todo = 0, [str(top)]
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                total += entry.stat(follow_symlinks=False).st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
            except OSError:
                continue
    return total

pytestmark = pytest.mark.skipif(not confinable(), reason="needs unshare (and setpriv as root) and PID namespaces")


class Run:
    """A class graded by `grade run` in a PID namespace of its own, as `mode`, with the grader's own folders."""

    def __init__(self, tmp_path: Path, mode: str):
        self.mode, self.tmp = mode, tmp_path
        self.home = owned_folder(mode)  # the grader's own: class, output, temporary folder
        (self.home / "tmp").mkdir()
        self.cls = self.home / "class"
        self.solutions = self.home / MARK
        if mode in CONTAINERS:
            # as the autograder does: the keys, reference, class and results are the grader's alone (a job
            # without Landlock reads whatever its uid may), and so is the grader's own secret; the jobs' uids
            # pass through the grader's folder to their own
            self.home.chmod(0o711)
            for private in (self.cls, self.home / "out"):
                private.mkdir(mode=0o700)
            shutil.copytree(ROOT / "solutions", self.solutions)
            for path in [self.solutions, *self.solutions.rglob("*")]:
                path.chmod(path.stat().st_mode & 0o700)
        else:
            self.solutions.symlink_to(ROOT / "solutions")
        # the grader user's own 0600 socket among what lies outside
        self.outside = Outside(owner=NOBODY if mode == "user" and os.geteuid() == 0 else None,
                               secret_mode=0o600 if mode in CONTAINERS else 0o644)

    def fill(self) -> dict[str, str]:
        return self.outside.fill()

    def grade(self, kill_when: str | None = None) -> dict:
        hand_over(self.home, self.mode)
        return run_confined(self.tmp, self.mode, [sys.executable, "-m", "attngrade", "run", str(self.cls), "-o",
                                                  str(self.home / "out"), "--solutions", str(self.solutions),
                                                  "--workers", "2"],
                            {"TMPDIR": str(self.home / "tmp"), "HOME": str(self.home)},
                            grace=10 if kill_when else 3, kill_when=kill_when, kill_after=1.5)

    def results(self) -> dict[str, dict[str, dict]]:
        return {r["student"]: {p["id"]: p for p in r["parts"]} for r in
                json.loads((self.home / "out" / "results.json").read_text())}

    def close(self) -> None:
        self.outside.close()
        shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture(params=CLASS_MODES)
def run(request, tmp_path):
    pytest.importorskip("torch")
    graded = Run(tmp_path, request.param)
    yield graded
    graded.close()


def test_a_class_of_hostile_students_on_every_host(run):
    for name in ("right", "also-right"):
        code_submission(run.cls / name, student=name)
    for case in CASES:
        hostile_submission(run.cls / case, case, run.fill(), student=case)
    ipc_before = ipc_keys()
    escaped = Path("/tmp/attngrade-escaped.txt")  # where write_outside.py tries to write
    escaped.unlink(missing_ok=True)
    started = time.monotonic()
    with TreeSize(run.home) as tree:
        report = run.grade()
    assert time.monotonic() - started < CLASS_SECONDS
    assert tree.peak < MAX_TREE, f"the grading tree held {tree.peak} bytes"
    stderr = (run.tmp / "stderr").read_text()
    assert report["returncode"] in (0, 1), stderr[-3000:]  # 1: some students' parts were not all correct
    assert report["left"] == [], report  # nothing of any job outlived the run
    assert not list((run.home / "tmp").iterdir()), "a folder of the sandbox outlived the run"
    assert IPC_KEY not in ipc_keys() - ipc_before
    assert not run.outside.reached(), "a socket outside the jobs' folders took a connection"
    assert run.outside.untouched() and not escaped.exists()
    for path in (run.home / "out").rglob("*"):
        if path.is_file():
            assert path.stat().st_size < MAX_OUTPUT, path
            text = path.read_bytes()
            assert SECRET.encode() not in text, path
            # Without a PID namespace or Landlock (a container on a kernel without it) /proc shows every
            # process's command line, the grader's too: it names folders, never what is in them.
            assert MARK.encode() not in text or run.mode == "container-no-landlock", path
            if path.suffix in (".html", ".json"):  # (a CSV file's lines end in CR LF)
                shown = text.decode("utf-8", "replace")
                assert not any(c in shown for c in RAW), path
    results = run.results()
    for name in ("right", "also-right"):
        assert results[name]["2e"]["score"] == POINTS["2e"] and results[name]["2g.i"]["score"] == POINTS["2g.i"]
    line = next(line for line in results["right"]["2e"]["feedback"] if line.startswith("your code ran in a sandbox"))
    active, _, missing = line.partition(". " + MISSING_HERE)
    for layer in EXPECTED_LAYERS[run.mode]:
        assert layer in active, layer
    # every layer this kernel has, as root and as a user: only a uid of its own needs root, and a cgroup
    # of the job's own needs the grader's cgroup to hand out its controllers
    names = {item.split(" (")[0] for item in missing.split("; ") if item}
    if run.mode in MODES:
        assert names - {"cgroup v2"} == ({"separate uid"} if run.mode == "user" else set()), missing
    for case, expect in CASES.items():
        if run.mode == "container-no-landlock":
            expect = WITHOUT_LANDLOCK.get(case, expect)
        verdict = results[case][part_of(case)]
        feedback = " ".join(verdict["feedback"])
        assert verdict["pending_points"] == 0, (case, feedback)
        assert not any(line.startswith(INTERNAL) for line in verdict["feedback"]), (case, feedback)
        assert any(word in feedback for word in expect.words), (case, feedback)
        if expect.score is None:
            assert 0 <= verdict["score"] < POINTS[part_of(case)], (case, feedback)
        else:
            assert verdict["score"] == expect.score, (case, feedback)
        assert results[case][other_part(case)]["score"] == POINTS[other_part(case)], case


def test_nothing_of_a_job_outlives_a_grader_killed_while_it_runs(run):
    code_submission(run.cls / "right", student="right")
    for case in ("fork_bomb", "infinite_loop", "sysv_ipc", "memory_across_processes"):
        hostile_submission(run.cls / case, case, run.fill(), student=case)
    ipc_before = ipc_keys()
    report = run.grade(kill_when=str(run.home / "tmp" / "attngrade-zygote-*" / "attngrade-job-*"))
    assert report["killed"], "the grader ended before any job ran"
    assert report["left"] == [], report
    assert not list((run.home / "tmp").iterdir()), "a folder of the sandbox outlived the grader"
    assert IPC_KEY not in ipc_keys() - ipc_before
