"""What frames an answer rather than being it: conditions after it and definitions in front.

`C(k_a + k_b), C \\to \\infty` ends in a condition on the student's constant; `q = C(k_a + k_b)`
starts with the name of what is answered; `V = \\frac{1}{\\beta^2}(...) = \\beta^{-2}...` is a chain
of equalities whose members must all mean the same. These functions find those pieces in the
text (already free of sizing and spacing macros); the parser reads and compares them.

Every search here is bounded: conditions are looked for only near the end of the text, and
no pattern nests one unbounded repetition inside another.
"""

from __future__ import annotations

import re
from typing import Callable

from .rewrite import Rewritten, apply_edits

CONDITION_TAIL = 160  # characters: a condition is short
MAX_CONDITIONS = 4  # `, C \to \infty, \beta \gg 1`: each is taken off the end in turn

# -- conditions after the answer -----------------------------------------------------------
_WRAPPED = re.compile(r"\\(?:text|textrm|textit|textnormal|mathrm|mbox)\s*\{([^{}]*)\}")
# `C`, `C_1`, `\\lambda`, and the decorated constants the reader takes as their letter (`\\hat{c}`, `C^*`)
_SUBJECT = (r"(?:\\(?:hat|tilde|bar|widehat|widetilde|overline)\s*\{\s*[A-Za-z]\s*\}|\\[A-Za-z]+"
            r"|[A-Za-z\u0391-\u03a9\u03b1-\u03c9])(?:_\{?\\?[A-Za-z0-9]{1,8}\}?)?"
            r"(?:\^\s*(?:\*|\\ast|\\star|\{\s*(?:\*|\\ast|\\star|\\otimes|\\dagger)\s*\}))?")
_POSITIVE = r"(?:\s*(?:>|\\gt|\\geq?|≥)\s*0)?"  # `C > 0 is large`: said of a constant that is large anyway
_TO = r"(?:\\to|\\rightarrow|\\longrightarrow|->)"
_LARGE = (r"(?:" + _TO + r"|\\uparrow)\s*\+?\s*\\infty|(?:\\gg|>>)\s*[01]"
          r"|(?i:(?:is\s+)?(?:a\s+)?(?:(?:very|sufficiently|arbitrarily|really)\s+)?(?:large|big|huge)"
          r"(?:\s+(?:enough|constant|number|scalar))?)"
          # 其中 A 为一较大常数, β 是一个较大的正数标量: the write-ups in Chinese we have read
          r"|(?:为|是)\s*(?:一个?)?\s*(?:很|较|足够|非常)?\s*大的?\s*(?:正数标量|正数|常数|正常数|标量|数)?")
_SMALL = (r"(?:" + _TO + r"|\\downarrow|\\searrow)\s*0\s*(?:\^\s*\{?\s*\+\s*\}?|\+)?|(?:\\ll|<<)\s*1"
          r"|(?i:(?:is\s+)?(?:a\s+)?(?:(?:very|sufficiently|arbitrarily)\s+)?(?:small|tiny)"
          r"(?:\s+(?:enough|constant|number|scalar))?)")
_INTRO = r"(?:(?i:(?:where|for|with|as|when|if|and)\s+(?:(?:some|a|any|all)\s+)?)|(?:其中|这里)\s*)?"
_CONDITION = re.compile(
    r"[,;，；]?\s*(?:\(\s*)?" + _INTRO +
    r"(?:(?P<subject>" + _SUBJECT + r")" + _POSITIVE + r"\s*(?:(?P<large>" + _LARGE + r")|(?P<small>" + _SMALL + r"))"
    r"|(?i:(?:(?:very|sufficiently)\s+)?(?:(?P<large_first>large|big)|(?P<small_first>small|tiny))\s+"
    r"(?:constant\s+)?)(?P<named>" + _SUBJECT + r"))"
    r"\s*\)?\s*[.。]?")
_SEPARATORS = re.compile(r"^(?:[\s,;~，；$]|\\quad|\\qquad|\\[ ,;:!])+")


def _depths(text: str) -> list[int]:
    """The bracket depth before each character (and at the end)."""
    out, depth = [], 0
    for ch in text:
        out.append(depth)
        if ch in "([{":
            depth += 1
        elif ch in ")]}" and depth > 0:
            depth -= 1
    out.append(depth)
    return out


def _cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


def _words(text: str) -> str:
    """The text as a sentence: `\\text{where } C \\text{ is large}` is `where C is large`."""
    text = _WRAPPED.sub(lambda m: f" {m.group(1)} ", text).replace("$", " ")
    return " ".join(text.split())


