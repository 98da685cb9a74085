"""LaTeX write-ups, read with pylatexenc's parser (never compiled, never by regex).

    \\attnhomework{cs224n-w21-a5}
    \\answer{1b}{2 k_c}                                     one-field part
    \\answer[V]{1e.ii}{I/\\beta^2}                           one field of a part
    \\begin{answertext}[why]{1e.i} ... \\end{answertext}    text

Comments are comments: an answer commented out is not an answer. `attngrade.sty`
(written by `grade assign --format tex`) defines the commands so the file compiles.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from ...errors import SubmissionError
from ...mathlang.macros import CONDITIONALS, find_definitions, unpaired
from ...records import Homework, Submission
from .answers import Collected, unwrap_math

MAX_LATEX_BYTES = 300_000


@lru_cache(maxsize=1)
def _context() -> Any:
    from pylatexenc.latexwalker import get_default_latex_context_db
    from pylatexenc.macrospec import EnvironmentSpec, MacroSpec

    db = get_default_latex_context_db()
    db.add_context_category("attngrade", prepend=True,
                            macros=[MacroSpec("answer", "[{{"), MacroSpec("attnhomework", "{")],
                            environments=[EnvironmentSpec("answertext", "[{")])
    return db


COMMENT_ENVIRONMENTS = ("comment",)  # the comment package's environment: not part of the document


# Conditionals whose branch is known: \iffalse and \iftrue, and a \newif's (false until set).
KNOWN_CONDITIONALS = {"iffalse": False, "iftrue": True}
# Commands whose next control sequences are names they define, not commands run (`\let\ifdraft\iffalse`).
NAMING = {"let": 2, "newif": 1, "def": 1, "gdef": 1, "edef": 1, "xdef": 1}


def _nodes(nodes: Any, flags: dict[str, bool] | None = None, unsure: tuple[str, ...] = ()
           ) -> Iterator[tuple[Any, tuple[str, ...]]]:
    """Every node, depth first, into other commands' arguments too, comments left out; each with the
    conditionals around it whose branch attngrade does not know (`\\ifdefined`, `\\ifnum`): their text
    is read as written. A conditional is one of TeX's (`macros.CONDITIONALS`) or one a `\\newif` or a
    `\\let` made; `\\iff` and etoolbox's `\\iftoggle` are ordinary commands. `flags`: each `\\newif`'s state (`\\newif\\ifdraft`, `\\drafttrue`), or a
    `\\let\\ifdraft\\iffalse`'s."""
    from pylatexenc.latexwalker import LatexCommentNode, LatexEnvironmentNode

    flags = {} if flags is None else flags
    # The conditionals open at this level: [name, its branch now skipped, its branch known]. A skipped
    # text's conditionals are counted too, so that a \fi closes its own, as TeX counts them.
    open_ifs: list[list[Any]] = []
    naming, named = 0, []  # control sequences still to come that a \let, \def or \newif names
    for node in nodes or []:
        name = getattr(node, "macroname", None) or ""
        skipped = any(skip for _, skip, _ in open_ifs)
        if naming and name and not skipped:
            naming -= 1
            named.append(name)
            if not naming:
                _define(named, flags)
            continue
        if name in CONDITIONALS or name.startswith("if") and name[2:] in flags:
            known = KNOWN_CONDITIONALS.get(name, flags.get(name[2:]))
            open_ifs.append([name, known is False, known is not None])
            continue
        if name == "else" and open_ifs:
            if open_ifs[-1][2]:
                open_ifs[-1][1] = not open_ifs[-1][1]
            continue
        if name == "fi" and open_ifs:
            open_ifs.pop()
            continue
        if skipped or node is None or isinstance(node, LatexCommentNode):
            continue
        if name in NAMING:
            naming, named = NAMING[name], [name]
            continue
        for state in ("true", "false"):
            if name.endswith(state) and name[:-len(state)] in flags:
                flags[name[:-len(state)]] = state == "true"
        if isinstance(node, LatexEnvironmentNode) and node.environmentname in COMMENT_ENVIRONMENTS:
            continue
        here = unsure + tuple(n for n, _, known in open_ifs if not known)
        yield node, here
        # A group or an environment is a group to TeX: a switch set inside it (\drafttrue) ends with it.
        yield from _nodes(getattr(node, "nodelist", None), dict(flags), here)
        if getattr(node, "macroname", None) not in ("answer", "attnhomework"):
            for arg in _args(node):
                yield from _nodes([arg] if arg is not None else [], dict(flags), here)


