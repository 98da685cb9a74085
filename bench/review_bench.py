#!/usr/bin/env python3
"""Measures the staff grading app (`grade review`) at class scale; not part of CI.

    .venv/bin/python bench/review_bench.py            # 1,000 students
    .venv/bin/python bench/review_bench.py --n 2000

Three figures, each against its target:
- grouping the written answers of one part (embedding, groups by text and by meaning, order): CPU s;
- the part page of the class, served by `grade review` over HTTP: wall ms (median of 5, warm);
- grading a group of 200 members (200 distinct answers placed in one group): wall ms (median of 5).

The class is a results.json written here (one written part, answers drawn from a few dozen
phrasings with small changes), so nothing but the app is measured.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attngrade.review import embed  # noqa: E402
from attngrade.review.classroom import Classroom  # noqa: E402

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


def grouping_cpu(out: Path) -> tuple[float, float, int]:
    started = time.process_time()
    embed.default()
    loaded = time.process_time()
    room = Classroom(out)
    room.start()
    part = room.part(HW, PART)
    return loaded - started, time.process_time() - loaded, len(part.groups) if part else 0


def request(base: str, token: str, path: str, body: dict | None = None) -> tuple[float, dict | str]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"X-Attngrade-Token": token, "Content-Type": "application/json"}
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(base + path, data=data, headers=headers), timeout=60) as r:
        raw = r.read()
    took = (time.perf_counter() - started) * 1000
    return took, json.loads(raw) if body is not None or path.startswith("/api/") else raw.decode()


def serve(out: Path) -> tuple[subprocess.Popen, str, str]:
    process = subprocess.Popen([sys.executable, "-m", "attngrade", "review", str(out), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    printed = ""
    while "?token=" not in printed:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("grade review printed no URL")
        printed += line
    url = next(w for w in printed.split() if w.startswith("http://"))
    base, token = url.split("/?token=")
    return process, base, token


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="students (default: 1000)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        write_results(out, args.n)
        load, cpu, groups = grouping_cpu(out)
        print(f"grouping {args.n} written answers: {cpu:.2f} s CPU ({groups} groups; model load {load:.2f} s "
              f"CPU, once per process) -- target 3 s")
        process, base, token = serve(out)
        try:
            page = [request(base, token, f"/part/{HW}/{PART}")[0] for _ in range(6)][1:]
            print(f"part page of {args.n} students: {statistics.median(page):.0f} ms (median of 5) -- target 300 ms")
            data = request(base, token, f"/api/parts/{HW}/{PART}")[1]
            units = [u["id"] for g in data["groups"] for u in g["units"]]  # type: ignore[index]
            chosen, size = [], 0
            for g in data["groups"]:  # type: ignore[index]
                if size >= 200:
                    break
                chosen.append(g["id"])
                size += g["size"]
            request(base, token, f"/api/parts/{HW}/{PART}/merge", {"groups": chosen})
            data = request(base, token, f"/api/parts/{HW}/{PART}")[1]
            group = max(data["groups"], key=lambda g: g["size"])  # type: ignore[index]
            units = [u["id"] for u in group["units"]]
            item = data["rubric"][0]["id"]  # type: ignore[index]
            times = []
            for op in ("add", "remove", "add", "remove", "add"):
                times.append(request(base, token, f"/api/parts/{HW}/{PART}/grade",
                                     {"units": units, "op": op, "item": item})[0])
            print(f"grading a group of {group['size']} members ({len(units)} distinct answers): "
                  f"{statistics.median(times):.0f} ms (median of 5) -- target 100 ms")
        finally:
            process.terminate()
            process.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
