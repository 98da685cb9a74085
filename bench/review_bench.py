#!/usr/bin/env python3
"""Measures the staff grading app (`grade review`) at class scale; not part of CI.

    .venv/bin/python bench/review_bench.py            # 1,000 students
    .venv/bin/python bench/review_bench.py --n 2000 --json FILE

Three figures, each against its target in bench/targets.py (and how long a page's poll for the
other graders' changes takes):
- grouping the written answers of one part (embedding, groups by text and by meaning, order):
  the CPU of `grade groups OUT --part HW:PART --json` on the class less that on a class of one
  student (start-up, imports and loading the model fall out), the median of --repeat pairs;
- the part page of the class, served by `grade review` over HTTP (its shell, then the part's data
  from the API, with a grader's secret): wall ms (median of 5, warm);
- grading a group of 200 members (200 distinct answers placed in one group): wall ms (median of 5).

The class is a results.json written here (one written part, answers drawn from a few dozen
phrasings with small changes), so nothing but the app is measured. attngrade is reached only
through its command line (`python -m attngrade`, this script's interpreter) and the app's HTTP
interface.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from targets import target

HW, PART = "cs224n-w21-a5", "1a"
OPENINGS = ["k_j^T q must be much larger than", "The score of key j has to dominate", "q must align with k_j so it beats",
            "alpha_j is near 1 only if k_j^T q exceeds", "We need the dot product with k_j to be far above",
            "When q is a large multiple of k_j it outweighs", "The softmax concentrates if k_j^T q is bigger than",
            "Copying happens when the j-th score exceeds"]
ENDINGS = ["every other k_i^T q.", "all the other scores.", "the rest of the keys' scores.", "k_i^T q for i != j.",
           "the scores of the other keys by a wide margin.", "any other key's dot product with q."]


def write_results(out: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        text = f"{rng.choice(OPENINGS)} {rng.choice(ENDINGS)}"
        if rng.random() < 0.5:
            text += f" (case {rng.randint(1, 40)})"
        part = {"id": PART, "score": 0.0, "max_score": 2.0, "status": "manual", "pending_points": 2.0,
                "feedback": ["graded by course staff"], "readings": {"answer": text}}
        rows.append({"student": f"s{i:04d}", "homework": HW, "score": 0.0, "max_score": 2.0, "pending_points": 2.0,
                     "parts": [part]})
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n", encoding="utf-8")


def _groups_cpu(source: Path, scratch: Path) -> tuple[float, int]:
    """CPU of `grade groups` on a fresh copy of `source` (the app keeps what it grouped in OUT), and the groups."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(source, scratch)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "attngrade", "groups", str(scratch), "--part", f"{HW}:{PART}",
                           "--json"], capture_output=True, text=True, cwd=scratch.parent, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"grade groups failed (exit {done.returncode}):\n{done.stderr[-1500:]}")
    groups = sum(len(v) for v in json.loads(done.stdout).values())
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), groups


def grouping_cpu(tmp: Path, n: int, repeat: int) -> dict[str, Any]:
    """The CPU of grouping `n` answers: `grade groups` on n students less on one, the median of `repeat` pairs."""
    write_results(tmp / "class", n)
    write_results(tmp / "one", 1)
    pairs = []
    groups = 0
    for _ in range(repeat):
        one, _ = _groups_cpu(tmp / "one", tmp / "scratch")
        full, groups = _groups_cpu(tmp / "class", tmp / "scratch")
        pairs.append((full, one))
    return {"cpu_s": statistics.median(full - one for full, one in pairs), "groups": groups,
            "fixed_cpu_s": statistics.median(one for _, one in pairs)}


def request(base: str, token: str, path: str, body: dict | None = None) -> tuple[float, dict | str]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"X-Attngrade-Token": token, "Content-Type": "application/json"}
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(base + path, data=data, headers=headers), timeout=120) as r:
        raw = r.read()
    took = (time.perf_counter() - started) * 1000
    return took, json.loads(raw) if body is not None or path.startswith("/api/") else raw.decode()


