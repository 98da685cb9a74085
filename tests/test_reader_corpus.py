"""Measure the reader on a corpus of real answers made before its LaTeX/Unicode front end.

tests/data/reader-corpus/ holds right and wrong-but-plausible answers to the bank's
machine-checked parts, each a small submission file (YAML, notebook, Markdown, LaTeX) whose
notation is taken from a public write-up or a seed (cases.yaml says which; SOURCES.md cites
them). They are graded as `grade run` grades a class folder: the files are laid out in
tmp_path (with the real prediction files a case hands in beside its answers) and graded by
`attngrade.grading.grade`. One table is printed (run with -s or -rP), per notation class and
overall, beside the figures recorded before the front end was built (before.json, written by
running this file with ATTNGRADE_RECORD_BEFORE=1).

What is measured for one case is the machine-checked points of its part that the answer can
earn (checks whose required fields the case gives; written explanations are a person's):
  right answers: full credit / sent to staff (points pending) / a wrong machine verdict;
  wrong answers: accepted with full credit (a false accept) / refused / sent to staff.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
import yaml

from attngrade.grading import Class, Options, grade
from attngrade.grading.assemble import UNREAD
from attngrade.records import Status

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests/data/reader-corpus"
CASES = yaml.safe_load((CORPUS / "cases.yaml").read_text(encoding="utf-8"))
BEFORE = CORPUS / "before.json"
RECORD = os.environ.get("ATTNGRADE_RECORD_BEFORE") == "1"
HOMEWORKS = {"cs224n-w21-a5", "eecs182-fa22-hw8", "eecs182-sp23-transformers", "mimuw-2022-p4",
             "nyu-dl-transformer"}
FORMATS = {"yaml", "ipynb", "md", "tex"}
CLASSES = ("macros", "environments", "spacing", "sums", "unicode", "names", "matrices", "prose", "words",
           "numbers", "plain")
EPS = 1e-6
# The target the front end is built for: most right answers read and credited, none mis-graded.
TARGET_FULL = 0.85


@dataclass
class Outcome:
    """What the run did with one case's machine-checked points."""

    kind: str  # full | staff | refused
    status: str
    score: float
    expected: float
    reason: str


def _file(case: dict) -> Path:
    return CORPUS / "submissions" / f"{case['id']}.{case['format']}"


def _lay_out(folder: Path) -> None:
    """The class folder as a course would download it: one file per student, or a folder
    holding the answers and the prediction files handed in beside them."""
    folder.mkdir()
    for case in CASES:
        if not case.get("with"):
            shutil.copy(_file(case), folder / _file(case).name)
            continue
        own = folder / case["id"]
        own.mkdir()
        shutil.copy(_file(case), own / _file(case).name)
        for handed_in in case["with"]:
            shutil.copy(ROOT / handed_in, own / Path(handed_in).name)


def _expected(part, case: dict) -> float:
    """Machine points of the part's checks whose required fields the case answers."""
    given = set(case["answer"]) | {f.name for f in part.fields if f.filename and any(
        Path(p).name == f.filename for p in case.get("with", ()))}
    total = 0.0
    for spec in part.checks:
        if spec.check != "manual" and set(spec.fields) - set(spec.optional) <= given:
            total += spec.points
    return total


def _reason(verdict) -> str:
    """The first thing the feedback says that is not a reading note."""
    lines = [line.splitlines()[0] for line in verdict.feedback if line and line != UNREAD
             and not line.startswith("read ")]
    return (lines or [""])[0]


def _outcome(case: dict, result, parts: dict) -> Outcome:
    if result.error:
        return Outcome("staff", "error row", 0.0, 0.0, f"not graded: {result.error.splitlines()[0]}")
    verdict = next(v for v in result.parts if v.part == case["part"])
    expected = _expected(parts[case["homework"], case["part"]], case)
    unread = verdict.status in (Status.INVALID, Status.ERROR)
    staff = expected if unread else min(verdict.points.staff, expected)
    if verdict.score >= expected - EPS:
        kind = "full"
    elif expected - verdict.score - staff > EPS:
        kind = "refused"  # points the machine decided not to give
    else:
        kind = "staff"
    return Outcome(kind, str(verdict.status), verdict.score, expected, _reason(verdict))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    folder = tmp_path_factory.mktemp("reader-corpus") / "class"
    _lay_out(folder)
    graded = grade(Class([folder]), Options(solutions=ROOT / "solutions", workers=1, ids_from_names=True))
    parts = {(hid, p.id): p for hid, a in graded.assignments.items() for p in a.homework.parts}
    by_student = {result.student: result for result in graded.results}
    return {case["id"]: _outcome(case, by_student[case["id"]], parts) for case in CASES}


