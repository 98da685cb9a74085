"""A student's own LaTeX macros: found anywhere in a submission, expanded in its answers.

Students write `\\newcommand{\\vk}{\\mathbf{k}}` in a preamble (or in a `$...$` line of a
notebook or Markdown file) and then answer `\\vk_a + \\vk_b`. The definitions are found in the
submission's text (`find_definitions`) and carried with its answers; the reader expands them
(`expand`) before anything else reads the answer, arguments and all.

pylatexenc reads the definitions and the macro calls (its parser knows `\\newcommand`'s
arguments); no pattern here nests one unbounded repetition inside another. Everything is
bounded: how many definitions a file gives, how long each is, how deep expansions nest and how
long the expanded answer may grow.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable, Iterator, NamedTuple

from ..errors import MathError

MAX_DEFINITIONS = 200  # per submission: a preamble holds tens
MAX_BODY = 400  # characters of one definition's body
MAX_PASSES = 8  # a macro that uses a macro that uses ...: nested this deep at most
MAX_CALLS = 400  # macro calls expanded in one answer, nested ones included
WINDOW = 1200  # characters read after `\newcommand` to find its arguments


class Definition(NamedTuple):
    """One macro: `\\name` with `params` arguments (the first optional, with `default`, if given)."""

    name: str  # without the backslash
    params: int
    default: str | None
    body: str


_DEFINING = re.compile(r"\\(newcommand|renewcommand|providecommand|DeclareMathOperator|def)(?![A-Za-z])")
_NAME = re.compile(r"\\([A-Za-z]+)")
# Commands a definition may not take over: those the reader itself reads (a student who renews
# \frac means something the reader cannot follow; the answer then goes to staff with the error).
_RESERVED = frozenset({"begin", "end", "left", "right", "frac", "sqrt", "newcommand", "renewcommand", "def",
                       "providecommand", "DeclareMathOperator", "text", "mathbf", "top", "sum"})


def find_definitions(text: str) -> tuple[Definition, ...]:
    """The macro definitions in `text` (a file's text, or an answer), in order; a later
    `\\renewcommand` or `\\def` of a name replaces the earlier one, `\\providecommand` never does."""
    found: dict[str, Definition] = {}
    for attempt, m in enumerate(_DEFINING.finditer(text)):
        if len(found) >= MAX_DEFINITIONS or attempt >= 2 * MAX_DEFINITIONS:
            break  # a file of thousands of `\newcommand` that define nothing costs no more than a preamble
        if _commented(text, m.start()):
            continue
        parsed = _definition(m.group(1), text[m.start():m.start() + WINDOW])
        if parsed is None:
            continue
        definition, _ = parsed
        if m.group(1) == "providecommand" and definition.name in found:
            continue
        found[definition.name] = definition
    return tuple(found.values())


def definition_spans(text: str) -> list[tuple[int, int]]:
    """Where definitions stand in `text` (an answer that defines a macro before using it)."""
    spans = []
    for attempt, m in enumerate(_DEFINING.finditer(text)):
        if attempt >= 2 * MAX_DEFINITIONS:
            break
        parsed = _definition(m.group(1), text[m.start():m.start() + WINDOW])
        if parsed is not None:
            spans.append((m.start(), m.start() + parsed[1]))
    return spans


def _commented(text: str, at: int) -> bool:
    """A `%` before `at` on its line that is not `\\%` makes the rest of the line a comment."""
    start = text.rfind("\n", 0, at) + 1
    i = text.find("%", start, at)  # searched in C: a definition may sit at the end of a very long line
    while i != -1:
        if i == start or text[i - 1] != "\\":
            return True
        i = text.find("%", i + 1, at)
    return False


# `\newcommand{\outer}[2][x]{...}`, `\renewcommand*\vk{...}`, `\DeclareMathOperator*{\sm}{softmax}`: the head of a
# definition, up to the brace that opens its body (scanned by brace matching, never by pylatexenc, whose
# tolerant parser backtracks exponentially over unclosed arguments).
_COMMAND = re.compile(r"\\(?:newcommand|renewcommand|providecommand)\*?\s*(?:\{\s*\\(?P<braced>[A-Za-z]+)\s*\}"
                      r"|\\(?P<bare>[A-Za-z]+))\s*(?:\[\s*(?P<count>\d)\s*\])?\s*(?:\[(?P<default>[^\[\]{}]{0,200})\])?\s*\{")
_OPERATOR = re.compile(r"\\DeclareMathOperator\*?\s*(?:\{\s*\\(?P<braced>[A-Za-z]+)\s*\}|\\(?P<bare>[A-Za-z]+))\s*\{")


def _definition(kind: str, window: str) -> tuple[Definition, int] | None:
    """One definition at the start of `window`, and how many characters it takes."""
    if kind == "def":
        return _tex_def(window)
    m = (_OPERATOR if kind == "DeclareMathOperator" else _COMMAND).match(window)
    if m is None:
        return None
    close = _closing_brace(window, m.end() - 1)
    if close is None:
        return None
    name, body = m.group("braced") or m.group("bare"), window[m.end():close]
    if kind == "DeclareMathOperator":
        made = Definition(name, 0, None, f"\\operatorname{{{body}}}")
    else:
        made = _made(name, m.group("count"), m.group("default"), body)
    if made is None or made.name in _RESERVED or len(made.body) > MAX_BODY:
        return None
    return made, close + 1


def _made(name: str | None, count: str | None, default: str | None, body: str | None) -> Definition | None:
    count = (count or "0").strip()
    if not name or body is None or not count.isdigit() or not 0 <= int(count) <= 9:
        return None
    if default is not None and int(count) == 0:
        return None
    return Definition(name, int(count), default, body)


_TEX_DEF = re.compile(r"\\def\s*\\([A-Za-z]+)\s*((?:#[1-9]){0,9})\s*\{")


def _tex_def(window: str) -> tuple[Definition, int] | None:
    """`\\def\\vk{\\mathbf{k}}`, `\\def\\outer#1#2{#1 #2^\\top}`: delimited parameters are not read."""
    m = _TEX_DEF.match(window)
    if m is None:
        return None
    close = _closing_brace(window, m.end() - 1)
    if close is None:
        return None
    params = len(m.group(2)) // 2
    if m.group(2) != "".join(f"#{i}" for i in range(1, params + 1)):
        return None
    made = Definition(m.group(1), params, None, window[m.end():close])
    if made.name in _RESERVED or len(made.body) > MAX_BODY:
        return None
    return made, close + 1


def _closing_brace(text: str, open_at: int, end: int | None = None) -> int | None:
    """The `}` that closes the `{` at `open_at`, braces inside paired, before `end`; None when none does."""
    depth = 0
    for i in range(open_at, len(text) if end is None else end):
        ch = text[i]
        if ch == "\\":
            continue
        if ch == "{" and (i == 0 or text[i - 1] != "\\"):
            depth += 1
        elif ch == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return i
    return None


def used(definitions: Iterable[Definition], text: str) -> tuple[Definition, ...]:
    """The definitions `text` calls, with those their bodies call in turn (in their order)."""
    by_name = {d.name: d for d in definitions}
    wanted: set[str] = set()
    todo = [text]
    while todo and len(wanted) < MAX_DEFINITIONS:
        for name in _NAME.findall(todo.pop()):
            if name in by_name and name not in wanted:
                wanted.add(name)
                todo.append(by_name[name].body)
    return tuple(d for d in by_name.values() if d.name in wanted)


# -- expansion -------------------------------------------------------------------------------


def expand(text: str, definitions: tuple[Definition, ...], max_length: int) -> list[tuple[int, int, str]]:
    """Edits (start, end, expansion) that replace each call of a defined macro in `text` by its
    expansion, arguments substituted and nested calls expanded too. Raises MathError when the
    expansions nest deeper than MAX_PASSES or grow past `max_length` characters."""
    definitions = used(definitions, text)
    if not definitions:
        return []
    edits, budget, by_name = [], [MAX_CALLS], _by_name(definitions)
    for start, end, name, args in _calls(text, definitions):
        expansion = _expanded(_substitute(by_name[name], args), definitions, max_length, 1, budget)
        if end < len(text) and text[end].isalpha() and re.search(r"\\[A-Za-z]+$", expansion):
            expansion += " "  # `\B x` with \B := \beta is `\beta x`, never `\betax`
        edits.append((start, end, expansion))
    grown = len(text) + sum(len(new) - (end - start) for start, end, new in edits)
    if grown > max_length:
        raise MathError(f"your macros expand this answer to {grown} characters; at most {max_length} are read", 0,
                        len(text))
    return edits


def _expanded(text: str, definitions: tuple[Definition, ...], max_length: int, depth: int,
              budget: list[int]) -> str:
    """`text` with every call expanded; `budget` counts down the calls one answer may expand."""
    budget[0] -= 1
    if budget[0] < 0:
        raise MathError(f"your macros make more than {MAX_CALLS} calls in this answer", 0, len(text))
    calls = _calls(text, definitions)
    if not calls:
        return text
    if depth >= MAX_PASSES:
        raise MathError(f"your macros call each other more than {MAX_PASSES} deep (does one call itself?)", 0,
                        len(text))
    pieces, last, by_name = [], 0, _by_name(definitions)
    for start, end, name, args in calls:
        pieces += [text[last:start], _expanded(_substitute(by_name[name], args), definitions, max_length,
                                               depth + 1, budget)]
        if end < len(text) and text[end].isalpha() and re.search(r"\\[A-Za-z]+$", pieces[-1]):
            pieces.append(" ")
        last = end
    out = "".join(pieces) + text[last:]
    if len(out) > max_length:
        raise MathError(f"your macros expand this answer to more than {max_length} characters", 0, len(text))
    return out


def _by_name(definitions: tuple[Definition, ...]) -> dict[str, Definition]:
    return {d.name: d for d in definitions}


def _substitute(definition: Definition, args: list[str | None]) -> str:
    """The body with #1, #2, ... replaced; an optional first argument left out is its default."""
    if definition.default is not None and args and args[0] is None:
        args = [definition.default, *args[1:]]
    filled = [a or "" for a in args]
    return re.sub(r"#([1-9])", lambda m: filled[int(m.group(1)) - 1] if int(m.group(1)) <= len(filled) else "",
                  definition.body)


MAX_NESTING = 40  # braces and brackets, as the parser's own limit


# Environments whose text LaTeX takes as it stands (code listings, comments): no brace in them counts.
VERBATIM = ("verbatim", "Verbatim", "lstlisting", "minted", "comment")
# TeX's conditionals (and e-TeX's): a command named \if... is one of these, or one a \newif or a \let makes;
# any other (`\iff`, etoolbox's `\iftoggle{...}{...}{...}`) is an ordinary command with no \fi.
CONDITIONALS = frozenset({"if", "ifcat", "ifnum", "ifdim", "ifodd", "ifvmode", "ifhmode", "ifmmode", "ifinner",
                          "ifvoid", "ifhbox", "ifvbox", "ifx", "ifeof", "iftrue", "iffalse", "ifcase",
                          "ifdefined", "ifcsname", "iffontchar", "ifincsname"})
# One token at a time, no repetition inside another: the start of text LaTeX does not pair braces in
# (`\verb|...|` and its kin, `\mintinline{lang}|...|`, `\url{...}`, a verbatim environment, what
# `\iffalse` skips, what follows `\end{document}`), an escaped character, a comment to the end of its
# line (as pylatexenc reads `%`), or a brace or bracket.
_TOKEN = re.compile(r"\\verb(?![A-Za-z])\*?[ \t]*(?P<verb>[^A-Za-z*\s])"
                    r"|\\(?:lstinline|Verb)(?![A-Za-z])\*?(?:\[[^\[\]\n]*\])?[ \t]*(?P<lst>[^A-Za-z*\s])"
                    r"|\\mintinline(?:\[[^\[\]\n]*\])?[ \t]*\{[^{}\n]*\}[ \t]*(?P<mint>[^A-Za-z*\s])"
                    r"|\\(?:url|path|href)[ \t]*(?P<url>\{)"
                    r"|\\begin[ \t]*\{(?P<env>(?:" + "|".join(VERBATIM) + r")\*?)\}"
                    r"|\\(?:let\s*\\(?P<let>[A-Za-z@]+)\s*(?:=\s*)?|newif\s*)\\(?P<made>[A-Za-z@]+)"  # (names, runs none)
                    r"|(?P<skip>\\iffalse)(?![A-Za-z])"
                    r"|(?P<end>\\end[ \t]*\{document\})"
                    r"|\\.|%[^\n]*|[{}\[\]]", re.S)
# Inside what a conditional skips, TeX still reads commands and comments: a nested \if... needs its \fi.
_SKIPPED = re.compile(r"\\([A-Za-z]+)|\\.|%[^\n]*", re.S)


class Verbatim(NamedTuple):
    """Text LaTeX takes as it stands, `start`..`end` of a text: a `\\verb`-like command with its text
    (`\\verb|{|`, `\\url{...}`), or a verbatim environment's body."""

    start: int
    end: int


def _scan(text: str, document: bool = False) -> Iterator[tuple[int, str] | Verbatim]:
    """The braces and brackets of `text` as pylatexenc sees them, and its verbatim spans. An escaped
    brace (`\\{`) is text, `%` starts a comment to the end of the line; `\\verb` and its kin end at
    their delimiter within the line (else at the line's end), an environment at its `\\end` (else at the
    end of the text). In a whole `document` (a LaTeX file, not an answer's text), what `\\iffalse`
    skips and what follows `\\end{document}` are verbatim too, where they stand outside braces (inside,
    they are a definition's text, not run). One pass: each search starts where the last one ended."""
    pos, depth, made = 0, 0, set(CONDITIONALS)
    while (match := _TOKEN.search(text, pos)) is not None:
        pos = match.end()
        if match.group("made"):  # \newif\ifdraft, \let\ifdraft\iffalse: a conditional from now on
            name = match.group("let") or match.group("made")
            if name.startswith("if"):
                made.add(name)
            continue
        if (match.group("skip") or match.group("end")) and (depth or not document):
            continue
        if match.group("verb") or match.group("lst") or match.group("mint") or match.group("url"):
            line = text.find("\n", pos)
            line = len(text) if line == -1 else line
            delimiter = match.group("verb") or match.group("lst") or match.group("mint") or "{"
            end = (_closing_brace(text, pos - 1, line) if delimiter == "{" else text.find(delimiter, pos, line))
            pos = line if end is None or end == -1 else end + 1
            yield Verbatim(match.start(), pos)
        elif match.group("env"):
            end = text.find("\\end{" + match.group("env") + "}", pos)
            pos = len(text) if end == -1 else end
            yield Verbatim(match.end(), pos)
        elif match.group("skip"):
            pos = _skipped_to(text, pos, made)
            yield Verbatim(match.end(), pos)
        elif match.group("end"):
            yield Verbatim(match.end(), len(text))  # LaTeX reads nothing after the document's end
            return
        elif len(match.group()) == 1 and match.group() in "{}[]":
            depth = depth + 1 if match.group() == "{" else max(0, depth - 1) if match.group() == "}" else depth
            yield match.start(), match.group()


def _skipped_to(text: str, pos: int, conditionals: set[str] | frozenset[str] = CONDITIONALS) -> int:
    """Where the text an `\\iffalse` skips from `pos` ends: at its own `\\else` or `\\fi` (the conditionals
    opened inside it counted), else at the end of the text."""
    depth = 0
    while (match := _SKIPPED.search(text, pos)) is not None:
        name = match.group(1) or ""
        if name in conditionals:
            depth += 1
        elif name in ("else", "fi") and depth == 0:
            return match.start()
        elif name == "fi":
            depth -= 1
        pos = match.end()
    return len(text)


def _delimiters(text: str) -> Iterator[tuple[int, str]]:
    """Each brace and bracket of `text` with its position, as pylatexenc sees them (see `_scan`)."""
    return (item for item in _scan(text) if not isinstance(item, Verbatim))


def walkable(text: str) -> bool:
    """Whether pylatexenc may read `text`: its braces and brackets nest properly (none left open, none
    closed by the other kind) and at most MAX_NESTING deep. Its tolerant parser backtracks over an argument
    left open, exponentially in how many are (`\\sqrt[\\sqrt[...`), so text that is not walkable is never
    given to it."""
    stack: list[str] = []
    for _, ch in _delimiters(text):
        if ch in "{[":
            stack.append(ch)
            if len(stack) > MAX_NESTING:
                return False
        elif not stack or stack.pop() != ("{" if ch == "}" else "["):
            return False
    return not stack


class Unpaired(NamedTuple):
    """Where a whole LaTeX file's braces and brackets do not pair: positions, in order; and its
    verbatim text, which neither pairs nor is read."""

    braces: tuple[int, ...]  # a `{` never closed or a `}` that closes nothing: LaTeX stops there too
    brackets: tuple[int, ...]  # a `[` or `]` without its partner in the same group: text to LaTeX
    verbatim: tuple[Verbatim, ...] = ()


def unpaired(text: str) -> Unpaired:
    """The braces and brackets of `text` that pair with nothing, and its verbatim spans, in one pass. A
    bracket pairs only inside its own brace group, as an optional argument does."""
    braces: list[int] = []
    brackets: list[int] = []
    verbatim: list[Verbatim] = []
    stack: list[tuple[int, str]] = []
    for item in _scan(text, document=True):
        if isinstance(item, Verbatim):
            verbatim.append(item)
            continue
        pos, ch = item
        if ch in "{[":
            stack.append((pos, ch))
        elif ch == "]":
            if stack and stack[-1][1] == "[":
                stack.pop()
            else:
                brackets.append(pos)
        else:
            while stack and stack[-1][1] == "[":
                brackets.append(stack.pop()[0])
            if stack:
                stack.pop()
            else:
                braces.append(pos)
    for pos, ch in stack:
        (brackets if ch == "[" else braces).append(pos)
    return Unpaired(tuple(sorted(braces)), tuple(sorted(brackets)), tuple(verbatim))


def _calls(text: str, definitions: tuple[Definition, ...]) -> list[tuple[int, int, str, list[str]]]:
    """Each call of a defined macro in `text`, outermost first: (start, end, name, its arguments)."""
    names = {d.name for d in definitions}
    if not any(re.search(r"\\" + name + r"(?![A-Za-z])", text) for name in names):
        return []
    if not walkable(text):
        raise MathError("your macros are called in text whose braces or brackets do not pair up; close each one",
                        0, len(text))
    from pylatexenc.latexwalker import LatexWalker, LatexWalkerError

    try:
        nodes, _, _ = LatexWalker(text, latex_context=_context(definitions), tolerant_parsing=True).get_latex_nodes()
    except (LatexWalkerError, RecursionError) as err:
        raise MathError(f"your macros could not be read ({type(err).__name__})", 0, len(text)) from None
    found: list[tuple[int, int, str, list[str]]] = []
    _collect(nodes, names, text, found)
    return sorted(found)


def _collect(nodes: Any, names: set[str], text: str, found: list) -> None:
    for node in nodes or []:
        if node is None:
            continue
        name = getattr(node, "macroname", None)
        args = list(getattr(getattr(node, "nodeargd", None), "argnlist", None) or [])
        if name in names:
            end = node.pos + node.len
            if not args and getattr(node, "macro_post_space", ""):
                end -= len(node.macro_post_space)  # the space after `\vk ` stays where it was
            found.append((node.pos, end, name, [_argument(text, a) for a in args]))
            continue
        _collect(getattr(node, "nodelist", None), names, text, found)
        _collect(args, names, text, found)


def _argument(text: str, arg: Any) -> str | None:
    if arg is None:
        return None
    written = text[arg.pos:arg.pos + arg.len]
    delimiters = getattr(arg, "delimiters", None)
    if delimiters and written.startswith(delimiters[0]) and written.endswith(delimiters[1]):
        return written[len(delimiters[0]):len(written) - len(delimiters[1])]
    return written


@lru_cache(maxsize=64)
def _context(definitions: tuple[Definition, ...]) -> Any:
    from pylatexenc.latexwalker import get_default_latex_context_db
    from pylatexenc.macrospec import MacroSpec

    db = get_default_latex_context_db()
    specs = [MacroSpec(d.name, ("[" + "{" * (d.params - 1)) if d.default is not None else "{" * d.params)
             for d in definitions]
    db.add_context_category("student-macros", prepend=True, macros=specs)
    return db
