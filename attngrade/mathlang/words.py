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
# Words that deny some of what follows and not the rest ("nothing is required beyond matching
# dimensions"): which way the answer goes is for a person to read.
_PARTLY_DENYING = {"nobody", "nothing", "none", "hardly", "barely", "except", "unless"}
# After a phrase: `encoder is wrong`, `encoder is not right`, `queries are not it` deny it.
_DENIED_AFTER = {"wrong", "incorrect", "false", "not", "never", "isnt", "nope"}
# Words that join two assertions: "not only X but Y", "X, but also Y", "X as well as Y".
_BOTH = ("not only", "as well as", "but also", "and also")


def _negated(words: list[str], at: int, end: int | None = None) -> bool:
    """The phrase at `at` is denied in its clause: after a negation (`not the queries`, `rather than X`),
    or (given where it `end`s, for an option's phrase) followed by one (`queries is wrong`). `not only X`
    asserts X."""
    clause: list[str] = []
    for w in reversed(words[:at]):  # back to the clause's start (the text is bounded: MAX_TEXT)
        if w in (STOP, "but"):
            break
        clause.append(w)
    clause.reverse()
    if _PARTLY_DENYING & set(clause):
        raise Unclear("a word before it denies part of what it says")
    pairs = list(zip(clause, clause[1:]))
    rather = sum(pair in (("rather", "than"), ("instead", "of")) for pair in pairs)
    if sum(w in _NEGATORS for w in clause) + rather > 1 and clause[-2:] != ["not", "only"]:
        raise Unclear("it denies twice")  # "not ... not possible", "neither X nor Y": not sure which way
    window = clause[-3:]
    if window[-2:] == ["not", "only"]:
        return False
    denied = [i for i, w in enumerate(clause) if w in _NEGATORS]
    if denied and any(w in ("or", "and") for w in clause[denied[-1] + 1:]):
        raise Unclear("which words its 'not' denies is not clear")  # "not X or Y", "it is not X and Y"
    if bool(_NEGATORS & set(window)) or rather:
        return True
    if denied:
        raise Unclear("a 'not' earlier in its clause may deny it")  # "it is not true that they can differ"
    if end is None:
        return False
    after: list[str] = []
    for w in words[end:][:3]:
        if w == STOP:
            break
        after.append(w)
    return bool(_DENIED_AFTER & set(after))


def _hits(words: list[str], options: Mapping[str, Sequence[str]], names: bool = True) -> list[tuple[int, int, str]]:
    """Where each option's phrases (its name too, with `names`) stand in `words`: (start, end, option)."""
    found = []
    for option, synonyms in options.items():
        for phrase in {*([str(option)] if names else []), *map(str, synonyms)}:
            p = tokens(phrase)
            if not p or STOP in p:
                continue
            single = len(p) == 1 and len(p[0]) == 1
            # a single letter or digit ("I", "0") names an option only where it ends a clause or a member of a
            # list ("uniform or I", "I and uniform"); elsewhere it is a word of the sentence ("I think ...")
            found += [(i, i + len(p), option) for i in range(len(words) - len(p) + 1) if words[i:i + len(p)] == p
                      and (not single or i + 1 == len(words) or words[i + 1] in (STOP, "and", "or", "nor", "but"))]
    # a phrase inside a longer one of another option does not count: "encoder" in "encoder decoder"
    return [h for h in found if not any(o[2] != h[2] and o[0] <= h[0] and h[1] <= o[1] and o[1] - o[0] > h[1] - h[0]
                                        for o in found)]


def _code(text: str) -> bool:
    """Text that reads as a program (a call, a quoted string), not as words: never an option."""
    return CODE.search(text) is not None


def _asserts_both(words: list[str]) -> bool:
    joined = " ".join(words)
    return any(f" {both} " in f" {joined} " for both in _BOTH)


def choose(text: str, options: Mapping[str, Sequence[str]]) -> str | None:
    """The one option `text` names in words; None when it names none (and denies none).

    Exactly one option must be asserted: one that is also denied ("encoder, not encoder"), two that
    are asserted ("X or Y", "not only X but Y", "X, but also Y") or only denied ones are `Unclear`."""
    if len(text) > MAX_TEXT or _code(text):
        return None
    words = tokens(text)
    named, negated = [], []
    for start, end, option in sorted(_hits(words, options)):
        (negated if _negated(words, start, end) else named).append(option)
    named = list(dict.fromkeys(named))
    if (named or negated) and _HEDGES & set(words):
        raise Unclear("it hedges (" + ", ".join(sorted(_HEDGES & set(words))) + ")")
    both = [option for option in named if option in negated]
    if both:
        raise Unclear(f"it says {both[0]} and denies it")
    if len(named) == 1 and not (_asserts_both(words) and negated):
        return named[0]
    if named:
        raise Unclear(f"it names {_listed(list(dict.fromkeys(named + negated)))}")
    if negated:
        raise Unclear(f"it only says what the answer is not ({_listed(list(dict.fromkeys(negated)))})")
    return None


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# -- a yes or no -----------------------------------------------------------------------------
_YES = {"yes", "yeah", "yep", "yup", "true", "correct", "possible", "feasible", "useful", "helpful", "required",
        "necessary", "necessarily", "needed", "valid", "beneficial", "able"}