# A condition holds one of these (a quick test that spares most answers the search below).
_MARKS = re.compile(r"\\to(?![A-Za-z])|rightarrow|->|\\gg|>>|\\uparrow|\\downarrow|\\searrow|\\ll(?![A-Za-z])|<<"
                    r"|large|big|huge|small|tiny|大", re.IGNORECASE)
_SIGNS = ("=", "\\approx", "≈", "\\equiv", "≡", "\\simeq", "≃", "\\coloneq", "\\triangleq")


def _last_condition(text: str) -> tuple[int, re.Match] | None:
    """The leftmost place after which the rest of the text is one condition, if any."""
    end = len(text.rstrip())
    if not _MARKS.search(text, max(0, end - CONDITION_TAIL), end):
        return None
    depths = _depths(text)
    for p in range(max(1, end - CONDITION_TAIL), end):
        ch = text[p]
        boundary = (ch in ",;(\\，；" or (ch.isspace() and not text[p - 1].isspace())
                    or (_cjk(ch) and not _cjk(text[p - 1])))
        if not boundary or depths[p] != 0 or not text[:p].strip():
            continue
        words = _words(text[p:end])
        m = _CONDITION.fullmatch(words)
        if m and ("(" in words) == (")" in words):  # one bracket of a pair is no condition of its own
            return p, m
    return None


def is_condition(text: str) -> bool:
    """Whether `text` (words after an answer, `$` signs and all) is one condition on a constant."""
    words = _words(text)
    return len(words) <= CONDITION_TAIL and _CONDITION.fullmatch(words) is not None


def take_conditions(out: Rewritten, original: str) -> None:
    """Take conditions off the end of the answer, recording what each says of which constant."""
    for _ in range(MAX_CONDITIONS):
        found = _last_condition(out.text)
        if found is None:
            break
        p, m = found
        subject = m.group("subject") or m.group("named")
        size = "large" if m.group("large") or m.group("large_first") else "small"
        last = len(out.text.rstrip()) - 1
        shown = _SEPARATORS.sub("", original[out.where(p):out.where(last) + 1]).strip()
        out.conditions.insert(0, (subject, size, shown, out.where(p), out.where(last) + 1))
        apply_edits(out, [(p, len(out.text), "")])
        _drop_final_period(out)
    large = [shown for _, size, shown, _, _ in out.conditions if size == "large"]
    if large:
        out.note(f"read '{', '.join(large)}' as saying your constant is large (the check lets it grow)")


# `m(2T - 1) \text{ parameters}`, `O(N^2 d) time`: words after the answer that name its unit
_TRAILING_WORDS = re.compile(r"(?:\s*\\(?:text|textrm|mbox|mathrm)\s*\{\s*([A-Za-z][A-Za-z .,'-]{2,60})\}"
                             r"|((?:\s+[A-Za-z]{4,20}){1,4}))\s*\.?\s*$")


def take_trailing_words(out: Rewritten, original: str, known: Callable[[str], bool], spelled: frozenset) -> None:
    """Take off words after the answer that name no symbol of the part (a unit, a remark)."""
    end = len(out.text.rstrip())
    m = _TRAILING_WORDS.search(out.text, max(0, end - CONDITION_TAIL))
    if m is None or not out.text[:m.start()].strip():
        return
    words = re.findall(r"[A-Za-z]+", m.group(1) or m.group(2))
    if any(known(w) or w.lower() in spelled for w in words):
        return  # `\text{softmax}` or `beta` at the end is part of the answer
    shown = original[out.where(m.start()):out.where(end - 1) + 1].strip()
    apply_edits(out, [(m.start(), len(out.text), "")])
    out.note(f"read the answer without the words '{shown}' after it")


def _drop_final_period(out: Rewritten) -> None:
    stripped = out.text.rstrip()
    if stripped.endswith(".") and not stripped.endswith(".."):
        apply_edits(out, [(len(stripped) - 1, len(out.text), "")])


def drop_final_period(out: Rewritten) -> None:
    """A sentence's final period (`q = C(k_a + k_b).`) is punctuation, not part of the answer."""
    _drop_final_period(out)


# -- definitions in front and chains of equalities ------------------------------------------
_RELATION = re.compile(r":=|\\coloneqq?(?![A-Za-z])|\\(?:triangleq|equiv|approx|simeq)(?![A-Za-z])|[≈≃≡]"
                       r"|(?<![<>!=:\\])=(?!=)")
_BRACED = r"\{[^{}=]*(?:\{[^{}=]*\}[^{}=]*)*\}"
_HEAD = (r"(?:\\(?:mathbf|boldsymbol|bm|vec|hat|tilde|bar|widehat|widetilde|overline|mathrm|mathit|mathsf"
         r"|mathcal|text|operatorname)\s*\{\s*\\?[A-Za-z]+\s*\}|\\[A-Za-z]+|[A-Za-z\u0391-\u03a9\u03b1-\u03c9]+[0-9]*)")
