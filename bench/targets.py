"""The benchmark's targets, as data: each is a name, what is measured, a limit and its unit.

`bench/run.py` judges every figure it measures against these, prints the verdicts and, with
`--write-table`, writes them into the table of bench/README.md. The limits are for a
machine with 2 cores.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    name: str  # the key in bench-results.json and in the README's table
    what: str  # what is measured, as the table's first column says it
    limit: float
    unit: str
    at_least: bool = False  # the figure must reach the limit (a speed-up), not stay under it (a time)

    def met(self, value: float) -> bool:
        return value >= self.limit if self.at_least else value <= self.limit

    def describe(self) -> str:
        """The limit as written in the README: '≤ 5 s', '≥ 1.6×'."""
        number = f"{self.limit:,g}"
        unit = self.unit if self.unit in ("×", "%") else f" {self.unit}"
        return f"{'≥' if self.at_least else '≤'} {number}{unit}"


TARGETS: tuple[Target, ...] = (
    Target("realistic_1000", "realistic class of 1,000 submissions, reports included: wall", 5.0, "s"),
    Target("worst_1000", "worst-case class of 1,000 submissions (every checked answer distinct): wall", 20.0, "s"),
    Target("workers_speedup", "`--workers 2` over `--workers 1`, realistic class of 1,000", 1.6, "×", at_least=True),
    Target("executors_identical", "results.json of `--workers 2` and `--executor dask` that differ from "
           "`--workers 1`'s", 0, "files"),
    Target("qkv_ms", "1e.ii (`attention_qkv`, the slowest check kind): CPU per distinct answer, median", 5.0, "ms"),
    Target("kind_ms", "every check kind: CPU per distinct answer, median", 20.0, "ms"),
    Target("cold_ratio", "`grade check` cold, over the `import sympy, numpy` floor", 1.3, "×"),
    Target("cold_wall", "`grade check` cold: wall", 1.0, "s"),
    Target("wall_100k", "100,000 submissions, every dev prediction file distinct: wall", 600.0, "s"),
    Target("memory_100k", "100,000 submissions, every dev prediction file distinct: peak memory of the "
           "process tree", 1024.0, "MB"),
    Target("code_cpu", "code class (2e and 2g.i run in the sandbox): CPU of one more submission", 1.0, "s"),
    Target("otter_ratio", "`otter run` over `grade run`, per submission (20 students, start-up included)", 50.0,
           "×", at_least=True),
    Target("review_grouping", "`grade review`, 1,000 students: grouping one part's written answers, CPU", 3.0,
           "s"),
    Target("review_page", "`grade review`, 1,000 students: the part page, wall", 300.0, "ms"),
    Target("review_grade", "`grade review`: grading a group of 200 members, wall", 100.0, "ms"),
    Target("verdicts", "part verdicts that differ from `--baseline`'s, changes made on purpose aside", 0, "parts"),
)

BY_NAME = {t.name: t for t in TARGETS}


def target(name: str) -> Target:
    return BY_NAME[name]
