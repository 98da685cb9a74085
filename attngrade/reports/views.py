"""What the templates show, computed here so the templates stay plain markup."""

from __future__ import annotations

from typing import Any

from ..groups import Group
from ..records import Homework, Result, Verdict
from .mathml import to_mathml
from .plots import heatmap, histogram


def part_view(v: Verdict, homework: Homework | None) -> dict[str, Any]:
    part = homework.part(v.part) if homework else None
    fields = []
    for name, text in v.answers.items():
        value = v.values.get(name)
        if isinstance(value, bool):  # a yes/no answer, however it was written (YAML's True is "yes")
            text = "yes" if value else "no"
        fields.append({"name": name, "text": text, "reading": v.readings.get(name), "mathml": to_mathml(value)})
    evidence = v.evidence
    plot = None
    if "weights" in evidence:
        title = "attention weights as β grows" if isinstance(evidence["weights"][0], list) else "weights on the keys"
        plot = heatmap(evidence["weights"], evidence.get("target_weights"), title)
    files = [info for key, info in evidence.items() if key.startswith("accuracy:") and isinstance(info, dict)]
    return {
        "id": v.part, "score": v.score, "max_score": v.max_score, "status": v.status,
        "waiting": v.waiting,
        "statement": part.statement if part else "", "fields": fields, "feedback": v.feedback,
        "rubric": evidence.get("rubric"), "heatmap": plot, "files": files, "mismatches": [
            info for key, info in evidence.items()
            if key.startswith("equivalent:") and isinstance(info, dict) and info.get("mismatch")],
        "manual": bool(part and any(c.check == "manual" for c in part.checks)),
    }


def student_view(result: Result, homework: Homework | None) -> dict[str, Any]:
    return {"result": result, "homework": homework, "parts": [part_view(v, homework) for v in result.parts]}


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
            answered = [v for v in verdicts if v.status != "missing"]
            # Statistics over graded points only: a part waiting for staff is not a 0.
            decided = [v for v in verdicts if not v.pending_points]
            mean = sum(v.score for v in decided) / len(decided) if decided else 0.0
            passed = sum(1 for v in decided if v.score >= v.max_score - 1e-9) / len(decided) if decided else 0.0
            part_groups = []
            for g in groups.get(hid, {}).get(part.id, []):
                example = g.example
                part_groups.append({
                    "id": g.id, "count": g.count, "status": example.status if example else "",
                    "score": example.score if example else 0.0, "max_score": part.points,
                    "fields": [{"name": n, "text": t, "mathml": to_mathml(example.values.get(n))}
                               for n, t in (example.answers.items() if example else [])],
                    "members": [(m, folder_of.get(m)) for m in g.members],
                })
            parts.append({"id": part.id, "points": part.points, "mean": mean, "pass_rate": passed,
                          "answered": len(answered), "groups": part_groups, "graded": len(decided),
                          "pending": len(verdicts) - len(decided)})
        totals = [r.score for r in mine]
        sections.append({
            "homework": hw, "count": len(mine), "parts": parts,
            "mean": sum(totals) / len(totals), "histogram": histogram(totals, hw.max_score),
            "pending": sum(r.pending_points for r in mine),
            "pending_students": sum(1 for r in mine if r.pending_points),
        })
    return {"rows": rows, "sections": sections}
