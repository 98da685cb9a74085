"""Fixtures for the staff grading app: a graded class, `grade review` running on it as a real
server (the URL read from what it prints), and the system Chromium through Playwright."""

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


def write_class(folder: Path, changed: dict[str, str] | None = None) -> Path:
    """A class of 50 students: 1a (three share one answer, one is hostile) and 1c.ii (all different)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = fifty()
    for i in range(50):
        student = f"s{i:02d}"
        first = SAME if i < 3 else HOSTILE if i == 3 else f"q lines up with key {i} and its score beats key {i + 1}"
        first = (changed or {}).get(student, first)
        body = {"homework": HW, "student": student, "answers": {"1a": first, "1c.ii": texts[i]}}
        (folder / f"{student}.yaml").write_text(json.dumps(body), encoding="utf-8")
    return folder


def run_grade(klass: Path, out: Path) -> None:
    from attngrade.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["run", str(klass), "-o", str(out), "--solutions", str(ROOT / "solutions"), "--workers", "0"])
    assert code == 0


class Server:
    """`grade review OUT --port 0` in a process of its own, and what it printed."""

    def __init__(self, out: Path):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([sys.executable, "-m", "attngrade", "review", str(out), "--port", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.printed = ""
        deadline = time.monotonic() + 60
        while "?token=" not in self.printed and time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.printed += line
        if "?token=" not in self.printed:
            self.stop()
            raise RuntimeError(f"grade review printed no URL: {self.printed} {self.process.stderr.read()}")
        self.url = next(w for w in self.printed.split() if w.startswith("http://"))
        self.base, self.token = self.url.split("/?token=")

    def api(self, path: str, body: Any = None, token: bool = True, method: str | None = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["X-Attngrade-Token"] = self.token
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                kind = response.headers.get("content-type", "")
                return response.status, json.loads(raw) if "json" in kind else raw.decode()
        except urllib.error.HTTPError as err:
            raw = err.read()
            return err.code, json.loads(raw) if "json" in (err.headers.get("content-type") or "") else raw.decode()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def graded_out(tmp_path) -> tuple[Path, Path]:
    klass = write_class(tmp_path / "class")
    out = tmp_path / "out"
    run_grade(klass, out)
    return klass, out


@pytest.fixture
def server(graded_out) -> Iterator[Server]:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    running = Server(graded_out[1])
    try:
        yield running
    finally:
        running.stop()


