"""Math inside prose: the formula of a sentence, read when the words around it add nothing.

Students answer in sentences: `Set $q = \\lambda(\\mu_a + \\mu_b)$ for a large $\\lambda$.`,
`\\text{So } c_2 = x_1`, `$O(N^3)$ operations in total`. The formula is read when
what stands before it only introduces it (`so`, `set`, `the answer is`, a numbering such as
`(1)`), and what stands after it is a condition on a constant (taken off by frame.py) or a
remark that asserts nothing the part asks for (`(by the softmax weights 0, 1, 0)`). Words that
could change the answer (a negation, a second option, a hedge, arithmetic in words, a size) are
never dropped: the answer then stays unreadable and goes to course staff.

Every scan here is linear in the (already bounded) text.
"""

from __future__ import annotations

import re
from typing import Callable

from ..errors import MathError
from .rewrite import Rewritten, apply_edits

# Words that say something about the answer itself: never dropped as framing.
ASSERTING = frozenset({"not", "no", "never", "none", "nor", "neither", "either", "or", "maybe", "perhaps",
                       "possibly", "probably", "unless", "if", "except", "but", "however", "although", "though",
                       "wrong", "incorrect", "false", "instead", "rather", "alternatively", "otherwise", "unsure",
                       "guess", "without", "only", "unless", "almost", "nearly"})
# Arithmetic in words: dropped only when nothing it could apply to (a number, a symbol) follows it.
ARITHMETIC = frozenset({"plus", "minus", "times", "over", "divided", "multiplied", "squared", "cubed", "square",
                        "root", "half", "twice", "double", "triple", "inverse", "reciprocal", "negative", "power",
                        "transpose", "transposed", "sum", "product", "exp", "log", "sqrt", "more", "less", "fewer"})
# Words that say how large something is, or how it grows: never dropped in front of a formula.
SIZES = frozenset({"small", "tiny", "zero", "large", "big", "huge", "infinite", "infinity", "vanishing", "linear",
                   "quadratic", "cubic", "constant", "exponential", "logarithmic", "polynomial", "order", "scale",
                   "scaled", "scaling", "normalized", "unit", "per", "each", "every", "all"})
# Words after which a formula is what the sentence concludes.
CONNECTORS = frozenset({"so", "thus", "hence", "therefore", "then", "set", "let", "take", "choose", "pick", "use",
                        "answer", "is", "are", "equals", "be", "get", "gives", "becomes", "have", "obtain", "yields",
                        "finally", "result", "written", "write", "as"})
# Numbering in front of an answer: (1), 1., a), (ii)
_NUMBERING = re.compile(r"\s*(?:\(\s*(?:\d{1,2}|[a-z]|[ivx]{1,4})\s*\)|(?:\d{1,2}|[a-z])[.)])(?=\s)")
_WORD = re.compile(r"[A-Za-z]+|\d+(?:\.\d+)?")
_TEXT = re.compile(r"\\(?:text|textrm|textit|textbf|textnormal|mbox|mathrm)\s*\{([^{}$]{0,300})\}")


def words_of(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(_TEXT.sub(lambda m: f" {m.group(1)} ", text))]


def adds_nothing(text: str, known: Callable[[str], bool], leading: bool = False) -> bool:
    """Whether `text` (words around a formula) only frames it: no word that asserts, hedges or
    names a second option; no arithmetic in words applied to a number or a symbol; in front of
    the formula, no word of size or growth, and digits only before a connector (`of 3, so`)."""
    words = words_of(text)
    if ASSERTING & set(words) or (leading and SIZES & set(words)):
        return False
    for i, word in enumerate(words):
        if word in ARITHMETIC:
            if leading or any(w[0].isdigit() or known(w) for w in words[i + 1:i + 3]):
                return False
    if leading and any(w[0].isdigit() for w in words) and (not words or words[-1] not in CONNECTORS):
        return False
    return True


def _segments(text: str) -> list[tuple[int, int, int, int]] | None:
    """(opening start, math start, math end, closing end) of each `$...$`, `$$...$$`, `\\(...\\)`,
    `\\[...\\]`; None when a delimiter is left open."""
    found, i, n = [], 0, len(text)
    while i < n:
        opener = _opener(text, i)
        if opener is None:
            i += 1
            continue
        closer = {"$$": "$$", "$": "$", "\\(": "\\)", "\\[": "\\]"}[opener]
        close = _find_closer(text, i + len(opener), closer)
        if close is None:
            return None
        found.append((i, i + len(opener), close, close + len(closer)))
        i = close + len(closer)
    return found


