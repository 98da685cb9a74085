"""Spellings students write that mean something our grammar already reads, rewritten first.

Each rule is a small, general pattern (not a list of answers): typesetting wrappers
around a name (`\\text{pos}`, `\\mathrm{Gauss}`, `\\mathcal{K}`), a decorated constant
(`\\hat{c}`, `\\tilde{C}`, `C^*`), a leading `q =` naming what is answered, `\\Theta(...)`
where an order of growth is asked, and tight runs of names (`u_bu_b^\\top`, `x^Tx`,
`Ck_a`). Every rewrite keeps a map back to the original text, so an error still points
at the character the student wrote, and each one that changes the meaning a reader
might see adds a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

_NAME = r"[A-Za-z][A-Za-z0-9]*"
_GREEK = r"\\(?:alpha|beta|gamma|delta|epsilon|lambda|mu|sigma|tau|theta|omega)"
_SCRIPT = r"(?:\^\{[A-Za-z0-9 ]*\}|\^[A-Za-z0-9])?"  # a power; a subscripted name may be a vector
_FACTOR = r"(?:\d+(?:\.\d+)?(?![\d.])|(?:" + _GREEK + r"(?![A-Za-z])|[A-Za-z]+(?![A-Za-z]))" + _SCRIPT + r")"  # a number, a Greek letter, a word


@dataclass
class Rewritten:
    text: str
    origin: list[int]  # origin[i]: where character i of `text` came from in the original (one extra at the end)
    notes: list[str] = field(default_factory=list)
    chain: list[tuple[int, int, str]] = field(default_factory=list)  # the other members of `a = b = answer`

    def where(self, position: int) -> int:
        """A position in `text` as a position in the original."""
        return self.origin[max(0, min(position, len(self.origin) - 1))]


Rule = tuple[re.Pattern, Callable[[re.Match], str], Callable[[re.Match], str | None]]

_RULES: list[Rule] = [
    # \text{pos}, \mathrm{Gauss}, \operatorname{softmax}, \mathcal{K}: the name inside
    (re.compile(r"\\(?:text|textrm|textit|mathrm|mathit|mathsf|operatorname|mathcal)\s*\{\s*(" + _NAME + r")\s*\}"),
     lambda m: m.group(1), lambda m: None),
    # \hat{c}, \tilde{C}, \bar{c}: a decorated letter is that letter (a constant of the student's)
    (re.compile(r"\\(?:hat|tilde|bar|widehat|widetilde|overline)\s*\{\s*([A-Za-z])\s*\}"),
     lambda m: m.group(1), lambda m: f"read {m.group(0)} as {m.group(1)}"),
    # C^*, C^{*}: a starred letter, likewise
    (re.compile(r"(?<![A-Za-z\\])([A-Za-z])\^(?:\{\s*\*\s*\}|\*)"),
     lambda m: m.group(1), lambda m: f"read {m.group(0)} as {m.group(1)}"),
    # Python and Unicode spellings: A @ B, A.T, Aᵀ, x², x**2
    (re.compile(r"(?<=[A-Za-z0-9)\]}'])\s*@\s*(?=[A-Za-z0-9(\[\\])"), lambda m: " ",
     lambda m: "read @ as a matrix product"),
    (re.compile(r"(?<=[A-Za-z0-9)\]}])\.T(?![A-Za-z0-9_])"), lambda m: "^T", lambda m: "read .T as ^T (a transpose)"),
    (re.compile(r"ᵀ"), lambda m: "^T", lambda m: "read ᵀ as ^T (a transpose)"),
    (re.compile(r"[²³]"), lambda m: "^" + {"²": "2", "³": "3"}[m.group(0)], lambda m: f"read {m.group(0)} as a power"),
    (re.compile(r"\*\*"), lambda m: "^", lambda m: "read ** as ^ (a power)"),
    # \Theta(...) and \Omega(...) where an order is asked: read as O(...)
    (re.compile(r"\\(Theta|Omega)\s*(?=\()|[ΘΩ](?=\s*\()"),
     lambda m: "O", lambda m: f"read {m.group(0).strip()}(...) as O(...): the question asks for an order of growth"),
    # \|x\|_2, \|x\|^2_2: the Euclidean norm is the norm already
    (re.compile(r"(\\rVert|\\right\\\||\\\||\|\||‖)\s*(\^\s*(?:\{\s*2\s*\}|2))?\s*_\s*(?:\{\s*2\s*\}|2)"),
     lambda m: m.group(1) + (m.group(2) or ""), lambda m: None),
    # I_d, I_n, I_{d}: the identity of that size
    (re.compile(r"(?<![A-Za-z\\])I_\{?\s*[A-Za-z0-9]\s*\}?(?![A-Za-z0-9_])"),
     lambda m: "I", lambda m: f"read {m.group(0)} as the identity I"),
    # x \in \mathbb{R}^{m \times p} after a value: the shape it states is not part of the value
    (re.compile(r"\s*\\in\s*\\mathbb\s*\{\s*R\s*\}\s*\^\s*\{[^{}]*\}\s*$"),
     lambda m: "", lambda m: None),
    # a/2\sigma^2 is a/(2 sigma^2): juxtaposition binds tighter than a slash, as in the homeworks
    (re.compile(r"/\s*(" + _FACTOR + r"(?:" + _FACTOR + r")+)(?![A-Za-z0-9_{(\\])"),
     lambda m: f"/({m.group(1)})", lambda m: f"read /{m.group(1).strip()} as /({m.group(1).strip()})"),
    # tight runs: u_bu_b (two subscripted names), x^Tx and u^\top v (a transpose, then a name)
    (re.compile(r"(?<![A-Za-z\\])([A-Za-z]_[A-Za-z0-9])(?=[A-Za-z]_[A-Za-z0-9])"),
     lambda m: m.group(1) + " ", lambda m: None),
    (re.compile(r"(\^(?:T|\\top|\{T\}|\{\\top\}))(?=[A-Za-z])"),
     lambda m: m.group(1) + " ", lambda m: None),
    # Ck_a: a single capital juxtaposed with a subscripted name, as a constant times it
    (re.compile(r"(?<![A-Za-z\\_])([A-Z])(?=[a-z]_[A-Za-z0-9])"),
     lambda m: m.group(1) + " ", lambda m: None),
]

# `q =`, `\mathbf{q}_1 =`, `H \approx`, `c_2 :=` at the start: the name of what is answered
_LEAD = re.compile(r"^\s*(?:\\(?:mathbf|boldsymbol|vec|bm)\s*\{\s*" + _NAME + r"\s*\}|" + _NAME + r")"
                   r"(?:_\{?\s*[A-Za-z0-9]+\s*\}?)?(?:\^\{?\s*\(?[A-Za-z]+\)?\s*\}?)?"
                   r"\s*(?:=|:=|\\coloneqq|\\approx|≈)\s*")


# `, \quad \text{where } \beta \gg 0`, `,\ t \gg 0` or `, C \to \infty` after the answer: a
# condition saying the student's constant is large, which the check assumes anyway. Only
# "large" conditions: `C \to 0` or `C > 0` would change the answer, so they stay and are read.
# No two whitespace runs touch (no backtracking blow-up), and only the end of the text is searched.
_CONDITION = re.compile(r"[,;]?(?:[ \t]|\\quad|\\qquad|\\[ ,;:]|~)*"
                        r"(?:(?:\\text\s*\{\s*(?:where|for|with)?\s*\}|\b(?:where|for|with)\b)[ \t]*)?"
                        r"(" + _GREEK + r"|[A-Za-z])(?:_\{?[A-Za-z0-9]+\}?)?[ \t]*"
                        r"(?:(?:\\gg|>>|≫)[ \t]*[01]|(?:\\to|\\rightarrow|→)[ \t]*(?:\\infty|∞))[ \t]*\.?$")
_CONDITION_TAIL = 120  # characters: a condition is short
_CHAIN = re.compile(r"(?:=|:=|\\coloneqq|\\approx|≈)")


def rewrite(text: str) -> Rewritten:
    out = Rewritten(text, list(range(len(text) + 1)))
    end = len(out.text.rstrip())
    condition = _CONDITION.search(out.text, max(0, end - _CONDITION_TAIL), end)
    if condition and out.text[:condition.start()].strip():
        said = re.sub(r"^(?:[\s,;~]|\\quad|\\qquad|\\[ ,;:])+", "", condition.group(0)).strip()
        _apply(out, [(condition.start(), condition.end(), "")])
        out.notes.append(f"read '{said}' as saying your constant is large (the check lets it grow)")
    lead = _LEAD.match(out.text)
    if lead and out.text[lead.end():].strip():
        name = lead.group(0).strip()
        rest = out.text[lead.end():]
        *chain, last = _CHAIN.split(rest)
        if not chain:
            _apply(out, [(lead.start(), lead.end(), "")])
            out.notes.append(f"read the answer after '{name}'")
        elif last.strip() and "=" not in name[:-1]:
            # Only the last member is graded; the parser checks that the others read the same.
            at = lead.end()
            for member in chain:
                out.chain.append((out.where(at), out.where(at + len(member)), member))
                at += len(member)
                at += len(_CHAIN.match(out.text, at).group())
            cut = lead.end() + len(rest) - len(last)
            _apply(out, [(0, cut, "")])
            out.notes.append(f"read the last member of the chain '{text.strip()}'")
    for pattern, replace, note in _RULES:
        for _ in range(8):  # a run such as u_au_bu_c takes one pass per name
            edits = []
            for m in pattern.finditer(out.text):
                edits.append((m.start(), m.end(), replace(m)))
                said = note(m)
                if said and said not in out.notes:
                    out.notes.append(said)
            if not edits:
                break
            _apply(out, edits)
    return out


def _apply(out: Rewritten, edits: list[tuple[int, int, str]]) -> None:
    """Replace the spans (sorted, not overlapping) and carry the map back to the original."""
    text, origin = [], []
    last = 0
    for start, end, new in edits:
        text.append(out.text[last:start])
        origin.extend(out.origin[last:start])
        text.append(new)
        origin.extend([out.origin[start]] * len(new))
        last = end
    text.append(out.text[last:])
    origin.extend(out.origin[last:])
    out.text = "".join(text)
    out.origin = origin