def serve(out: Path) -> tuple[subprocess.Popen, str, str]:
    """`grade review OUT` for one grader: the process, the address, the grader's secret."""
    process = subprocess.Popen([sys.executable, "-m", "attngrade", "review", str(out), "--port", "0", "--graders",
                                "bench"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=out.parent)
    printed = ""
    while "bench: http://" not in printed:
        line = process.stdout.readline() if process.stdout else ""
        if not line:
            raise RuntimeError("grade review printed no URL")
        printed += line
    url = next(w for w in printed.split() if w.startswith("http://"))
    base, token = url.split("/#k=")
    return process, base, token


def _merged_group(base: str, token: str) -> tuple[dict, str, int]:
    """Merge groups until one holds 200 members or more: that group, a rubric item, its size."""
    data: Any = request(base, token, f"/api/parts/{HW}/{PART}")[1]
    chosen, size = [], 0
    for g in sorted(data["groups"], key=lambda g: g["size"]):  # the smallest first: a group of about 200
        if size >= 200 and len(chosen) >= 2:
            break
        chosen.append(g["id"])
        size += g["size"]
    request(base, token, f"/api/parts/{HW}/{PART}/merge", {"groups": chosen, "version": data["version"]})
    data = request(base, token, f"/api/parts/{HW}/{PART}")[1]
    group = max(data["groups"], key=lambda g: g["size"])
    return group, data["rubric"][0]["id"], group["size"]


def page_ms(base: str, token: str) -> float:
    """The part page as a browser loads it: its shell, then the part's data from the API."""
    return request(base, token, f"/part/{HW}/{PART}")[0] + request(base, token, f"/api/parts/{HW}/{PART}")[0]


def app_times(out: Path) -> dict[str, Any]:
    """The part page (its first load, which groups the part, then the median of 5 warm loads), a poll of a
    page (median of 5) and grading a group of about 200 (median of 5), over HTTP."""
    process, base, token = serve(out)
    try:
        first = page_ms(base, token)
        page = [page_ms(base, token) for _ in range(5)]
        since = request(base, token, f"/api/parts/{HW}/{PART}")[1]
        polls = [request(base, token, f"/api/parts/{HW}/{PART}/poll", {"since": since["since"], "focus": "",
                                                                      "version": since["version"]})[0]
                 for _ in range(5)]
        group, item, size = _merged_group(base, token)
        times = []
        for op in ("add", "remove", "add", "remove", "add"):
            body = {"units": [u["id"] for u in group["units"]], "op": op, "item": item,
                    "expected": {u["id"]: u["version"] for u in group["units"]}}
            took, done = request(base, token, f"/api/parts/{HW}/{PART}/grade", body)
            group = done["group"]  # type: ignore[index]
            times.append(took)
    finally:
        process.terminate()
        process.wait(timeout=10)
    return {"page_ms": statistics.median(page), "first_page_ms": first, "poll_ms": statistics.median(polls),
            "grade_ms": statistics.median(times), "group_size": size, "group_answers": len(group["units"])}


def _verdict(name: str, value: float) -> str:
    goal = target(name)
    return f"{'MET' if goal.met(value) else 'MISSED'} ({goal.describe()})"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="students (default: 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="pairs of `grade groups` runs (default: 3)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="attngrade-review-bench-") as tmp:
        grouping = grouping_cpu(Path(tmp), args.n, args.repeat)
        print(f"grouping {args.n} written answers: {grouping['cpu_s']:.2f} s CPU ({grouping['groups']} groups; fixed "
              f"costs {grouping['fixed_cpu_s']:.2f} s CPU left out): {_verdict('review_grouping', grouping['cpu_s'])}")
        app = app_times(Path(tmp) / "class")
    print(f"part page of {args.n} students: {app['page_ms']:.0f} ms (median of 5): "
          f"{_verdict('review_page', app['page_ms'])}; the first load, which groups the part: "
          f"{app['first_page_ms'] / 1000:.1f} s; a page's poll for others' changes: {app['poll_ms']:.0f} ms")
    print(f"grading a group of {app['group_size']} members ({app['group_answers']} distinct answers): "
          f"{app['grade_ms']:.0f} ms (median of 5): {_verdict('review_grade', app['grade_ms'])}")
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "grouping": grouping, **app}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
