"""Fixtures for the staff grading app: a graded class, `grade review` running on it as a real
server (each grader's URL read from what it prints), and the system Chromium through Playwright."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))


ROOT = Path(__file__).resolve().parents[2]
HW = "cs224n-w21-a5"
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
SAME = "k_j^T q must be much larger than k_i^T q for every other key i"  # three students wrote this
GRADERS = ("alice", "bob", "Łukasz")

# 1c.ii: fifty answers that differ in what they say, one per student (the keyboard test grades them all)
TOPICS = ["the norm of k_a", "the sampled length of key a", "how long k_a comes out", "the size of k_a",
          "the magnitude of the a key"]
SIDES = ["v_a", "v_b", "the average", "neither value", "some mix"]
WAYS = ["swings", "jumps", "drifts", "moves", "flips"]


def fifty() -> list[str]:
    out = []
    for i in range(50):
        topic, side, way = TOPICS[i % 5], SIDES[(i // 5) % 5], WAYS[(i // 25 + i) % 5]
        out.append(f"Answer {i}: c {way} toward {side} depending on {topic}, case {i * 7 % 13} of sample set {i}.")
    return out


def write_class(folder: Path, changed: dict[str, str] | None = None, extra: dict[str, dict] | None = None) -> Path:
    """A class of 50 students: 1a (three share one answer, one is hostile) and 1c.ii (all different);
    `extra`: more answers per student (student -> part -> answer)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = fifty()
    for i in range(50):
        student = f"s{i:02d}"
        first = SAME if i < 3 else HOSTILE if i == 3 else f"q lines up with key {i} and its score beats key {i + 1}"
        first = (changed or {}).get(student, first)
        answers = {"1a": first, "1c.ii": texts[i], **(extra or {}).get(student, {})}
        body = {"homework": HW, "student": student, "answers": answers}
        (folder / f"{student}.yaml").write_text(json.dumps(body), encoding="utf-8")
    return folder


def run_grade(klass: Path, out: Path) -> str:
    """`grade run` into `out`, quietly; what it printed."""
    from attngrade.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        code = main(["run", str(klass), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "0"])
    assert code == 0
    return printed.getvalue()


class Server:
    """`grade review OUT --port 0 --graders ...` in a process of its own, and each grader's URL."""

    def __init__(self, out: Path, *extra: str, graders: tuple[str, ...] = GRADERS):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        command = [sys.executable, "-m", "attngrade", "review", str(out), "--port", "0",
                   "--solutions", str(ROOT / "solutions"), "--graders", ",".join(graders), *extra]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.printed = ""
        deadline = time.monotonic() + 90
        while "Ctrl-C stops it" not in self.printed and time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.printed += line
        if "Ctrl-C stops it" not in self.printed:
            self.stop()
            raise RuntimeError(f"grade review printed no URL: {self.printed} {self.process.stderr.read()}")
        self.urls = {}
        for line in self.printed.splitlines():
            name, sep, url = line.strip().rpartition(": ")
            if sep and url.startswith("http://"):
                self.urls[name] = url
        self.url = self.urls[graders[0]]
        self.base = self.url.split("/#k=")[0]
        self.secrets = {name: url.split("#k=")[1] for name, url in self.urls.items()}
        self.token = self.secrets[graders[0]]

    def api(self, path: str, body: Any = None, token: bool = True, method: str | None = None,
            grader: str | None = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["X-Attngrade-Token"] = self.secrets[grader] if grader else self.token
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                raw = response.read()
                kind = response.headers.get("content-type", "")
                return response.status, json.loads(raw) if "json" in kind else raw.decode()
        except urllib.error.HTTPError as err:
            raw = err.read()
            return err.code, json.loads(raw) if "json" in (err.headers.get("content-type") or "") else raw.decode()

    def part(self, part_id: str, grader: str | None = None) -> dict:
        status, data = self.api(f"/api/parts/{HW}/{part_id}", grader=grader)
        assert status == 200, data
        return data

    def grade(self, part_id: str, group: dict, op: str, grader: str | None = None, **extra: Any) -> tuple[int, Any]:
        """A change to a whole group, from a view that saw `group` (its answers' versions)."""
        body = {"units": [u["id"] for u in group["units"]], "op": op,
                "expected": {u["id"]: u["version"] for u in group["units"]}, **extra}
        return self.api(f"/api/parts/{HW}/{part_id}/grade", body, grader=grader)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


@pytest.fixture
def graded_out(tmp_path) -> tuple[Path, Path]:
    klass = write_class(tmp_path / "class")
    out = tmp_path / "out"
    run_grade(klass, out)
    return klass, out


@contextlib.contextmanager
def serving(out: Path, *extra: str, graders: tuple[str, ...] = GRADERS) -> Iterator[Server]:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    running = Server(out, *extra, graders=graders)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def server(graded_out) -> Iterator[Server]:
    with serving(graded_out[1]) as running:
        yield running
