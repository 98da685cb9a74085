"""The looks that decide whether a file holds answers: right on real files, and linear on floods.

Each look runs on every answers-format file a class holds while its submissions are found,
before any budget but discovery's own, so a file of one character repeated must cost a moment:
a megabyte of backticks once took hours.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from attngrade.intake.formats import sniff
from attngrade.intake.look import looks_like_answers

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "tests" / "data" / "notebooks"
KINDS = (sniff.YAML, sniff.HEADING, sniff.LATEX)
MEGABYTE = 1_000_000
# One character (or a short piece) repeated: what a backtracking pattern or a rescan from every
# start turns into quadratic work, and what each look has a branch for.
FLOODS = ["`", "$", "\\", "{", "}", "#", "*", "_", "[", "\n", " ", "\t", "\x00", '"', "'", ":", "a",
          "```", "``` ", "# ", "#" * 7 + " ", "\\n", '"#', "answer", "answer ", "# answer", "## Answer 1b\n",
          "attngrade", " attngrade", "homework", "homework ", "'homework'", "\nhomework", "\\answer",
          "\\answers", "\\attnhomework"]
# A generous bound for one look at a megabyte: a linear scan takes milliseconds even on a loaded
# machine, a quadratic one minutes. CPU time of this process, so waiting for a core does not count.
SECONDS_PER_MEGABYTE = 2.0


def _spent(kind: str, piece: str, size: int) -> float:
    text = piece * (size // len(piece))
    start = time.process_time()
    sniff.looks_like(kind, text)
    return time.process_time() - start


@pytest.mark.parametrize("kind", KINDS)
def test_every_look_at_a_megabyte_flood_takes_a_moment(kind):
    slow = {}
    for piece in FLOODS:
        # A tenth of the text first: a quadratic look fails there in seconds, not after hours.
        spent = _spent(kind, piece, MEGABYTE // 10)
        if spent <= SECONDS_PER_MEGABYTE / 10:
            spent = _spent(kind, piece, MEGABYTE)
        if spent > SECONDS_PER_MEGABYTE:
            slow[piece] = round(spent, 2)
    assert slow == {}, f"{kind}: CPU seconds for a megabyte (or a tenth of one) of each piece: {slow}"


@pytest.mark.parametrize("piece", ["`", "# answer", "answer ", " attngrade", "homework"])
def test_ten_times_the_text_is_about_ten_times_the_work(piece):
    """Linear, not only fast: a megabyte costs about ten times 100 kB (a quadratic look costs a hundred).
    The best of three runs each, so that a busy machine does not decide."""
    def spent(size: int) -> float:
        text = piece * (size // len(piece))
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            for kind in KINDS:
                sniff.looks_like(kind, text)
            best = min(best, time.process_time() - start)
        return best

    small, large = spent(100_000), spent(MEGABYTE)
    assert large < 40 * max(small, 1e-3), (piece, small, large)


@pytest.mark.parametrize("kind, text", [
    (sniff.YAML, "homework: cs224n-w21-a5\nanswers:\n  1b: x\n"),
    (sniff.YAML, "# a comment\n'homework' : x\n"),
    (sniff.YAML, '"homework":\tx'),
    (sniff.HEADING, "intro\n## Answer 1b\nC k_a\n"),
    (sniff.HEADING, "   ###### answer 2d: text"),
    (sniff.HEADING, '{"source": ["## Answer 1b\\n", "C k_a"]}'),  # a notebook's JSON
    (sniff.HEADING, '"source": "# notes\\n## Answer 1b\\nq"'),
    (sniff.HEADING, "text\n```attngrade\n1b: x\n```\n"),
    (sniff.HEADING, "````  ATTNGRADE"),
    (sniff.LATEX, "\\attnhomework{cs224n-w21-a5}"),
    (sniff.LATEX, "\\answer{1b}{C k_a}"),
    (sniff.LATEX, "\\answer[V]{1e.ii}{I}"),
])
def test_what_holds_answers_is_seen(kind, text):
    assert sniff.looks_like(kind, text)


@pytest.mark.parametrize("kind, text", [
    (sniff.YAML, "answers:\n  1b: x\n"),  # no homework line: the file says nothing of its homework
    (sniff.YAML, "  homework: x\n"),  # indented: a key of something else
    (sniff.YAML, "my homework: x\n"),
    (sniff.YAML, "homework\n: x\n"),
    (sniff.HEADING, "#### answers are below"),  # "answers" is not "answer <id>"
    (sniff.HEADING, "####### Answer 1b"),  # seven hashes: no heading
    (sniff.HEADING, "    ## Answer 1b"),  # four spaces: code, not a heading
    (sniff.HEADING, "##Answer 1b"),
    (sniff.HEADING, "## Answer \n1b"),
    (sniff.HEADING, "text ## Answer 1b"),
    (sniff.HEADING, "``attngrade"),
    (sniff.HEADING, "`" * 10_000),
    (sniff.LATEX, "\\answers{1b}{x}"),
    (sniff.LATEX, "\\answer_b"),
    (sniff.LATEX, "answer{1b}{x}"),
])
def test_what_holds_no_answers_is_not(kind, text):
    assert not sniff.looks_like(kind, text)


def test_real_files_are_told_apart(root, tmp_path):
    assert looks_like_answers(root / "examples" / "cs224n-w21-a5" / "seed-000.yaml")
    assert looks_like_answers(NOTEBOOKS / "saved-by-jupyter.ipynb")
    notes = tmp_path / "notes.md"
    notes.write_text("`" * 300_000)
    start = time.process_time()
    assert not looks_like_answers(notes)
    assert time.process_time() - start < SECONDS_PER_MEGABYTE