def _define(named: list[str], flags: dict[str, bool]) -> None:
    """What `\\newif\\ifdraft` (false) or `\\let\\ifdraft\\iffalse` (its branch) makes known."""
    command, *names = named
    if command == "newif" and names[0].startswith("if"):
        flags[names[0][2:]] = False
    elif command == "let" and names[0].startswith("if") and names[-1] in KNOWN_CONDITIONALS:
        flags[names[0][2:]] = KNOWN_CONDITIONALS[names[-1]]


def _inside(text: str, arg: Any) -> str:
    """The text of a {group} or [optional] argument, without its brackets or % comments."""
    from pylatexenc.latexwalker import LatexCommentNode

    if arg is None:
        return ""
    pieces, last = [], arg.pos + 1
    for child in getattr(arg, "nodelist", None) or []:
        if isinstance(child, LatexCommentNode):
            pieces.append(text[last:child.pos])
            last = child.pos + child.len
    pieces.append(text[last:arg.pos + arg.len - 1])
    return "".join(pieces).replace("\r\n", "\n").replace("\t", "    ")


def _braced(arg: Any) -> bool:
    from pylatexenc.latexwalker import LatexGroupNode

    return isinstance(arg, LatexGroupNode) and arg.delimiters[0] == "{"


def _args(node: Any) -> list:
    argd = getattr(node, "nodeargd", None)
    return list(getattr(argd, "argnlist", None) or [])


# Words without which a LaTeX file holds no answer and names no homework: a file without any is not
# parsed (pylatexenc takes seconds on a megabyte of one character), it is said to have no answers.
ANSWER_WORDS = ("\\answer", "\\attnhomework", "answertext")


def read_latex(path: Path, text: str, homework_for: Callable[[str | None], Homework]) -> Submission:
    from pylatexenc.latexwalker import LatexEnvironmentNode, LatexMacroNode, LatexWalker, LatexWalkerError

    if not any(word in text for word in ANSWER_WORDS):
        _no_answers(path, homework_for(None))
    # Strict: pylatexenc's tolerant mode retries every argument it could not close, doubling its time
    # with each (`\\frac{$}{$}` twenty times: minutes); a file LaTeX compiles parses strictly.
    walker = LatexWalker(_parse_copy(path, text), latex_context=_context(), tolerant_parsing=False)
    try:
        top, _, _ = walker.get_latex_nodes()
        found = list(_nodes(top))
    except LatexWalkerError as err:
        where = f"line {err.lineno}, column {err.colno + 1}: " if getattr(err, "lineno", None) else ""
        what = " ".join(str(getattr(err, "msg", None) or err).split())[:200]
        raise SubmissionError(f"{where}the LaTeX cannot be read here ({what}); LaTeX would stop there too: "
                              "compile the file to see, fix it and submit again", path=str(path)) from None
    except RecursionError:
        raise SubmissionError("the LaTeX nests too deeply to be read; write it more simply", path=str(path)) from None
    except (IndexError, ValueError, KeyError) as err:  # pylatexenc's own slips at the file's end (a bare \verb)
        raise SubmissionError(f"the LaTeX cannot be read ({type(err).__name__} in its parser); compile the file "
                              "to see, fix it and submit again", path=str(path)) from None
    nodes = [node for node, _ in found]
    named = list(dict.fromkeys(_inside(text, _args(n)[0]).strip() for n in nodes
                               if isinstance(n, LatexMacroNode) and n.macroname == "attnhomework" and _args(n)
                               and _args(n)[0] is not None))
    if len(named) > 1:
        raise SubmissionError(f"\\attnhomework names {len(named)} homeworks ({', '.join(repr(n[:60]) for n in named[:3])}); "
                              "keep the one line of the homework these answers are for and submit again", path=str(path))
    homework_id = named[0] if named else None
    homework = homework_for(homework_id or None)
    collected = Collected(homework)
    for node, unsure in found:
        line, column = walker.pos_to_lineno_colno(node.pos)
        place = f"line {line}, column {column + 1}"
        if unsure and (getattr(node, "macroname", None) == "answer"
                       or getattr(node, "environmentname", None) == "answertext"):
            collected.notes.append(f"{place}: this answer is inside \\{unsure[-1]} … \\fi, a condition attngrade "
                                   "does not evaluate, so it was read as written; if LaTeX leaves it out, take it "
                                   "out of the file and submit again")
        if isinstance(node, LatexMacroNode) and node.macroname == "answer":
            args = _args(node)
            if len(args) < 3 or not _braced(args[1]) or not _braced(args[2]):
                raise SubmissionError(f"{place}: write \\answer{{<part>}}{{<answer>}} or "
                                      "\\answer[<field>]{<part>}{<answer>}", path=str(path))
            _add(collected, _inside(text, args[1]).strip(), _inside(text, args[0]).strip(),
                 unwrap_math(_inside(text, args[2])).replace("\\%", "%"), place, text_field=False)
        elif isinstance(node, LatexEnvironmentNode) and node.environmentname == "answertext":
            args = _args(node)
            if len(args) < 2 or not _braced(args[1]):
                raise SubmissionError(f"{place}: write \\begin{{answertext}}[<field>]{{<part>}}", path=str(path))
            body = node.nodelist or []
            content = text[body[0].pos:body[-1].pos + body[-1].len].strip() if body else ""
            _add(collected, _inside(text, args[1]).strip(), _inside(text, args[0]).strip(), content, place,
                 text_field=True)
    collected.notes.extend(_after_the_end(walker, top, text))
    if not collected.blocks and not collected.invalid:
        _no_answers(path, homework)
    return Submission(student=path.stem, homework=homework.id, answers=collected.answers, path=path,
                      notes=tuple(collected.notes), invalid=dict(collected.invalid),
                      definitions=find_definitions(text))


