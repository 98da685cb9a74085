"""The staff store: what course staff decide, kept in `OUT/staff.sqlite`, and applied by `grade run`.

- `store`: the file, its tables, connections and write transactions (each one audited), and what
  a store that cannot be read or written means (`StoreError`);
- `answers`: fingerprints of answers, the answers of a run waiting for staff (its snapshot);
- `grades`: grades, the rubric, comments and placements, read and changed;
- `graders`: who may change the store, each by a secret of their own;
- `claims`: groups handed out to graders while a team grades one part;
- `transcripts`: unreadable answers typed again by staff and graded by the part's checks;
- `requests`: students' regrade requests and staff's replies;
- `anonymity`: grading without student ids, pseudonyms keyed by the store's secret;
- `apply`: a run's results with the staff's decisions applied;
- `overrides`: overrides.yaml in and out of the store.

`grade review` (attngrade/review) is the web app over it; `grade run` calls `apply`.
"""

from __future__ import annotations

from .anonymity import anonymous, pseudonym, pseudonyms, set_anonymous
from .answers import (Answer, Renamed, answer_of, carry, collect, decided_in, describe, digest, fingerprint,
                      normalized, part_rows, record, snapshot_digest, written_points)
from .apply import Decided, apply, decide, decisions
from .grades import (OPS, Change, Disagree, Grade, Item, answers_of, audit_log, change, edit_item, effective, finite,
                     grades_of, parts_of, place, placements_of, rubric_of, seed_rubric, set_student_comment,
                     staff_points, student_comments)
from .overrides import export_overrides, import_overrides
from .store import (KEYED_WAITING, MARK, SCHEMA, STORE, Conflict, StoreError, audit, explained, last_change, now,
                    open_store, retrying, secret, set_setting, setting, store, writing)

__all__ = ["Answer", "Change", "Conflict", "Decided", "Disagree", "Grade", "Item", "KEYED_WAITING", "MARK", "OPS",
           "Renamed", "SCHEMA", "STORE", "StoreError", "anonymous", "answer_of", "answers_of", "apply", "audit",
           "audit_log", "carry", "change", "collect", "decide", "decided_in", "decisions", "describe", "digest",
           "edit_item", "effective", "explained", "export_overrides", "fingerprint", "finite", "grades_of",
           "import_overrides", "last_change", "normalized", "now", "open_store", "part_rows", "parts_of", "place",
           "placements_of", "pseudonym", "pseudonyms", "record", "retrying", "rubric_of", "secret", "seed_rubric",
           "set_anonymous", "set_setting", "set_student_comment", "setting", "snapshot_digest", "staff_points",
           "store", "student_comments", "writing", "written_points"]
