"""What the templates show, computed here so the templates stay plain markup."""

from __future__ import annotations

import os
from typing import Any, Iterator

from ..grading.groups import Group
from ..records import Homework, Part, Result, Status, Verdict
from .mathml import statement_html, to_mathml
from .plots import heatmap, histogram

ATTENTION_CHECKS = ("attention_query", "attention_qkv")


def answer_fields(v: Verdict) -> list[dict[str, Any]]:
    """Each field of an answer: as written (yes/no for a boolean, however it was written), read, drawn."""
    fields = []
    for name, text in v.answers.items():
        reading = v.readings.get(name)
        if isinstance(reading, bool):  # YAML's True is "yes"
            text = "yes" if reading else "no"
        fields.append({"name": name, "text": text, "shown": v.shown.get(name), "mathml": to_mathml(reading)})
    return fields


def _spaced(text: str) -> str:
    return " ".join(str(text).split())


def axis_names(part: Part | None, evidence: Any) -> tuple[list[str] | None, list[str] | None, str | None]:
    """The heatmap's query and key names as the problem writes them, and a title if the rows are averaged.

    The check's own `labels` evidence ({"queries": [...], "keys": [...]}) wins; otherwise the
    names come from the attention check's params (named key positions, the symbols that
    define the inputs). None where they are not known: the plot then numbers them.
    """
    given = evidence.get("labels")
    if isinstance(given, dict) and (given.get("keys") or given.get("queries")):
        return given.get("queries"), given.get("keys"), None
    spec = next((c for c in part.checks if c.check in ATTENTION_CHECKS), None) if part else None
    if spec is None:
        return None, None, None
    p = spec.params
    try:
        if spec.check == "attention_query":
            named = {int(i) - 1: str(name) for name, i in p["positions"].items()}
            stem = next(iter(named.values())).partition("_")[0]
            keys = [named.get(j, f"{stem}_{j + 1}") for j in range(int(p["n"]))]
            heads = list(spec.fields)
            if len(heads) > 1:
                return ["mean"], keys, f"weights on the keys, averaged over the heads {', '.join(heads)}"
            return heads, keys, None
        defined = {_spaced(s.define): name for name, s in part.table.specs.items() if s.define}
        inputs = [defined.get(_spaced(x), f"x_{j + 1}") for j, x in enumerate(p["inputs"])]
        return [f"q_{i + 1}" for i in range(len(inputs))], inputs, None
    except (KeyError, TypeError, ValueError, StopIteration, AttributeError):
        return None, None, None


def part_view(v: Verdict, homework: Homework | None) -> dict[str, Any]:
    part = homework.part(v.part) if homework else None
    fields = answer_fields(v)
    evidence = v.evidence
    plot = None
    if "weights" in evidence:
        rows, cols, averaged = axis_names(part, evidence)
        title = "attention weights as β grows" if isinstance(evidence["weights"][0], list) else "weights on the keys"
        plot = heatmap(evidence["weights"], evidence.get("target_weights"), averaged or title, rows, cols)
    files = [info for key, info in evidence.items() if key.startswith("accuracy:") and isinstance(info, dict)]
    if v.overruled:  # a person's grade replaced the machine's verdict: its evidence is not the grade's
        evidence, plot, files = {"rubric": evidence.get("rubric")}, None, []
    return {
        "id": v.part, "score": v.score, "max_score": v.max_score, "status": v.status,
        "is_pending": v.is_pending,
        "statement": statement_html(part.statement) if part else "", "fields": fields, "feedback": v.feedback,
        "overruled": v.overruled,
        "rubric": evidence.get("rubric"), "heatmap": plot, "files": files, "mismatches": [
            info for key, info in evidence.items()
            if key.startswith("equivalent:") and isinstance(info, dict) and info.get("mismatch")],
        "manual": bool(part and any(c.check == "manual" for c in part.checks)),
    }


def student_view(result: Result, homework: Homework | None) -> dict[str, Any]:
    return {"result": result, "homework": homework, "parts": [part_view(v, homework) for v in result.parts],
            "error": _in_the_class(result.error, result.source), "notes": [_in_the_class(note, result.source)
                                                                          for note in result.notes]}


def _in_the_class(text: str | None, source: str | None) -> str | None:
    """`text` with the course's folders left out of the submission's path: a report goes to the
    student, who knows their file as `zoe.yaml`, not by where the course keeps it."""
    if not text or not source:
        return text
    name = os.path.basename(os.path.normpath(source))
    for path in sorted({source, os.path.abspath(source)}, key=len, reverse=True):  # the longer first
        if path != name:
            text = text.replace(path, name)
    return text


def _members(members: list[str], folder_of: dict[str, str]) -> Iterator[tuple[str, str | None]]:
    return ((m, folder_of.get(m)) for m in members)


def class_view(rows: list[tuple[Result, str]], homeworks: dict[str, Homework],
               groups: dict[str, dict[str, list[Group]]]) -> dict[str, Any]:
    graded = [r for r, _ in rows if not r.error]
    sections = []
    for hid, hw in homeworks.items():
        mine = [r for r in graded if r.homework == hid]
        if not mine:
            continue
        folder_of = {r.student: folder for r, folder in rows if r.homework == hid}
        parts = []
        for part in hw.parts:
            verdicts = [v for r in mine for v in r.parts if v.part == part.id]
            answered = [v for v in verdicts if v.status != Status.MISSING]
            # Statistics over decided points only: points waiting for staff are not a 0, and the
            # machine's points of a part whose written answer waits count (out of what was decided).
            decided = [v for v in verdicts if not v.pending_points]
            scored = [v for v in verdicts if v.max_score - v.pending_points > 1e-9]
            mean = sum(v.score for v in scored) / len(scored) if scored else 0.0
            out_of = sum(v.max_score - v.pending_points for v in scored) / len(scored) if scored else 0.0
            passed = sum(1 for v in decided if v.score >= v.max_score - 1e-9) / len(decided) if decided else 0.0
            part_groups = []
            for g in groups.get(hid, {}).get(part.id, []):
                example = g.example
                part_groups.append({
                    "id": g.id, "count": g.count, "status": example.status if example else "",
                    "score": example.score if example else 0.0, "max_score": part.points,
                    "is_pending": bool(example and example.is_pending),
                    "fields": answer_fields(example) if example else [],
                    # lazily: every student of the class is a member of one group per part
                    "members": _members(g.members, folder_of),
                })
            parts.append({"id": part.id, "points": part.points, "mean": mean, "pass_rate": passed,
                          "answered": len(answered), "groups": part_groups, "graded": len(scored),
                          "out_of": out_of,
                          "pending_students": len(verdicts) - len(decided)})
        totals = [r.score for r in mine]
        sections.append({
            "homework": hw, "count": len(mine), "parts": parts,
            "mean": sum(totals) / len(totals), "histogram": histogram(totals, hw.max_score),
            "pending_points": sum(r.pending_points for r in mine),
            "pending_students": sum(1 for r in mine if r.pending_points),
        })
    return {"rows": rows, "sections": sections}