def _opener(text: str, i: int) -> str | None:
    if text.startswith("$$", i):
        return "$$"
    if text[i] == "$" and (i == 0 or text[i - 1] != "\\"):
        return "$"
    if text.startswith("\\(", i) or text.startswith("\\[", i):
        return text[i:i + 2] if i == 0 or text[i - 1] != "\\" else None
    return None


def _find_closer(text: str, start: int, closer: str) -> int | None:
    at = start
    while True:
        at = text.find(closer, at)
        if at == -1:
            return None
        if closer == "$" and text.startswith("$$", at) and not text.startswith("$$", start - 1):
            return at  # `$a$$b$`: the first `$` closes
        if at == 0 or text[at - 1] != "\\" or closer != "$":
            return at
        at += 1


def take_inline_math(out: Rewritten, known: Callable[[str], bool], is_condition: Callable[[str], bool]) -> None:
    """The first formula of a sentence as the answer: the words before it only introduce it; after it,
    a condition on a constant stays (frame.py takes it off), a remark that adds nothing goes (a note
    says so), and anything else is an error for course staff."""
    text = out.text
    segments = _segments(text) if "$" in text or "\\(" in text or "\\[" in text else None
    if not segments:
        return
    first = segments[0]
    before = text[:first[0]]
    numbering = _NUMBERING.match(before)
    if _MATHLIKE.search(before[numbering.end():] if numbering else before):
        # `C(k_a + k_b), where $C$ is large`: the formula is before the `$`
        apply_edits(out, [(a, b, " ") for s in segments for a, b in ((s[0], s[1]), (s[2], s[3]))])
        return
    if before.strip() and not _introduces(before, known):
        raise MathError("this answer is a sentence with math in it, and the words before the formula may change "
                        "what it says; write only the formula (course staff will read this one)", 0, first[0])
    edits = [(0, first[1], " ")] if before.strip() or first[1] else []
    edits.append((first[2], first[3], " "))
    after = text[first[3]:]
    if len(segments) == 1 and after.strip() and not is_condition(after):
        if not adds_nothing(after, known):
            raise MathError(f"the words after your formula ('{after.strip()[:60]}') may change what it says; "
                            "write only the formula (course staff will read this one)", first[3], len(text))
        edits.append((first[3], len(text), ""))
        out.note(f"read the formula without the words '{after.strip()}' after it")
    else:
        edits += [(a, b, " ") for s in segments[1:] for a, b in ((s[0], s[1]), (s[2], s[3]))]
    if before.strip():
        out.note(f"read the formula after '{before.strip()}'")
    apply_edits(out, sorted(edits))


_MATHLIKE = re.compile(r"[\\_^=(){}+*/]|\d\s*[A-Za-z]|[A-Za-z]\d")


def _introduces(before: str, known: Callable[[str], bool]) -> bool:
    """Words in front of a formula that only introduce it: a numbering, or framing words."""
    numbering = _NUMBERING.match(before)
    words = before[numbering.end():] if numbering else before
    words = words.strip().rstrip(":,").strip()
    return not words or (adds_nothing(words, known, leading=True) and all(ch.isalnum() or ch in " ,.:'-" for ch in
                                                                          words))


# A sentence's opening words before a formula written without `$` (`\text{So } c_2 = ...`, `Set q = ...`).
_LEADING_TEXT = re.compile(r"\s*\\(?:text|textrm|textit|textnormal|mbox|mathrm)\s*\{([^{}$]{1,200})\}")
_LEADING_WORDS = re.compile(r"\s*((?:[A-Za-z]{2,20}[,:]?\s+){1,6})")


