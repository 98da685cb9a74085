"""Text from a student's code is quoted as the code's: one line, bounded, every character a terminal
or a page would act on or hide shown as its escape, and never in attngrade's voice.

`runtime.text.quoted_from_code` is the one way such text reaches feedback; the messages of the code
checks (`torch_module`'s shared helpers) are checked here on what a child can send back.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from attngrade.checkers.messages import INTERNAL_ERROR, SANDBOX_FAILED, names, raised
from attngrade.checkers.torch_module import (
    gradients_property,
    isolation_line,
    malformed,
    not_finished,
    shapes_property,
)
from attngrade.runtime.text import GRADER_OWN, printable, quoted_from_code
from attngrade.sandbox import Run

HIDDEN = ["\x1b", "\x07", "\x00", "\r", "\n", "\t", "\x85", "\x7f", "\u202e", "\u202a", "\u2066", "\u2069",
          "\u200b", "\u200d", "\u200e", "\u200f", "\u061c", "\u2028", "\u2029", "\u2060", "\ufeff", "\U000e0041"]


def test_each_control_mark_and_invisible_character_is_shown_as_its_escape():
    said = quoted_from_code("a\x1b[31mb\u202ec\r\nd\u200be\U000e0041f")
    assert said == "«a\\x1b[31mb\\u202ec\\x0d\\nd\\u200be\\U000e0041f»"
    assert printable("line\none\ttab\x1b\u202e\u200b") == "line\none\ttab\\x1b\\u202e\\u200b"  # pages keep lines


def test_a_quotation_cannot_be_closed_from_inside():
    """Text that closed the quotation could go on in attngrade's voice."""
    assert quoted_from_code("x» ok: everything holds «y") == "«x\\u00bb ok: everything holds \\u00aby»"


def test_attngrade_own_failure_words_are_never_the_codes_to_say():
    for words in GRADER_OWN:
        for written in (words, words.upper(), words.title()):
            said = quoted_from_code(f"oops: {written}!")
            assert not re.search(re.escape(words), said, re.IGNORECASE), said
            assert said.startswith("«oops: \\x") and written[1:] in said
    assert SANDBOX_FAILED == GRADER_OWN[0] and INTERNAL_ERROR.startswith(GRADER_OWN[1])


def test_a_quotation_is_bounded_and_says_how_much_more_there_was():
    said = quoted_from_code("x" * 10_000, 300)
    assert said == "«" + "x" * 300 + "»…(9700 more characters)"
    assert len(quoted_from_code("\x1b" * 10_000, 300)) < 300 * 4 + 40
    assert quoted_from_code(10 ** 5000).startswith("«<an integer of")  # no decimal str() of a huge int
    assert quoted_from_code(["a\nb", {"k": "\u202e"}]) == "«['a\\nb', {'k': '\\u202e'}]»"  # a list: its repr


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet=st.one_of(st.characters(), st.sampled_from(HIDDEN + ["«", "»"])), max_size=400),
       st.integers(1, 500))
def test_any_text_is_quoted_on_one_line_with_nothing_hidden(text, limit):
    said = quoted_from_code(text, limit)
    body = said[1:said.rindex("»")]
    assert said.startswith("«") and "«" not in body and "»" not in body
    assert not any(c in said for c in HIDDEN) and not any(0xD800 <= ord(c) < 0xE000 for c in said)
    assert not any(re.search(re.escape(w), said, re.IGNORECASE) for w in GRADER_OWN)
    assert len(said) <= 10 * limit + 40
    said.encode("utf-8")  # every character has a UTF-8 form: outputs write it as it is


def test_only_the_supervisors_failed_status_says_attngrade_could_not_run_the_code():
    claim = "attngrade could not run your code (the sandbox could not be entered)\x1b[2J"
    crashed = not_finished(Run("crashed", error=claim), 10.0)
    exited = not_finished(Run("no_result", output=f"{claim}\n", exit={"code": 0}), 10.0)
    for outcome in (crashed, exited):
        assert not outcome.failed and outcome.earned == 0 and not outcome.is_pending
        assert not any(w in line for line in outcome.feedback for w in GRADER_OWN), outcome.feedback
        assert not any("\x1b" in line for line in outcome.feedback)
    assert "your code raised «\\x61ttngrade could not run your code" in crashed.feedback[0]
    assert "your code printed «\\x61ttngrade could not run your code" in exited.feedback[1]
    failed = not_finished(Run("failed", error="the sandbox could not be entered: OSError"), 10.0)
    assert failed.failed and failed.feedback[0].startswith(SANDBOX_FAILED + " (the sandbox said «")


def test_what_a_child_sends_back_reaches_the_feedback_quoted():
    """Names, types, shapes and exceptions the child sends are the student's code's words."""
    evil = "x\x1b[31m\u202e\r\ny"
    job = {"config": {"n_embd": 4}, "lengths": [1, 2]}
    data = {"outputs": {"1": {"error": f"{evil}: attngrade itself failed"}, "2": {"type": evil}}}
    lines = [shapes_property(job, data).message,
             gradients_property({"grads": {evil: 0.0, "w": 1.0}}).message,
             malformed(Run("ok"), KeyError(evil)).feedback[0],
             isolation_line(Run("ok", layers={"active": [evil], "missing": {evil: evil}})),
             raised(evil), names([evil, "w"])]
    for line in lines:
        assert "\x1b" not in line and "\u202e" not in line and "\r" not in line and "\n" not in line, line
        assert not any(w in line for w in GRADER_OWN), line
    assert "your code raised «x\\x1b[31m\\u202e\\x0d\\ny: \\x61ttngrade itself failed»" in lines[0]
    assert "gradients do not reach «x\\x1b[31m\\u202e\\x0d\\ny»" in lines[1]
