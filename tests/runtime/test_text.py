"""`printable`: what a terminal, spreadsheet or page would act on or hide is shown as its escape."""

from __future__ import annotations

import sys

from attngrade.runtime.text import printable


def test_every_character_printable_escapes_is_one_python_calls_unprintable():
    # printable keeps text Python calls printable as it is, untranslated: that is only right if no
    # character it escapes is printable
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if printable(char) != char:
            assert not char.isprintable(), hex(code)


def test_controls_bidi_and_invisible_marks_become_escapes_and_the_rest_stays():
    assert printable("a\u202eb\u200bc\x1b[31m") == "a\\u202eb\\u200bc\\x1b[31m"
    assert printable("line one\nline two\tend") == "line one\nline two\tend"
    assert printable("Łukasz 张伟 ≈ √dₖ") == "Łukasz 张伟 ≈ √dₖ"
