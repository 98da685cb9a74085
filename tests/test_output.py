"""grades.csv comes row by row, each row a whole CSV record, hostile ids included."""

from __future__ import annotations

import csv
import io

from attngrade.output import grades_csv
from attngrade.problems import BUNDLED
from attngrade.records import Result, Verdict

A5 = BUNDLED.load_homework("cs224n-w21-a5")


def _graded(student: str, score: float) -> Result:
    return Result(student, A5.id, score, A5.max_score, (Verdict("1b", score, 4.0, "correct"),))


def test_grades_csv_yields_one_complete_record_per_student():
    results = [_graded("ada", 4.0), _graded('line\nbreak, "quoted"', 1.5),
               Result("=HYPERLINK(1)", None, 0.0, 0.0, error="not YAML")]
    pieces = list(grades_csv(results, {A5.id: A5}))
    assert len(pieces) == 1 + len(results)  # the header, then one piece per student
    for piece in pieces:  # each piece parses alone: the file can be written as they come
        assert len(list(csv.reader(io.StringIO(piece)))) == 1
    rows = list(csv.DictReader(io.StringIO("".join(pieces))))
    assert [r["student"] for r in rows] == ["ada", 'line\nbreak, "quoted"', "'=HYPERLINK(1)"]  # formula defused
    assert rows[0]["1b"] == "4" and rows[1]["1b"] == "1.5" and rows[2]["1b"] == ""
    assert rows[2]["error"] == "not YAML"
    assert list(rows[0])[:3] == ["student", "homework", A5.parts[0].id]