def take_leading_words(out: Rewritten, known: Callable[[str], bool], spelled: frozenset) -> None:
    """Words before a formula: in `\\text{...}` they are prose whatever they say, unless they may change
    the answer; bare, they must end in a connector (`So`, `Set`, `we get`) and name no symbol."""
    m = _LEADING_TEXT.match(out.text)
    if m is not None:
        rest = out.text[m.end():].lstrip()
        if not rest or rest[0] in "_^({[" or " " not in m.group(1) and not m.group(1).rstrip().endswith((":", ",")):
            return  # `\text{sim}_{softmax}(q, k)` is a name, not words
        if not adds_nothing(m.group(1), known, leading=True):
            return
        end = m.end()
    else:
        m = _LEADING_WORDS.match(out.text)
        if m is None or not out.text[m.end():].strip():
            return
        words = words_of(m.group(1))
        if any(known(w) or w in spelled for w in re.findall(r"[A-Za-z]+", m.group(1))) or words[-1] not in CONNECTORS:
            return
        if not adds_nothing(m.group(1), known, leading=True):
            return
        end = m.end()
    shown = out.original[out.where(0):out.where(end)].strip()
    apply_edits(out, [(0, end, "")])
    out.note(f"read the formula after '{shown}'")


# A remark after the answer: `\text{ (k heads plus the residual)}`, `(by the softmax weights 0, 1, 0)`.
_REMARK_TEXT = re.compile(r"\s*\\(?:text|textrm|textit|textnormal|mbox)\s*\{\s*(\([^{}$()]{1,200}\))\s*\}\s*\.?\s*$")
_REMARK_PAREN = re.compile(r"\s*\(\s*([a-z]{2,20}(?:[\s,;:.'-]+[A-Za-z0-9]{1,20}){1,25})\s*[.,]?\s*\)\s*\.?\s*$")
# How a remark in brackets opens: `(by the softmax weights 0, 1, 0)`, `(since x_2 = u_a)` (never a symbol)
_OPENERS = frozenset({"by", "since", "because", "as", "from", "using", "via", "see", "which", "where", "here", "note",
                      "namely", "ie", "eg", "i", "we", "this", "the", "with", "for"})


def take_remark(out: Rewritten, known: Callable[[str], bool]) -> None:
    """A remark after the answer that adds nothing the part asks for: in `\\text{...}`, or in brackets
    opening with a word that names no symbol."""
    end = len(out.text)
    if not out.text.rstrip().rstrip(".").endswith((")", "}")):
        return  # a remark ends with its bracket
    m = _REMARK_TEXT.search(out.text, max(0, end - 240))
    if m is None:
        m = _REMARK_PAREN.search(out.text, max(0, end - 240))
        if m is None or m.group(1).split()[0].strip(",;:.") not in _OPENERS:
            return
        if any(known(w) for w in re.findall(r"[A-Za-z]+", m.group(1))):
            return
    if not out.text[:m.start()].strip() or not adds_nothing(m.group(1), known):
        return
    shown = out.original[out.where(m.start()):out.where(end - 1) + 1].strip()
    apply_edits(out, [(m.start(), end, "")])
    out.note(f"read the formula without the remark '{shown}' after it")


# `linear in the sequence length N`: an order of growth said in words, in one symbol of the part.
_GROWTH = re.compile(r"\s*(?:(?:it|this|the\s+cost)\s+(?:is|grows)\s+)?(?P<how>linear|quadratic|cubic)(?:ly)?\s+"
                     r"(?:in|with)\s+(?P<words>(?:[A-Za-z'-]{1,20}\s+){0,6}?)\$?\s*(?P<name>[A-Za-z](?:_\{?[A-Za-z]{1,12}\}?)?)"
                     r"\s*\$?\s*\.?\s*")
_POWERS = {"linear": "", "quadratic": "^2", "cubic": "^3"}


def take_growth_words(out: Rewritten, known: Callable[[str], bool]) -> None:
    """`linear in the sequence length N` as O(N) (a note says so), when the words name one symbol of the
    part and nothing that could change the order."""
    m = _GROWTH.fullmatch(out.text)
    if m is None or not known(m.group("name")) or not adds_nothing(m.group("words"), known, leading=True):
        return
    if any(known(w) for w in m.group("words").split()):
        return  # two symbols named: which one the order is in is not sure
    order = f"O({m.group('name')}{_POWERS[m.group('how')]})"
    apply_edits(out, [(0, len(out.text), order)])
    out.note(f"read '{out.original.strip()}' as {order}")