def _parse_copy(path: Path, text: str) -> str:
    """`text` as the parser gets it. pylatexenc's tolerant parser backtracks over every argument left
    open, exponentially in how many are (`\\frac{\\frac{...`, `\\sqrt[\\sqrt[...`), so nothing is left
    open: a brace that pairs with nothing stops LaTeX too and is the student's to fix; a bracket that
    pairs with nothing is text to LaTeX (`[0, 1)`) and becomes a parenthesis here; verbatim text (a
    code listing, `\\verb|{|`, `\\url{...}`) is blanked, as LaTeX reads nothing in it. Positions do
    not move, so every answer is still cut from `text` itself."""
    braces, brackets, spans = unpaired(text)
    if braces:
        line = text.count("\n", 0, braces[0]) + 1
        column = braces[0] - (text.rfind("\n", 0, braces[0]) + 1) + 1
        what = "is never closed" if text[braces[0]] == "{" else "closes nothing"
        raise SubmissionError(f"line {line}, column {column}: this `{text[braces[0]]}` {what}, so LaTeX "
                              "would stop here too; pair every brace (compile the file to see) and submit "
                              "again", path=str(path))
    if not brackets and not spans:
        return text
    chars = list(text)
    for pos in brackets:
        chars[pos] = "(" if chars[pos] == "[" else ")"
    for span in spans:  # code and URLs as written: blank to the parser, line breaks kept for its places
        chars[span.start:span.end] = [c if c == "\n" else " " for c in chars[span.start:span.end]]
    return "".join(chars)


def _after_the_end(walker: Any, top: Any, text: str) -> list[str]:
    """A note where answers follow `\\end{document}`: LaTeX reads nothing after it, so neither does
    attngrade, but the student should hear that what is there was not graded."""
    from pylatexenc.latexwalker import LatexEnvironmentNode

    document = next((n for n in top or [] if isinstance(n, LatexEnvironmentNode) and n.environmentname == "document"),
                    None)
    if document is None or not any(word in text[document.pos + document.len:] for word in ANSWER_WORDS):
        return []
    line, _ = walker.pos_to_lineno_colno(document.pos + document.len)
    return [f"line {line}: answers after \\end{{document}} were not read, as LaTeX reads nothing after it; "
            "move them before it and submit again"]


def _no_answers(path: Path, homework: Homework) -> None:
    raise SubmissionError(f"no answers were found: write \\answer{{{homework.parts[0].id}}}{{...}} for each "
                          "part (see the template from `grade assign --format tex`)", path=str(path))


def _add(collected: Collected, part_id: str, field_name: str, value: str, place: str, *, text_field: bool) -> None:
    part = collected.homework.part(part_id)
    if part is not None and (not field_name and not part.single_field
                             or field_name and field_name not in {f.name for f in part.fields}):
        collected.blocks += 1  # a block that is refused below is still a block
    if part is None:
        collected.add(part_id, None, place)  # an unknown part: "did you mean"
        return
    if not field_name:
        if not part.single_field:
            names = ", ".join(f.name for f in part.fields)
            collected.invalid.setdefault(part_id, f"{part_id} ({place}): this part has the fields {names}; write "
                                                  f"one \\answer[<field>]{{{part_id}}}{{...}} for each")
            return
        field_name = part.fields[0].name
    if field_name not in {f.name for f in part.fields}:
        names = ", ".join(f.name for f in part.fields)
        collected.notes.append(f"{place}: part {part_id} has no field '{field_name}' (its fields: {names}); "
                               "this answer was not graded")
        return
    collected.add(part_id, {field_name: value} if value.strip() else None, place)