# A subscript may run on (students write q_ij); a superscript is one character or a group (`x^Tx` is x^T x).
_SCRIPTS = r"(?:\s*(?:_\s*(?:" + _BRACED + r"|\\?[A-Za-z0-9]+)|\^\s*(?:" + _BRACED + r"|\\[A-Za-z]+|[A-Za-z0-9*])|'))"
_NAME_LHS = _HEAD + _SCRIPTS + r"{0,6}"
NAME = re.compile(r"\s*" + _NAME_LHS + r"\s*")
_APPLICATION = re.compile(r"\s*(?P<head>" + _NAME_LHS + r")\s*\(\s*" + _NAME_LHS +
                          r"(?:\s*,\s*" + _NAME_LHS + r"){0,7}\s*\)\s*")
_ORDER = re.compile(r"O|\\Theta|\\Omega|Θ|Ω")  # O(M^2) = O(M^2 d) is a chain of orders, not a definition
_PLAIN = re.compile(r"\\(?:mathbf|boldsymbol|bm|vec|mathrm|mathit|mathsf|mathcal|text|operatorname)\s*\{\s*(\\?[A-Za-z]+)\s*\}")


def _members(text: str) -> list[tuple[int, int, int]]:
    """(start, end, end of the relation sign after it) of each member of `a = b = c`, at depth 0."""
    depths = _depths(text)
    members, start = [], 0
    for m in _RELATION.finditer(text):
        if depths[m.start()] == 0:
            members.append((start, m.start(), m.end()))
            start = m.end()
    members.append((start, len(text), len(text)))
    return members


def is_name(text: str) -> bool:
    """A name with sub- and superscripts or primes (`\\alpha_{i,j}`, `H'`, `\\mathbf{q}_1`)."""
    return NAME.fullmatch(text) is not None


def _is_label(text: str, known: Callable[[str], bool], names: tuple[str, ...]) -> bool:
    """What stands before the first `=` only names the answer: a name, the field's own name, or
    `f(x, y)` where f is no declared symbol or function (`m(2T - 1)` is a product)."""
    if is_name(text) or text.strip().lower() in names:
        return True
    m = _APPLICATION.fullmatch(text)
    if m is None:
        return False
    head = _PLAIN.sub(lambda h: h.group(1), m.group("head")).strip()
    return not known(head) and not _ORDER.fullmatch(head)


def _field_label(out: Rewritten, names: tuple[str, ...]) -> tuple[int, int] | None:
    """`encoder: O(M k^2)`: the field's own name and a colon in front."""
    for name in names:
        m = re.match(r"\s*" + re.escape(name) + r"\s*:(?!=)", out.text, re.IGNORECASE)
        if m and out.text[m.end():].strip():
            return m.start(), m.end()
    return None


def take_definitions(out: Rewritten, original: str, known: Callable[[str], bool],
                     names: tuple[str, ...] = ()) -> None:
    """Set aside a definition in front and the other members of a chain; the last member is the answer."""
    names = tuple(n.lower() for n in names if n)
    colon = _field_label(out, names)
    if colon is not None:
        out.labels.append((out.where(colon[0]), out.where(colon[1]), out.text[colon[0]:colon[1]]))
        out.note(f"read the answer after '{original[out.where(colon[0]):out.where(colon[1])].strip()}'")
        apply_edits(out, [(0, colon[1], "")])
    if not any(sign in out.text for sign in _SIGNS):
        return
    members = _members(out.text)
    if len(members) < 2 or not out.text[members[-1][0]:].strip():
        return
    first = out.text[members[0][0]:members[0][1]]
    label = _is_label(first, known, names)
    others = members[1:-1] if label else members[:-1]
    if label:
        start, end, sign = members[0]
        out.labels.append((out.where(start), out.where(end), first))
    for start, end, _ in others:
        out.chain.append((out.where(start), out.where(end), out.text[start:end]))
    signs = [out.text[end:sign] for _, end, sign in members[:-1]]
    out.approximate = any(s.strip() in ("\\approx", "≈", "\\simeq", "≃") for s in signs)
    if label and not others:
        out.note(f"read the answer after '{original[:out.where(members[0][2])].strip()}'")
    else:
        out.note(f"read the last member of the chain '{original.strip()}'")
    last = members[-1][0]
    apply_edits(out, [(0, last + len(out.text[last:]) - len(out.text[last:].lstrip()), "")])
