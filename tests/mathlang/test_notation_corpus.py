"""Measure it: how often attngrade agrees with a TA on answers as students wrote them.

tests/data/notation/corpus.yaml holds answers collected from public write-ups of the homeworks,
each with the status a careful TA gives it. Every entry is graded; the agreement rate and every
disagreement are printed (run with -s or -rP) and put in the assertion message. Entries on which
attngrade disagrees stay in the corpus: they are the list of what the reader still gets wrong.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import yaml

from attngrade.grading import assignment, grade_answer
from attngrade.problems.keys import load_keys
from attngrade.problems import load_homework

ROOT = Path(__file__).resolve().parents[2]
CORPUS = yaml.safe_load((ROOT / "tests/data/notation/corpus.yaml").read_text(encoding="utf-8"))
STATUSES = {"correct", "partial", "incorrect", "pending"}
# The agreement is printed (run with -s); the floor sits just below it, so a change that reads less of
# what students write fails here, and one that reads more raises the floor with it.
FLOOR = 0.85


@cache
def _assignment(homework: str):
    hw = load_homework(homework)
    return assignment(hw, load_keys(ROOT / "solutions", hw))


def _shown(answer) -> str:
    if isinstance(answer, dict):
        return "; ".join(f"{name}: {text}" for name, text in answer.items())
    return str(answer)


def test_every_entry_is_well_formed():
    assert len(CORPUS) >= 30
    for entry in CORPUS:
        assert {"homework", "part", "answer", "ta", "source"} <= entry.keys(), entry
        assert entry["ta"] in STATUSES, entry
        _assignment(entry["homework"])  # the homework exists


def test_agreement_with_a_ta_on_written_answers():
    rows = []
    for entry in CORPUS:
        verdict = grade_answer(_assignment(entry["homework"]), entry["part"], entry["answer"])
        rows.append((entry, verdict))
    disagreements = [(entry, verdict) for entry, verdict in rows if verdict.status != entry["ta"]]
    rate = 1 - len(disagreements) / len(rows)
    lines = [f"notation corpus: attngrade agrees with the TA on {len(rows) - len(disagreements)}/{len(rows)}"
             f" answers ({rate:.0%})", "disagreements (part | TA | attngrade | answer | why):"]
    for entry, verdict in disagreements:
        # the first line that is not a reading note says why
        reasons = [line.splitlines()[0] for line in verdict.feedback
                   if not line.startswith(("read ", "could not read this answer"))]
        reason = (reasons or list(verdict.feedback) or [""])[0]
        lines.append(f"  {entry['homework']} {entry['part']} | {entry['ta']} | {verdict.status} | "
                     f"{_shown(entry['answer'])} | {reason}")
    report = "\n".join(lines)
    print(report)
    assert rate >= FLOOR, report


@pytest.mark.parametrize("homework", sorted({entry["homework"] for entry in CORPUS}))
def test_each_homework_in_the_corpus_has_its_keys(homework):
    assert _assignment(homework) is not None
