"""A file reading keeps its text compressed and gives it back unchanged."""

from __future__ import annotations

import hashlib
from pathlib import Path

from attngrade.reading import FileReading

PREDICTIONS = Path(__file__).resolve().parent.parent / "examples" / "cs224n-w21-a5" / "parachutel" / \
    "vanilla.nopretrain.dev.predictions"


def test_a_prediction_file_is_held_compressed_and_read_back_whole():
    data = PREDICTIONS.read_bytes()
    text = data.decode("utf-8")
    reading = FileReading.of(PREDICTIONS.name, text, hashlib.sha256(data).hexdigest())
    assert reading.text == text
    assert len(reading.packed) < len(data) / 2  # what a class of 100,000 keeps per file
    assert str(reading) == f"{PREDICTIONS.name} ({len(text.splitlines())} lines)"
    assert reading == FileReading.of(PREDICTIONS.name, text, reading.sha256)  # the memo and groups compare them


def test_line_counts_of_short_files():
    assert FileReading.of("a", "", "0").lines == 0
    assert FileReading.of("a", "x", "0").lines == 1
    assert FileReading.of("a", "x\n", "0").lines == 1
    assert FileReading.of("a", "x\ny", "0").lines == 2
