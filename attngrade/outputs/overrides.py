"""The manual-grading loop: `OUT/overrides.yaml` lists what a person must decide.

`grade run` writes a template listing every answer group and every pending part.
An instructor fills in `score` (and `comment`) per group or per student, and reruns
with `--overrides FILE`; a group's score applies to all its members, and a student's
own entry wins over the group's. An edited file is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import yaml

from ..errors import ConfigError
from ..grading.groups import Group
from ..records import STAFF_GRADED, WAITING, Homework, Result, Status, Verdict
from ..runtime.files import write_atomic
from ..runtime.text import counted, did_you_mean
from .folder import edited_by_hand
from .history import Renamed

GRADED = STAFF_GRADED  # how a report says a person decided the part

HEADER = """\
# attngrade overrides. Fill in scores (and, if you like, a `comment`) and rerun the same
# command with `--overrides {path}`.
# - groups: `score` is the whole part's score for every student in the group.
# - students: `manual_score` is the points for the part's written answer (0..manual_points),
#   added to the machine's `machine_score`; or give `score` to replace the whole part's score
#   (the only way where what waits is a check attngrade could not decide: 0..max_score).
# One decision per group or student and part; a student's own entry wins over the group's
# (the run says so). A key attngrade does not know is refused. attngrade never overwrites
# this file once you have edited it.
"""


@dataclass(frozen=True)
class Decision:
    score: float | None  # the whole part's score
    comment: str | None
    line: int
    manual: float | None = None  # points for the written answer, added to the machine's


@dataclass
class Overrides:
    groups: dict[tuple[str, str], Decision]  # (homework, group id) -> decision
    students: dict[tuple[str, str], Decision]  # (student, part) -> decision
    said: list[str] = field(default_factory=list)  # what the run should tell (a student's entry over a group's)

    @property
    def empty(self) -> bool:
        return not self.groups and not self.students


def manual_points(homeworks: dict[str, Homework], homework: str | None, part_id: str) -> float:
    part = homeworks[homework].part(part_id) if homework in homeworks else None
    return sum(c.points for c in part.checks if c.check == "manual") if part else 0.0


def template(results: list[Result], groups: dict[str, dict[str, list[Group]]], path: Path,
             homeworks: dict[str, Homework]) -> Iterator[str]:
    """The overrides file for a batch, in pieces: groups per homework, then pending parts per student.

    Pieces, not one string: a large class's file is written as it comes, never whole in memory."""
    yield HEADER.format(path=path)
    yield from _block("groups", (_group_row(homework, group) for homework, by_part in groups.items()
                                  for part_groups in by_part.values() for group in part_groups))
    yield from _block("students", (_student_row(r, v, manual_points(homeworks, r.homework, v.part))
                                    for r in results for v in r.parts
                                    if v.status == Status.PENDING or v.points.pending_points > 0))


def _student_row(result: Result, v: Verdict, written: float) -> dict[str, Any]:
    """A pending part: `manual_score` for its written answer, or `score` (the whole part's) when
    what waits is a check attngrade could not decide (its points are not a written answer's)."""
    row: dict[str, Any] = {"student": result.student, "part": v.part, "machine_score": v.score}
    if written > 0:
        row.update(manual_points=written, manual_score=None)
    else:
        row.update(max_score=v.max_score, score=None)
    row["comment"] = None
    return row


def _group_row(homework: str, group: Group) -> dict[str, Any]:
    v = group.example
    return {"homework": homework, "part": group.part, "group": group.id, "count": group.count,
            "answer": _clip("; ".join(f"{k}: {t}" for k, t in v.answers.items()) if v else ""),
            "graded": f"{v.status} {v.score:g}/{v.max_score:g}" if v else "",
            "score": None, "comment": None}


# The template is plain data: lists of flat mappings. Written here rather than by yaml.dump,
# whose representer is pure Python and slow for a large class; read back with the safe loader.
_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_.#/-]*$")
_KEYWORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "nan", "inf"}