def _counts(outcomes: dict[str, dict], cases: list[dict]) -> dict[str, Counter]:
    """Per class and overall: how many right and wrong answers met each fate."""
    table: dict[str, Counter] = {name: Counter() for name in (*CLASSES, "overall")}
    for case in cases:
        found = outcomes.get(case["id"])
        if found is None:
            continue
        for name in (case["class"], "overall"):
            table[name][case["label"]] += 1
            table[name][f"{case['label']}:{found['kind']}"] += 1
    return table


COLUMNS = (("right", "right"), ("full", "right:full"), ("staff", "right:staff"), ("wrong verdict", "right:refused"),
           ("wrong", "wrong"), ("false accept", "wrong:full"), ("refused", "wrong:refused"),
           ("staff", "wrong:staff"))


def _table(now: dict[str, Counter], before: dict[str, Counter] | None) -> str:
    head = "class        | " + " | ".join(f"{title:>13}" for title, _ in COLUMNS)
    lines = ["reader corpus, now (before): right answers | wrong answers", head, "-" * len(head)]
    for name in (*CLASSES, "overall"):
        cells = []
        for _, key in COLUMNS:
            was = f" ({before[name][key]})" if before is not None else ""
            cells.append(f"{str(now[name][key]) + was:>13}")
        lines.append(f"{name:<12} | " + " | ".join(cells))
    return "\n".join(lines)


def _not_credited(found: dict[str, Outcome]) -> str:
    lines = ["right answers not given full credit (case | kind | status | what the feedback says first):"]
    for case in CASES:
        outcome = found[case["id"]]
        if case["label"] == "right" and outcome.kind != "full":
            lines.append(f"  {case['id']} | {outcome.kind} | {outcome.status} | {outcome.reason}")
    lines.append("wrong answers given full credit (case | why it is wrong):")
    for case in CASES:
        if case["label"] == "wrong" and found[case["id"]].kind == "full":
            lines.append(f"  {case['id']} | {case['why']}")
    return "\n".join(lines)


def _common_reasons(found: dict[str, Outcome], top: int = 10) -> str:
    """Why right answers missed full credit, grouped: the reader's to-do list, most common first."""
    groups: dict[str, list[str]] = {}
    for case in CASES:
        outcome = found[case["id"]]
        if case["label"] == "right" and outcome.kind != "full":
            kind = _reason_kind(outcome.reason)
            if case.get("preamble") and kind.startswith("unknown symbol"):
                kind = "unknown symbol: the student's own macro (\\newcommand, \\DeclareMathOperator)"
            groups.setdefault(kind, []).append(case["id"])
    ranked = sorted(groups.items(), key=lambda item: -len(item[1]))[:top]
    return "\n".join(["most common reasons right answers were not credited (count | reason | one case):",
                      *(f"  {len(ids)} | {kind} | {ids[0]}" for kind, ids in ranked)])


def _reason_kind(reason: str) -> str:
    """A feedback line without what is particular to one answer (part, field, column, text)."""
    kind = re.sub(r"^[^,:]+, field [^:]+: ", "", reason)
    kind = re.sub(r"'[^']*' in your chain of equalities cannot be read \((.*)\); write only your answer", r"\1", kind)
    kind = re.sub(r"\s*\((line \d+, )?column \d+\)", "", kind)
    kind = re.sub(r"(; this part| \(did you mean|: this part|; it declares).*", "", kind)
    return re.sub(r"got '.*", "got a sentence or a formatted number", kind)


def _git_head() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def _record(found: dict[str, Outcome]) -> None:
    commit = os.environ.get("ATTNGRADE_BEFORE_COMMIT") or _git_head()
    cases = {case_id: asdict(outcome) for case_id, outcome in found.items()}
    counts = {name: dict(counter) for name, counter in _counts(cases, CASES).items()}
    BEFORE.write_text(json.dumps({"commit": commit, "cases": cases, "counts": counts}, indent=1,
                                 ensure_ascii=False) + "\n", encoding="utf-8")


def _before() -> dict[str, Counter] | None:
    if not BEFORE.exists():
        return None
    recorded = json.loads(BEFORE.read_text(encoding="utf-8"))["cases"]
    return _counts(recorded, CASES)


# ------------------------------------------------------------------ the corpus itself


