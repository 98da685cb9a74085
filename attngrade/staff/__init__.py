"""The staff store: what course staff decide, kept in `OUT/staff.sqlite`, and applied by `grade run`.

- `store`: the file, its tables, connections and write transactions (each one audited);
- `answers`: fingerprints of answers, the answers of a run waiting for staff (its snapshot);
- `grades`: grades, the rubric, comments, settings and placements, read and changed;
- `apply`: a run's results with the staff's decisions applied;
- `overrides`: overrides.yaml in and out of the store.

`grade review` (attngrade/review) is the web app over it; `grade run` calls `apply`.
"""

from __future__ import annotations

from .answers import (Answer, Renamed, answer_of, carry, collect, decided_in, describe, digest, fingerprint,
                      normalized, part_rows, record, snapshot_digest, written_points)
from .apply import Decided, apply, decide, decisions
from .grades import (OPS, Change, Grade, Item, answers_of, audit_log, change, edit_item, effective, grades_of,
                     parts_of, place, placements_of, rubric_of, seed_rubric, set_setting, set_student_comment,
                     setting, staff_points, student_comments)
from .overrides import export_overrides, import_overrides
from .store import KEYED_WAITING, MARK, SCHEMA, STORE, Conflict, audit, now, open_store, store, writing

__all__ = ["Answer", "Change", "Conflict", "Decided", "Grade", "Item", "KEYED_WAITING", "MARK", "OPS", "Renamed",
           "SCHEMA", "STORE", "answer_of", "answers_of", "apply", "audit", "audit_log", "carry", "change", "collect",
           "decide", "decided_in", "decisions", "describe", "digest", "edit_item", "effective", "export_overrides",
           "fingerprint", "grades_of", "import_overrides", "normalized", "now", "open_store", "part_rows", "parts_of",
           "place", "placements_of", "record", "rubric_of", "seed_rubric", "set_setting", "set_student_comment",
           "setting", "snapshot_digest", "staff_points", "store", "student_comments", "writing", "written_points"]
