"""Answers written in words: a choice, a yes or no, a number with its annotations, a shape.

A choice is read by the words it contains: the option whose words (or synonyms) it names,
when it names exactly one and no other; a negated option ("not the queries") is not named.
A yes/no is read by the answer words of its first clause ("No — it can't."), else of the
whole answer, with negations read as negations ("not required" is no). Answers that name
two options, or say both yes and no, are `Unclear`: a person should read them.

Everything here is linear in the (already bounded) text.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

MAX_TEXT = 400  # characters of a choice read by its words; a longer text is an explanation


class Unclear(Exception):
    """The words name more than one answer, or only say what the answer is not."""


_SPELLINGS = [
    (re.compile(r"\\(?:text|mathrm|textrm|mbox)\s*\{([^{}]*)\}"), r" \1 "),
    (re.compile(r"\\(?:left|right)\b|\\[,;:! ]|\$"), " "),
    (re.compile(r"\\beta\b|β"), " beta "),
    (re.compile(r"\\infty\b|∞"), " infinity "),
    (re.compile(r"\\(?:to|rightarrow|longrightarrow)\b|->|→|⟶"), " → "),
    (re.compile(r"\\gg\b|>>|≫"), " ≫ "),
    (re.compile(r"\\ll\b|<<|≪"), " ≪ "),
    (re.compile(r"[’‘`´]"), "'"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"\bcan't\b"), "can not"),
    (re.compile(r"n't\b"), " not"),
]
# A dash between spaces ends a clause ("No — it can't"); inside a word it joins ("encoder–decoder").
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[→≫≪]|[.,;:!?()]|(?<=\s)[-\u2013\u2014](?=\s)")
STOP = "|"  # a clause boundary among the tokens


# A name called with a quoted or empty argument, or brackets around quotes (`run('x')`, `f()`): code, not words.
CODE = re.compile(r"\w\s*\(\s*['\"\)]|[\[{]\s*['\"]")


def tokens(text: str) -> list[str]:
    """Lower-case words and arrows; punctuation and dashes between words become clause boundaries."""
    text = text.lower()
    for pattern, replacement in _SPELLINGS:
        text = pattern.sub(replacement, text)
    return [t if t[0].isalnum() or t in "→≫≪" else STOP for t in _TOKEN.findall(text)]


# -- a choice --------------------------------------------------------------------------------
_NEGATORS = {"not", "never", "no", "neither", "nor", "non", "without"}


def _negated(words: list[str], at: int) -> bool:
    """The phrase at `at` follows a negation in its clause (`not the queries`, `rather than X`)."""
    window: list[str] = []
    for w in reversed(words[max(0, at - 3):at]):
        if w in (STOP, "but"):
            break
        window.insert(0, w)
    return bool(_NEGATORS & set(window)) or window[-2:] in (["rather", "than"], ["instead", "of"])


def _hits(words: list[str], options: Mapping[str, Sequence[str]]) -> list[tuple[int, int, str]]:
    found = []
    for option, synonyms in options.items():
        for phrase in {str(option), *map(str, synonyms)}:
            p = tokens(phrase)
            if not p or STOP in p or (len(p) == 1 and len(p[0]) == 1):
                continue  # a single letter or digit ("I", "0") names an option only as the whole answer
            found += [(i, i + len(p), option) for i in range(len(words) - len(p) + 1) if words[i:i + len(p)] == p]
    # a phrase inside a longer one of another option does not count: "encoder" in "encoder decoder"
    return [h for h in found if not any(o[2] != h[2] and o[0] <= h[0] and h[1] <= o[1] and o[1] - o[0] > h[1] - h[0]
                                        for o in found)]


def _code(text: str) -> bool:
    """Text that reads as a program (a call, a quoted string), not as words: never an option."""
    return CODE.search(text) is not None


def choose(text: str, options: Mapping[str, Sequence[str]]) -> str | None:
    """The one option `text` names in words; None when it names none (and negates none)."""
    if len(text) > MAX_TEXT or _code(text):
        return None
    words = tokens(text)
    named, negated = [], []
    for start, _, option in sorted(_hits(words, options)):
        (negated if _negated(words, start) else named).append(option)
    named = list(dict.fromkeys(named))
    if len(named) == 1:
        return named[0]
    if named:
        raise Unclear(f"it names {_listed(named)}")
    if negated:
        raise Unclear(f"it only says what the answer is not ({_listed(list(dict.fromkeys(negated)))})")
    return None


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# -- a yes or no -----------------------------------------------------------------------------
_YES = {"yes", "yeah", "yep", "yup", "true", "correct", "possible", "feasible", "useful", "helpful", "required",
        "necessary", "necessarily", "needed", "valid", "beneficial"}
_NO = {"no", "nope", "false", "incorrect", "wrong", "impossible", "infeasible", "useless", "unhelpful",
       "pointless", "unnecessary", "unneeded", "optional", "invalid"}
_HEDGES = {"maybe", "perhaps", "depends", "sometimes", "partially", "partly", "possibly", "unsure"}
# A clause that is only a verb: "it can", "they must not", "it does not".
_MODAL = re.compile(r"(?:(?:it|they|this|that|he|she|we|you|one)\s)?(?:can|could|must|does|do|did|will|would|"
                    r"should|is|are|was|were|has|have|need|needs)(?:\snot)?(?:\s(?:be|to))?")


def _cues(words: list[str]) -> list[int]:
    """+1 for each word that answers yes, -1 for each that answers no, negations applied."""
    cues = []
    for i, w in enumerate(words):
        if w not in _YES and w not in _NO:
            continue
        sign = 1 if w in _YES else -1
        if w != "no" and _negated(words, i):
            sign = -sign
        cues.append(sign)
    if not cues and _MODAL.fullmatch(" ".join(words)):
        cues.append(-1 if "not" in words else 1)
    return cues


def yes_no(text: str) -> bool | None:
    """True or False as the words answer, None when they answer neither way."""
    if len(text) > MAX_TEXT or _code(text):
        return None
    words = tokens(text)
    clauses = " ".join(words).split(STOP)
    for scope in (clauses[0].split(), [w for w in words if w != STOP]):
        cues = _cues(scope)
        if not cues:
            continue
        if _HEDGES & set(scope):
            raise Unclear("it hedges (" + ", ".join(sorted(_HEDGES & set(scope))) + ")")
        if len(set(cues)) > 1:
            raise Unclear("it says both yes and no")
        return cues[0] > 0
    return None


# -- a number with annotations, a shape with a remark ----------------------------------------
_PIECE = re.compile(r"(?P<ratio>\d{1,12}\s*/\s*\d{1,12})|(?P<of>\d{1,12}\s+(?:out\s+of|of)\s+\d{1,12})"
                    r"|(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,3})?\s*%?)")
_FILLER = re.compile(r"(?i:[\s()\[\],;:=≈~]|\\approx|accuracy|acc|dev|test|set|on|the|is|was|about|approx\.?|"
                     r"approximately|roughly|around|i\.e\.|ie|correct|right|predictions?|questions?|examples?|lines?|"
                     r"which|equals?|that|gives?|or)*")


def numbers(text: str) -> list[str] | None:
    """The numbers of `12.0% (60/500)` in order (`60 out of 500` as 60/500), when the rest is only
    words and signs that annotate them; None otherwise."""
    pieces, last = [], 0
    for m in _PIECE.finditer(text):
        if not _FILLER.fullmatch(text[last:m.start()]):
            return None
        piece = m.group(0).strip()
        if m.group("of"):
            k, n = re.findall(r"\d+", piece)
            piece = f"{k}/{n}"
        pieces.append(piece)
        last = m.end()
    return pieces if pieces and _FILLER.fullmatch(text[last:]) else None


_SIZE = r"[A-Za-z0-9]+(?:_\{?[A-Za-z0-9]+\}?)?"
_BY = r"\s*(?:-\s*by\s*-|\bby\b|\\times|×|\bx\b|\*|,)\s*"
_SHAPE = re.compile(r"\s*\$?\s*(?:[A-Za-z]\s*(?:\\in|∈)\s*)?(?:\\mathbb\s*\{\s*R\s*\}|ℝ|R)?\s*\^?\s*[({\[]?\s*"
                    r"(" + _SIZE + r")" + _BY + r"(" + _SIZE + r")\s*[)}\]]?\s*\$?")
_MORE = re.compile(r"(?:×|\\times|\*|x\b|by\b|-\s*by|[A-Za-z0-9_]{1,2}\b)")


def shape(text: str) -> str | None:
    """`t-by-n (one column per query)` as `t × n`; None when the text is not a shape followed by a
    remark (a shape written alone is left as written)."""
    m = _SHAPE.match(text)
    if m is None:
        return None
    rest = text[m.end():].strip()
    if not rest and "-" not in m.group(0):
        return None
    if rest and _MORE.match(rest):
        return None  # `t x n x m`: more sizes than these two, not a remark
    return f"{m.group(1)} × {m.group(2)}"