def test_the_corpus_is_large_and_varied_enough():
    labels = Counter(case["label"] for case in CASES)
    assert labels["right"] >= 100 and labels["wrong"] >= 40, labels
    assert {case["homework"] for case in CASES} == HOMEWORKS
    assert {case["format"] for case in CASES} == FORMATS
    for homework in HOMEWORKS:
        assert {c["format"] for c in CASES if c["homework"] == homework} == FORMATS, homework
    assert {case["class"] for case in CASES} == set(CLASSES)


def test_every_case_records_what_it_is():
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids))
    for case in CASES:
        assert {"id", "homework", "part", "format", "class", "label", "answer", "source"} <= case.keys(), case
        assert case["label"] in ("right", "wrong"), case
        assert case["class"] in CLASSES, case
        assert (case["label"] == "wrong") == bool(case.get("why")), f"{case['id']}: a wrong answer says why"
        assert case["answer"] and all(isinstance(v, str) and v for v in case["answer"].values()), case
        for handed_in in case.get("with", ()):
            assert (ROOT / handed_in).is_file(), handed_in


def test_every_answer_is_in_its_file_as_written():
    for case in CASES:
        path = _file(case)
        text = path.read_text(encoding="utf-8")
        if case["format"] == "ipynb":
            text = "".join("".join(cell["source"]) + "\n" for cell in json.loads(text)["cells"])
        for answer in case["answer"].values():
            for line in answer.splitlines():
                assert line in text or line.replace("'", "''") in text, f"{path.name}: {line!r} is not in the file"
    files = {path.name for path in (CORPUS / "submissions").iterdir()}
    assert files == {_file(case).name for case in CASES}, "a submission file without a case, or the reverse"


def test_every_source_is_cited():
    cited = set(re.findall(r"^## `([^`]+)`", (CORPUS / "SOURCES.md").read_text(encoding="utf-8"), re.MULTILINE))
    used = {case["source"] for case in CASES}
    assert used <= cited, f"cite in SOURCES.md: {sorted(used - cited)}"


def test_no_answer_repeats_the_notation_corpus():
    def squeeze(text: str) -> str:
        return re.sub(r"\s+", "", text)

    earlier = yaml.safe_load((ROOT / "tests/data/notation/corpus.yaml").read_text(encoding="utf-8"))
    seen = set()
    for entry in earlier:
        answer = entry["answer"]
        seen.update(squeeze(str(v)) for v in (answer.values() if isinstance(answer, dict) else [answer]))
    for case in CASES:
        for text in case["answer"].values():
            # a one-token field (K = I, no) is the same whoever writes it
            assert squeeze(text) not in seen or len(squeeze(text)) <= 5, f"{case['id']}: {text!r}"


# ------------------------------------------------------------------ the measurement


def test_every_case_gets_a_row_and_the_table_is_printed(outcomes):
    assert set(outcomes) == {case["id"] for case in CASES}
    for case in CASES:
        outcome = outcomes[case["id"]]
        assert outcome.kind in ("full", "staff", "refused"), outcome
        if case["with"] if "with" in case else False:
            assert outcome.expected > 0, f"{case['id']}: the handed-in files count"
    if RECORD:
        _record(outcomes)
    found = {case_id: asdict(outcome) for case_id, outcome in outcomes.items()}
    report = "\n".join([_table(_counts(found, CASES), _before()), _common_reasons(outcomes), _not_credited(outcomes)])
    print(report)


def _mistakes(outcomes: dict[str, Outcome]) -> tuple[list[str], list[str]]:
    labels = {case["id"]: case["label"] for case in CASES}
    false_accepts = [i for i, o in outcomes.items() if labels[i] == "wrong" and o.kind == "full"]
    wrong_verdicts = [i for i, o in outcomes.items() if labels[i] == "right" and o.kind == "refused"]
    return false_accepts, wrong_verdicts


def test_no_false_accept_and_no_wrong_verdict(outcomes):
    false_accepts, wrong_verdicts = _mistakes(outcomes)
    assert not false_accepts and not wrong_verdicts, f"false accepts: {false_accepts}; wrong verdicts: {wrong_verdicts}"


def test_the_front_end_target(outcomes):
    false_accepts, wrong_verdicts = _mistakes(outcomes)
    right = [case for case in CASES if case["label"] == "right"]
    full = sum(outcomes[case["id"]].kind == "full" for case in right)
    assert full >= TARGET_FULL * len(right), f"{full}/{len(right)} right answers with full credit"
    assert not wrong_verdicts and not false_accepts