def _block(name: str, rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    empty = True
    for row in rows:
        if empty:
            yield f"{name}:\n"
            empty = False
        yield "\n".join(f"{'- ' if i == 0 else '  '}{key}: {_scalar(value)}"
                         for i, (key, value) in enumerate(row.items())) + "\n"
    if empty:
        yield f"{name}: []\n"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "item") and not isinstance(value, str):  # numpy numbers
        value = value.item()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        # YAML 1.1 reads 1e-05 as a string: a float needs its point (1.0e-05)
        return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _KEYWORDS:
        return text
    # A JSON string is a YAML double-quoted scalar, once the characters YAML does not allow
    # raw (controls, surrogates, U+FFFE/FFFF, NEL) are escaped too, and the line and paragraph
    # separators, which a YAML reader folds like line breaks (the id would not come back), and the
    # bidirectional overrides and isolates, which would reorder the line in the instructor's editor.
    return _UNPRINTABLE.sub(_escape, json.dumps(text, ensure_ascii=False))


_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _clip(text: str, size: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 3] + "..."


def write_template(out: Path, pieces: Iterable[str], shown: Path | None = None) -> str:
    """Write OUT/overrides.yaml unless a person edited it; say what happened.

    `shown` is the folder the instructor will find the files in (OUT, when `out` is the
    run's staging folder)."""
    target, stamp = out / "overrides.yaml", out / ".overrides.sha256"
    shown = shown or out
    digest = hashlib.sha256()

    def hashed() -> Iterator[str]:
        for piece in pieces:
            digest.update(piece.encode())
            yield piece

    if target.exists() and edited_by_hand(out):
        write_atomic(out / "overrides.new.yaml", pieces)
        return (f"kept your edited {shown / 'overrides.yaml'}; its scores apply to a run given --overrides "
                f"{shown / 'overrides.yaml'} (or, imported once, with `grade review {shown} --import "
                f"{shown / 'overrides.yaml'}`); the current list of groups and pending parts is in "
                f"{shown / 'overrides.new.yaml'}")
    write_atomic(target, hashed())
    write_atomic(stamp, digest.hexdigest() + "\n")
    return f"wrote {shown / 'overrides.yaml'}: fill in scores and rerun with --overrides {shown / 'overrides.yaml'}"






@dataclass
class _Batch:
    """What an overrides file's entries are checked against: the run's groups, verdicts and homeworks,
    and the students the run before graded under another id (`history.renamed`)."""

    groups: dict[tuple[str, str], Group]
    verdicts: dict[tuple[str, str], Verdict]
    homework_of: dict[str, str | None]
    homeworks: dict[str, Homework]
    renamed: Mapping[str, Renamed]


