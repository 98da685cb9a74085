"""A file reading keeps its text compressed and gives it back whole; a copy of a file read before is that reading."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from attngrade.problems import BUNDLED
from attngrade.reading import FieldError, FileReading, read_file

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


def test_a_copy_of_a_file_read_before_is_that_reading_and_a_changed_one_is_new(tmp_path):
    part = next(p for p in BUNDLED.load_homework("cs224n-w21-a5").parts if any(f.kind == "file" for f in p.fields))
    field = next(f for f in part.fields if f.kind == "file")
    one, two, three, broken = (tmp_path / name for name in ("one", "two", "three", "broken"))
    for folder in (one, two, three, broken):
        folder.mkdir()
    data = PREDICTIONS.read_bytes()
    (one / field.filename).write_bytes(data)
    (two / field.filename).write_bytes(data)
    (three / field.filename).write_bytes(data + b"Paris\n")
    (broken / field.filename).write_bytes(b"\xff" + data)
    files: dict = {}
    first = read_file(part, field, None, one, files)
    assert read_file(part, field, None, two, files) is first
    changed = read_file(part, field, None, three, files)
    assert changed is not first and changed.text == first.text + "Paris\n"
    assert files == {(field.filename, first.sha256): first, (field.filename, changed.sha256): changed}
    for _ in range(2):  # an unreadable file is never remembered: each student is told
        with pytest.raises(FieldError, match="not UTF-8"):
            read_file(part, field, None, broken, files)
    assert len(files) == 2


# Short answers on which sympy, left alone, works for minutes and gigabytes (found by a review).
SLOW = [
    ("cs224n-w21-a5", "1b", "q", r"\ln " * 20 + "C k_a"),  # each log doubles the work of deciding it is not 0
    ("cs224n-w21-a5", "1b", "q", r"\log(((C+1)^{16}+1)^{16}) k_a"),  # sign reasoning expands the polynomial
    ("eecs182-sp23-transformers", "e", "one", "y = (n+k+1)^{64}(n+k+2)^{64} = 2^n"),  # the chain is expanded
]


@pytest.mark.parametrize("homework, part_id, name, text", SLOW)
def test_an_answer_that_takes_too_long_to_read_costs_only_its_part(monkeypatch, homework, part_id, name, text):
    import time

    import attngrade.reading as reading

    monkeypatch.setattr(reading, "READ_SECONDS", 0.5)
    part = BUNDLED.load_homework(homework).part(part_id)
    started = time.monotonic()
    with pytest.raises(FieldError, match="took more than 0.5 s; write it more simply"):
        reading.read_field(part, part.field(name), text)
    assert time.monotonic() - started < 10
    assert reading.read_field(part, part.field(name), "k_a" if name == "q" else "2^n").expr is not None  # reads go on


def test_a_notebook_too_large_to_read_is_told_to_clear_its_outputs(tmp_path):
    """A notebook is large for its plots and printed tensors, which no part reads: the message says so."""
    from dataclasses import replace

    from attngrade.problems import load_homework
    from attngrade.reading import FieldError, read_field

    part = load_homework("eecs182-fa22-hw8").part("1.code")
    (tmp_path / "Summarization.ipynb").write_text('{"cells": [], "outputs": "' + "x" * 2000 + '"}')
    small = replace(part.fields[0], max_bytes=1000)
    with pytest.raises(FieldError, match=r"Summarization.ipynb is 2\d+ bytes; at most 1000 are read; clear its "
                                         r"outputs \(in Jupyter: Kernel, Restart and Clear Output\)"):
        read_field(part, small, None, tmp_path)