_NO = {"no", "nope", "false", "incorrect", "wrong", "impossible", "infeasible", "useless", "unhelpful",
       "pointless", "unnecessary", "unneeded", "optional", "invalid", "unable"}
_ANSWER_WORDS = {"yes", "yeah", "yep", "yup", "no", "nope"}
_HEDGES = {"maybe", "perhaps", "depends", "sometimes", "partially", "partly", "possibly", "unsure", "unless",
           "otherwise"}
# Words that judge a statement: said of someone or something else ("the second student is wrong"),
# they answer only where the part names that referent (its options' synonyms); else a person reads.
_VERDICTS = {"right", "wrong", "correct", "incorrect", "true", "false", "valid", "invalid"}
_SAID_OF_THE_ANSWER = {"it", "this", "that", "statement", "claim", "answer", "so", "is", "s"}
# A clause that is only a verb: "it can", "they must not", "it does not".
_MODAL = re.compile(r"(?:(?:it|they|this|that|he|she|we|you|one)\s)?(?:can|could|must|does|do|did|will|would|"
                    r"should|is|are|was|were|has|have|need|needs)(?:\snot)?(?:\s(?:be|to))?")


def _cues(words: list[str], taken: set[int] = frozenset()) -> list[int]:
    """+1 for each word that answers yes, -1 for each that answers no, negations applied; `no` answers only
    at the start of a clause (in "it has no labels" it is a negation). Positions in `taken` were read as a
    part's own phrase already."""
    cues = []
    for i, w in enumerate(words):
        if i in taken or (w not in _YES and w not in _NO):
            continue
        if w == "no" and not _answer_word(words, i):
            continue
        if w in _VERDICTS and _of_a_referent(words, i):
            raise Unclear(f"it says someone or something is {w}, and this part does not say what that means")
        sign = 1 if w in _YES else -1
        if _negated(words, i):
            if w in _ANSWER_WORDS:
                raise Unclear(f"it denies its own answer ('{w}')")  # "not no", "not yes"
            sign = -sign
        cues.append(sign)
    if not cues and not taken and _MODAL.fullmatch(" ".join(words)):
        cues.append(-1 if "not" in words else 1)
    return cues


def _answer_word(words: list[str], at: int) -> bool:
    """`no` answers at the start or end of a clause or after a conjunction (`yes or no`, `the answer is no`);
    before a noun it negates (`it has no labels`)."""
    before = words[at - 1] if at > 0 else STOP
    after = words[at + 1] if at + 1 < len(words) else STOP
    return before in (STOP, "or", "and", "but", "then", "so", "is", "answer") or after == STOP


def _of_a_referent(words: list[str], at: int) -> bool:
    """`the second student is wrong`: a verdict on a named referent, not on the statement asked about."""
    before = [w for w in words[max(0, at - 4):at] if w != "not"]
    if not before or before[-1] not in ("is", "are", "was", "were"):
        return False
    subject = [w for w in before[:-1] if w != STOP][-1:] if len(before) > 1 else []
    return bool(subject) and subject[0] not in _SAID_OF_THE_ANSWER


def _phrases(words: list[str], options: Mapping[str, Sequence[str]]) -> tuple[list[int], set[int]]:
    """Cues from a part's own phrases for yes and no (options `yes:` and `no:` of a bool field), and the
    word positions they take."""
    cues, taken = [], set()
    # only the phrases: the bare answer words are read (with their own rules) by _cues
    for start, end, option in _hits(words, {k: v for k, v in options.items() if k in ("yes", "no")}, names=False):
        sign = 1 if option == "yes" else -1
        cues.append(-sign if _negated(words, start) else sign)  # a phrase is a clause: only a `not` before it
        if taken & set(range(start, end)):
            raise Unclear("two of its phrases run into each other")  # "I disagree with the student is wrong"
        taken.update(range(start, end))
    return cues, taken


def yes_no(text: str, options: Mapping[str, Sequence[str]] | None = None) -> bool | None:
    """True or False as the words answer, None when they answer neither way.

    The first clause's answer words decide ("No — it can't."), and nothing else in the answer may say the
    other way, hedge or judge someone else's claim the part does not name (`Unclear`)."""
    if len(text) > MAX_TEXT or _code(text):
        return None
    words = tokens(text)
    own, taken = _phrases(words, options or {})
    everywhere = own + _cues(words, taken)
    if not everywhere:
        return None
    if _HEDGES & set(words):
        raise Unclear("it hedges (" + ", ".join(sorted(_HEDGES & set(words))) + ")")
    if len(set(everywhere)) > 1:
        raise Unclear("it says both yes and no")
    return everywhere[0] > 0