def load(path: Path, results: list[Result], groups: dict[str, dict[str, list[Group]]],
         homeworks: dict[str, Homework], renamed: Mapping[str, Renamed] | None = None) -> Overrides:
    """Read and validate an overrides file. Every error names its line, and all of them are told at
    once (a file of decisions is fixed at one sitting, not one rerun per typo).

    `renamed`: students graded under a new id since the run before (`history.renamed`); their
    decisions go with them for the parts whose answer is the same, and the run says so."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: cannot read overrides ({err})") from None
    batch = _Batch({(hw, g.id): g for hw, by_part in groups.items() for gs in by_part.values() for g in gs},
                   {(r.student, v.part): v for r in results for v in r.parts},
                   {r.student: r.homework for r in results}, homeworks, renamed or {})
    out, errors = Overrides({}, {}), []
    for section, entry, line in _entries(root, path):
        try:
            _take(out, section, entry, line, f"{path}, line {line}", batch)
        except ConfigError as err:
            errors.append(str(err))
    if errors:
        raise ConfigError(f"{path}: {counted(len(errors), 'entry', 'entries')} to fix:\n"
                          + "\n".join(errors))
    out.said += _over_groups(out, groups, path)
    return out


def _take(out: Overrides, section: str, entry: dict | ConfigError, line: int, where: str, batch: _Batch) -> None:
    """Check one entry of the file and add its decision to `out`; raise ConfigError if it is wrong."""
    if isinstance(entry, ConfigError):
        raise entry
    _known_keys(entry, section, where)
    score = _number(entry.get("score"), "score", where)
    manual = _number(entry.get("manual_score"), "manual_score", where) if section == "students" else None
    if score is None and manual is None:
        return  # not decided yet
    if score is not None and manual is not None:
        raise ConfigError(f"{where}: give `score` (the whole part's) or `manual_score` (added to the machine's), "
                          "not both")
    comment = entry.get("comment")
    decision = Decision(score, None if comment in (None, "") else str(comment), line, manual)
    if section == "groups":
        _take_group(out, entry, decision, where, batch)
    else:
        _take_student(out, entry, decision, where, batch)


def _take_group(out: Overrides, entry: dict, decision: Decision, where: str, batch: _Batch) -> None:
    if decision.score is None:
        raise ConfigError(f"{where}: a group takes a `score` (the whole part's)")
    key = (str(entry.get("homework")), str(entry.get("group")))
    group = batch.groups.get(key)
    if group is None:
        raise ConfigError(f"{where}: no answer group {key[1]!r} in homework {key[0]!r} in this batch")
    if entry.get("part") not in (None, "") and str(entry.get("part")) != group.part:
        raise ConfigError(f"{where}: group {key[1]!r} is an answer group of part {group.part!r}, not "
                          f"{entry.get('part')!r}; fix the part or the group")
    _check_range(where, decision.score, group.example.max_score if group.example else 0.0)
    _once(out.groups, key, decision, where, f"group {key[1]!r}")


def _take_student(out: Overrides, entry: dict, decision: Decision, where: str, batch: _Batch) -> None:
    student, part = str(entry.get("student")), str(entry.get("part"))
    if student in batch.renamed:  # its submission is graded under another id now (which may be taken)
        student = _renamed(out, batch.renamed[student], part, where)
        if student is None:
            return
    if student not in batch.homework_of:
        known = sorted(batch.homework_of)
        same_but_case = [s for s in known if s.lower() == student.lower()]
        hint = (did_you_mean(student, known, _MEANT, cutoff=0.8)
                or did_you_mean(student, same_but_case, _MEANT, cutoff=0.0))
        raise ConfigError(f"{where}: no student {student!r} in this batch{hint}; for a student who left, "
                          "delete the entry")
    verdict = batch.verdicts.get((student, part))
    if verdict is None:
        raise ConfigError(f"{where}: student {student!r} has no part {part!r}")
    if decision.score is not None:
        _check_range(where, decision.score, verdict.max_score)
    if decision.manual is not None:
        written = manual_points(batch.homeworks, batch.homework_of[student], part)
        if written == 0:
            raise ConfigError(f"{where}: part {part!r} has no written answer for staff to score; what waits "
                              "is a check attngrade could not decide: give `score`, the whole part's score")
        _check_range(where, decision.manual, written, "manual_score")
    _once(out.students, (student, part), decision, where, f"{student} {part}")


def _renamed(out: Overrides, renamed: Renamed, part: str, where: str) -> str | None:
    """The id a decision for a renamed student holds under now, if the answer it was made for is the
    same; else None, and the run says the decision waits for a person again."""
    if part in renamed.same:
        out.said.append(f"{where}: {renamed.before!r} is graded as {renamed.now!r} now (the same submission and "
                        f"answer to {part}): the decision is {renamed.now!r}'s; rename it in the file when you next "
                        "edit it")
        return renamed.now
    why = "changed since this decision" if renamed.compared else "could not be compared (the run before's " \
        "results.json could not be read)"
    out.said.append(f"{where}: {renamed.before!r} is graded as {renamed.now!r} now, and the answer to {part} {why}: "
                    f"it is not applied; decide again under {renamed.now!r}")
    return None


_MEANT = " (did you mean {!r}?)"  # the hint's form here: names quoted as Python quotes them
IDS = ("student", "part", "group", "homework")
# The keys of an entry of each section: what the template writes (some only to read) and what a person fills in.
KEYS = {"groups": ("homework", "part", "group", "count", "answer", "graded", "score", "comment"),
        "students": ("student", "part", "machine_score", "manual_points", "max_score", "manual_score", "score",
                     "comment")}


def _known_keys(entry: dict, section: str, where: str) -> None:
    """A key attngrade does not read is a typo (`manual-score`): a decision it would silently drop."""
    for key in entry:
        if str(key) not in KEYS[section]:
            hint = did_you_mean(str(key).replace("-", "_").lower(), KEYS[section], _MEANT)
            raise ConfigError(f"{where}: unknown key {str(key)!r}{hint}; an entry of {section} takes "
                              + ", ".join(KEYS[section]))


def _once(decided: dict, key: Any, decision: Decision, where: str, what: str) -> None:
    if key in decided:
        raise ConfigError(f"{where}: a second decision for {what} (the first is on line {decided[key].line}); "
                          "keep one")
    decided[key] = decision


def _over_groups(out: Overrides, groups: dict[str, dict[str, list[Group]]], path: Path) -> list[str]:
    """A student's entry on a part whose answer group was decided too: the student's is used, said."""
    if not out.groups or not out.students:
        return []
    decided = {(member, g.part): out.groups[(hw, g.id)] for hw, by_part in groups.items() for gs in by_part.values()
               for g in gs if (hw, g.id) in out.groups for member in g.members}
    return [f"{path}, line {mine.line}: {student} {part}: this student's entry is used, not the group's decision "
            f"on line {decided[(student, part)].line}"
            for (student, part), mine in out.students.items() if (student, part) in decided]


def _entries(root: Any, path: Path):
    if root is None:
        return
    if not isinstance(root, yaml.MappingNode):
        raise ConfigError(f"{path}, line {root.start_mark.line + 1}: expected the sections 'groups' and 'students'")
    for key_node, value_node in root.value:
        section = key_node.value
        if section not in ("groups", "students"):
            raise ConfigError(f"{path}, line {key_node.start_mark.line + 1}: unknown section {section!r}")
        if isinstance(value_node, yaml.ScalarNode) and value_node.value in ("", "null", "~"):
            continue
        if not isinstance(value_node, yaml.SequenceNode):
            raise ConfigError(f"{path}, line {value_node.start_mark.line + 1}: {section} must be a list")
        for item in value_node.value:
            data = _construct(item)
            if not isinstance(data, dict):  # told with the others: the loop reads on
                yield section, ConfigError(f"{path}, line {item.start_mark.line + 1}: each entry must be a "
                                           "mapping"), item.start_mark.line + 1
                continue
            # Ids as written: YAML 1.1 would read a student 0123 as the octal 83, 1.10 as 1.1 and
            # `no` as False; any scalar not written as text is taken as its text.
            for key_node, value in item.value:
                read = isinstance(value, yaml.ScalarNode) and value.tag.endswith((":int", ":float", ":bool", ":null"))
                if key_node.value in IDS and read and value.value:
                    data[key_node.value] = value.value
            yield section, data, item.start_mark.line + 1


def _construct(node: Any) -> Any:
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


def _number(value: Any, name: str, where: str) -> float | None:
    if value in (None, ""):
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ConfigError(f"{where}: {name} must be a number, got {value!r}")
    return float(value)


def _check_range(where: str, score: float, maximum: float, name: str = "score") -> None:
    if not 0 <= score <= maximum:
        raise ConfigError(f"{where}: {name} {score:g} is outside 0..{maximum:g}")


def apply(results: list[Result], overrides: Overrides,
          group_of: dict[tuple[str, str], tuple[str, str]]) -> list[Result]:
    """Results with the decisions applied; `group_of[(student, part)] = (homework, group id)`."""
    if overrides.empty:
        return results
    updated = []
    for result in results:
        parts = []
        for v in result.parts:
            decision = overrides.students.get((result.student, v.part)) or overrides.groups.get(
                group_of.get((result.student, v.part), ("", "")))
            parts.append(_decide(v, decision) if decision else v)
        total = round(sum(v.score for v in parts), 6)
        updated.append(replace(result, parts=tuple(parts), score=total))
    return updated


def _decide(v: Verdict, decision: Decision) -> Verdict:
    """The verdict a person's decision makes: a `score` replaces the machine's verdict (kept apart, as
    `overruled`); a `manual_score` adds the written answer's points to what the machine gave."""
    score = decision.score if decision.score is not None else min(v.max_score, v.score + (decision.manual or 0.0))
    status = Status.CORRECT if score >= v.max_score - 1e-9 else Status.INCORRECT if score == 0 else Status.PARTIAL
    note = GRADED + (f": {decision.comment}" if decision.comment else "")
    points = replace(v.points, pending_points=0.0)  # decided by a person: nothing is waiting any more
    if decision.score is not None:
        return replace(v, score=score, status=status, feedback=(note,), overruled=v.feedback, points=points)
    kept = tuple(line for line in v.feedback if line != WAITING)
    return replace(v, score=score, status=status, feedback=kept + (note,), points=points)
