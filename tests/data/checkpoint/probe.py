"""Run the checkpoint check of tests/data/banks/a5-checkpoint on one checkpoint and one prediction file, and
print its outcome as JSON: how tests run the check under another host's rules (shared/tools/container-sim).

    python probe.py PART CHECKPOINT PREDICTIONS
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from attngrade.checkers import REGISTRY, Context
from attngrade.checkers.checkpoint import CheckpointFile
from attngrade.problems import Bank
from attngrade.reading import FileReading

BANK = Path(__file__).resolve().parents[1] / "banks" / "a5-checkpoint"


def main(part_id: str, checkpoint: str, predictions: str) -> None:
    part = next(p for p in Bank(BANK).load_homework("a5-checkpoint").parts if p.id == part_id)
    index = next(i for i, spec in enumerate(part.checks) if spec.check == "checkpoint")
    text = Path(predictions).read_text(encoding="utf-8")
    answers = {"checkpoint": CheckpointFile.at(checkpoint),
               "dev": FileReading.of(Path(predictions).name, text, hashlib.sha256(text.encode()).hexdigest())}
    outcome = REGISTRY["checkpoint"].run(answers, Context(part, part.checks[index]))
    record = next(v for k, v in outcome.evidence.items() if k.startswith("checkpoint:"))
    print(json.dumps({"earned": outcome.earned, "feedback": list(outcome.feedback), "is_pending": outcome.is_pending,
                      "layers": record["sandbox"]["layers"], "uid": record["sandbox"]["uid"]}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