# -- a number with annotations, a shape with a remark ----------------------------------------
MAX_NUMBER_TEXT = 200  # characters of a number field: a count, its share and a few words around them
# A count: 9, 9.0 (a program's float); `9 out of 500`, `9 right of 500`, `9.0 out of 500.0`
_COUNT = r"\d{1,12}(?:\.0{1,6})?"
_PIECE = re.compile(r"(?P<ratio>" + _COUNT + r"\s*/\s*" + _COUNT + r")"
                    r"|(?P<of>" + _COUNT + r"\s+(?:(?:right|correct|predictions?|correctly)\s+)?(?:out\s+of|of)\s+"
                    + _COUNT + r")"
                    r"|(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,3})?\s*%?)")
# Words that only say what a number is (`I got a 1.8% accuracy on the dev set`); none of them
# compares, negates or hedges (`not`, `less than`, `at least` are never fillers).
_FILLER = re.compile(r"(?i:[\s()\[\],;:=≈~]|\\approx|accuracy|acc|dev|test|set|on|the|is|was|about|approx\.?|"
                     r"approximately|roughly|around|i\.e\.|ie|correct|right|predictions?|questions?|examples?|lines?|"
                     r"which|equals?|that|gives?|or|i|got|get|gets|we|a|an|my|our|of|model|baseline|london|score|"
                     r"achieved?|achieves|obtained?|it|has|have|with|for|percentage|total|in|final|result|my)*")
# `correct:25.0, total:500.0` (a program's output): the count and the total, read as 25/500
_CORRECT_TOTAL = re.compile(r"(?i:correct)\s*:?\s*(\d{1,12})(?:\.0{1,6})?\s*[,;]?\s*(?i:total)\s*:?\s*"
                            r"(\d{1,12})(?:\.0{1,6})?")
_SPACING = re.compile(r"\\[,;:! ]|\\(?:q?quad|thinspace|enspace)(?![A-Za-z])|[~\u2009\u202f\u00a0$]")
_NUMBER_TEXT = re.compile(r"\\(?:text|textrm|mathrm|mbox)\s*\{([^{}]{0,200})\}")


def plain_number_text(text: str) -> str:
    """A number as written, without LaTeX around it: `1.8\\,\\%` is `1.8%`, `1.8 per cent` is `1.8%`,
    `\\text{Correct: 133.0 out of 500.0: } 26.6\\%` keeps its words, `correct:25.0, total:500.0` is 25/500."""
    text = _NUMBER_TEXT.sub(lambda m: f" {m.group(1)} ", text)
    text = _SPACING.sub(lambda m: "" if m.group(0) != "\\ " else " ", text).replace("\\%", "%")
    text = re.sub(r"(?i)\s*\bper\s*cent\b|\s*\bpercent\b", "%", text)
    return _CORRECT_TOTAL.sub(lambda m: f"{m.group(1)}/{m.group(2)}", text)



def numbers(text: str) -> list[str] | None:
    """The numbers of `12.0% (60/500)` in order (`60 out of 500` as 60/500), when the rest is only
    words and signs that annotate them; None otherwise."""
    pieces, last = [], 0
    for m in _PIECE.finditer(text):
        if not _FILLER.fullmatch(text[last:m.start()]):
            return None
        piece = m.group(0).strip()
        if m.group("of"):
            k, n = re.findall(r"\d+(?:\.\d+)?", piece)
            piece = f"{k}/{n}"
        pieces.append(piece)
        last = m.end()
    return pieces if pieces and _FILLER.fullmatch(text[last:]) else None


_SIZE = r"[A-Za-z0-9]+(?:_\{?[A-Za-z0-9]+\}?)?"
_BY = r"\s*(?:-\s*by\s*-|\bby\b|\\times|×|\bx\b|\*|,)\s*"
# `H \\in \\mathbb{R}^{t \\times n}`, `H is in $\\mathbb{R}^{t \\times n}$`: the sentence around a shape
_SHAPE = re.compile(r"\s*\$?\s*(?P<said>[A-Za-z]\s*(?:\\in|∈|(?i:is\s+in|lies\s+in|is\s+an?\s+element\s+of))\s*\$?\s*)?"
                    r"(?:\\mathbb\s*\{\s*R\s*\}|ℝ|R)?\s*\^?\s*[({\[]?\s*"
                    r"(?P<rows>" + _SIZE + r")" + _BY + r"(?P<cols>" + _SIZE + r")\s*[)}\]]?\s*\$?")
_MORE = re.compile(r"(?:×|\\times|\*|x\b|by\b|-\s*by|[A-Za-z0-9_]{1,2}\b)")


def shape(text: str) -> str | None:
    """`t-by-n (one column per query)` as `t × n`; None when the text is not a shape followed by a
    remark (a shape written alone is left as written)."""
    m = _SHAPE.match(text)
    if m is None:
        return None
    rest = text[m.end():].strip()
    if not rest and "-" not in m.group(0) and not (m.group("said") and re.search(r"[a-z]{2}\s", m.group("said"))):
        return None  # a shape written alone is left as written; `H is in ...` is read
    if rest and _MORE.match(rest):
        return None  # `t x n x m`: more sizes than these two, not a remark
    return f"{m.group('rows')} × {m.group('cols')}"
