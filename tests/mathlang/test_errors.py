"""Every unreadable answer gets an exact message and a caret under the right column.

The table below is the contract students see: message text, 1-based column and the
width of the caret span. The rendered form is checked in full for every row.
"""

from __future__ import annotations

from importlib.resources import files

import pytest
import yaml

from attngrade.errors import EXIT_SUBMISSION_FAILED, AttngradeError, MathError
from attngrade.mathlang import SymbolTable, parse

SETS = yaml.safe_load(
    files("attngrade.problems").joinpath("library/cs224n-attention-exploration.yaml").read_text(encoding="utf-8")
)["symbol_sets"]

TABLES = {
    # the real u-basis set: u_a..u_d, beta (alias B), I, x_1..x_3
    "U": SymbolTable.from_data(SETS["u-basis"], free_scalar=False),
    "S": SymbolTable.from_data({
        "M": {}, "k": {}, "n": {}, "x": {},
        "v": {"kind": "vector"}, "w": {"kind": "vector"},
        "A": {"kind": "matrix", "shape": ["d", "d"]},
    }),
    "SF": SymbolTable.from_data({"M": {}, "k": {}, "n": {}}, free_scalar=True),
}
U_DECLARES = "this part declares: u_a, u_b, u_c, u_d, beta, I, x_1, x_2, x_3"
S_DECLARES = "this part declares: M, k, n, x, v, w, A"
SF_DECLARES = "it declares: M, k, n"
FREE = "this part allows one free constant and you already used"
NORM = r"only the 2-norm is supported here; write \|x\| or \|x\|_2"
VEC_POWER = r"a d×1 matrix cannot be raised to a power; for a squared norm write \|u\|^2 or u^T u"
O_WHOLE = "O(...) must be the whole answer, e.g. O(n^2 d)"

# (table, text, message, column, caret width)
ERRORS = [
    # shapes
    ("U", "u_c u_d", "(d×1)(d×1) cannot be multiplied; did you mean u_c u_d^T?", 5, 3),
    ("U", "u_a + u_a^T", "cannot add a d×1 and a 1×d matrix", 5, 1),
    ("S", "v A", "(d×1)(d×d) cannot be multiplied: 1 columns against d rows", 3, 1),
    # unknown symbols
    ("U", "W", f"unknown symbol 'W'; {U_DECLARES}", 1, 1),
    ("U", "ua", f"unknown symbol 'ua' (did you mean u_a?); {U_DECLARES}", 1, 2),
    ("U", "u_a + ub", f"unknown symbol 'ub' (did you mean u_b?); {U_DECLARES}", 7, 2),
    ("U", "u_e", f"unknown symbol 'u_e'; {U_DECLARES}", 1, 3),
    ("U", "C u_a", f"unknown symbol 'C'; {U_DECLARES}", 1, 1),
    ("S", r"\alpha", f"unknown symbol '\\alpha'; {S_DECLARES}", 1, 6),
    ("S", r"\foo", f"unknown symbol '\\foo'; {S_DECLARES}", 1, 4),
    ("S", "Mz", f"unknown symbol 'Mz'; {S_DECLARES}", 1, 2),
    ("S", "I", f"unknown symbol 'I'; {S_DECLARES}", 1, 1),
    # a second free constant
    ("SF", "C + D", f"unknown symbol 'D': {FREE} 'C'; {SF_DECLARES}", 5, 1),
    ("SF", "C M + c", f"unknown symbol 'c': {FREE} 'C'; {SF_DECLARES}", 7, 1),
    ("SF", r"\lambda + C", f"unknown symbol 'C': {FREE} 'lambda'; {SF_DECLARES}", 11, 1),
    # adding a scalar and a matrix
    ("U", r"u_a + \beta", "cannot add a scalar and a d×1 matrix", 5, 1),
    ("U", r"\beta + u_a u_b^T", "cannot add a scalar and a d×d matrix; for a multiple of the identity write c I", 7, 1),
    ("S", "A + M", "cannot add a scalar and a d×d matrix; for a multiple of the identity write c I", 3, 1),
    # dividing by a matrix, by zero
    ("U", r"\frac{u_a}{u_b}", "cannot divide by a d×1 matrix", 12, 3),
    ("S", "M / v", "cannot divide by a d×1 matrix", 5, 1),
    ("S", r"\frac{1}{0}", "division by zero", 10, 1),
    ("S", "1/0", "division by zero", 3, 1),
    ("S", "M/(k-k)", "division by zero", 3, 5),
    ("S", "0^{-1}", "division by zero: 0 to a negative power", 1, 6),
    ("S", r"\log(0)", "log(0) is undefined", 5, 3),
    ("S", "log(0)", "log(0) is undefined", 4, 3),
    # matrix powers
    ("U", "u_a^3", VEC_POWER, 1, 5),  # (u_a^2 is read as the squared norm, with a note)
    ("U", "u_a^{-1}", VEC_POWER, 1, 8),
    ("S", "A^k", "a matrix power needs a whole-number exponent", 3, 1),
    ("S", "A^{1/2}", "a matrix power needs a whole-number exponent", 3, 5),
    # norms
    ("U", r"\|u_a\|_1", NORM, 8, 2),
    ("U", r"\|u_a\|_3^2", NORM, 8, 2),
    ("S", r"\|v\|_\infty", NORM, 6, 7),
    ("U", r"\|I\|", "a norm needs a vector; this is a d×d matrix", 3, 1),
    # matrix literals
    ("S", r"\begin{bmatrix} 1 & 2 \\ 3 \end{bmatrix}", "the rows of this matrix have different lengths (1, 2)", 1, 40),
    ("S", r"\begin{bmatrix} 1 \\ 2 & 3 \end{bmatrix}", "the rows of this matrix have different lengths (1, 2)", 1, 40),
    ("S", r"\begin{bmatrix} v & 2 \end{bmatrix}", "a matrix entry must be a scalar", 17, 1),
    # O(...)
    ("S", "O(Mk) + 1", O_WHOLE, 1, 5),
    ("S", "1 + O(M)", O_WHOLE, 5, 4),
    ("S", "2 O(M)", O_WHOLE, 3, 4),
    ("S", "O(M)^2", O_WHOLE, 1, 4),
    ("S", "O(v)", "O(...) needs a scalar; this is a d×1 matrix", 3, 1),
    ("S", r"\mathcal{P}(M)", f"unknown symbol 'P'; {S_DECLARES}", 1, 11),  # \mathcal{X} is the name X
    # stray characters
    ("S", "M $ k", "unexpected character '$'", 3, 1),
    ("S", "M # k", "unexpected character '#'", 3, 1),
    ("S", "M ? k", "unexpected character '?'", 3, 1),
    ("S", "M ; k", "unexpected character ';'", 3, 1),
    ("S", "M***2", "'*' cannot appear here", 4, 1),  # (M**2 is read as M^2, with a note)
    ("S", "^2", "'^' cannot appear here", 1, 1),
    ("S", "M^^2", "'^' cannot appear here", 3, 1),
    # unmatched and never-closed brackets
    ("S", "M+k)", "unmatched ')'", 4, 1),
    ("S", ")", "unmatched ')'", 1, 1),
    ("S", "()", "unmatched ')'", 2, 1),
    ("S", "(M+k]", "unmatched ']'", 5, 1),
    ("S", r"M \right)", "unmatched '\\right)'", 3, 7),
    ("S", "(M+k", "'(' is never closed", 1, 1),
    ("S", "[M", "'[' is never closed", 1, 1),
    ("S", r"\left( M", "'\\left(' is never closed", 1, 6),
    ("S", "M^{2", "'{' is never closed", 3, 1),
    ("S", r"\frac{M}{k", "'{' is never closed", 9, 1),
    ("S", r"\|v", "'\\|' is never closed", 1, 2),
    ("S", "M+", "the answer ends too early: an operand is missing", 2, 1),
    ("S", "M^", "the answer ends too early: an operand is missing", 2, 1),
    # empty answers
    ("S", "", "the answer is empty", 1, 1),
    ("S", "   ", "the answer is empty", 1, 1),
    # functions
    ("S", "M(k, k)", "'M' is not a function, so it cannot take 2 arguments", 1, 7),
    ("S", r"\sin(M, k)", "',' cannot appear here", 7, 1),
    ("S", r"\sin(v)", "sin needs a scalar; this is a d×1 matrix", 5, 3),
    ("S", "sin(v)", "sin needs a scalar; this is a d×1 matrix", 4, 3),
    ("S", r"\sqrt{v}", r"\sqrt needs a scalar; this is a d×1 matrix", 6, 3),
    ("S", r"\exp", "the answer ends too early: an operand is missing", 4, 1),
    ("S", r"\exp^2(M)", "'^' cannot appear here", 5, 1),
    # inner products
    ("S", r"\langle v, M \rangle", "an inner product needs two vectors", 12, 1),
    ("S", r"\langle v, w, v \rangle", "',' cannot appear here", 13, 1),
    # size limits
    ("S", "x^{65}", "the exponent 65 is too large; exponents are limited to 64 in absolute value", 3, 4),
    ("S", "x^{10^{10}}", "the exponent 10000000000 is too large; exponents are limited to 64 in absolute value", 3, 9),
    ("S", "1" * 41, "this number has 41 digits; at most 40 are allowed", 1, 41),
    ("S", "(10^{64})^{64}", "this number is too large to work with", 1, 14),
    ("S", "(x^{64} M)^{64}", "the total exponent 4096 is too large; exponents are limited to 64 in absolute value", 12, 4),
]


def _raise(table: str, text: str) -> MathError:
    with pytest.raises(MathError) as info:
        parse(text, TABLES[table])
    return info.value


@pytest.mark.parametrize("table, text, message, column, width", ERRORS, ids=[e[1] or "<empty>" for e in ERRORS])
def test_error_message_and_caret(table, text, message, column, width):
    err = _raise(table, text)
    assert err.message == message
    assert str(err) == message
    assert err.column == column
    assert err.start == column - 1
    assert err.end - err.start == width
    caret = " " * (column - 1) + "^" * width
    assert err.render(text) == f"{message} (column {column})\n    {text}\n    {caret}"


def test_error_table_is_large_and_distinct():
    assert len({e[2] for e in ERRORS}) >= 12


def test_outer_product_hint_exactly():
    """The example of the spec, character for character."""
    err = _raise("U", "u_c u_d")
    assert err.message == "(d×1)(d×1) cannot be multiplied; did you mean u_c u_d^T?"
    assert err.column == 5
    assert err.render("u_c u_d") == (
        "(d×1)(d×1) cannot be multiplied; did you mean u_c u_d^T? (column 5)\n"
        "    u_c u_d\n"
        "        ^^^"
    )


def test_outer_product_hint_quotes_what_was_typed():
    err = _raise("U", r"\mathbf{u}_c \mathbf{u}_d")
    assert err.message == r"(d×1)(d×1) cannot be multiplied; did you mean \mathbf{u}_c \mathbf{u}_d^T?"
    assert err.column == 14


def test_unknown_symbol_lists_every_declared_name():
    err = _raise("U", "u_a + W u_b")
    assert err.message == f"unknown symbol 'W'; {U_DECLARES}"
    assert err.column == 7
    for name in TABLES["U"].names():
        assert name in err.message


def test_unknown_symbol_in_empty_table():
    err = None
    with pytest.raises(MathError) as info:
        parse("x", SymbolTable.from_data({}))
    err = info.value
    assert err.message == "unknown symbol 'x'; this part declares: no symbols"


def test_math_error_is_a_submission_level_error():
    err = _raise("S", "M $ k")
    assert isinstance(err, AttngradeError)
    assert err.exit_code == EXIT_SUBMISSION_FAILED


@pytest.mark.parametrize("value, kind", [(None, "NoneType"), (b"M", "bytes"), (3, "int"), (["M"], "list")])
def test_non_text_answers(value, kind):
    with pytest.raises(MathError) as info:
        parse(value, TABLES["S"])
    assert info.value.message == f"expected math text, got {kind}"


@pytest.mark.parametrize("table, text, message, column, width", ERRORS, ids=[e[1] or "<empty>" for e in ERRORS])
def test_caret_sits_under_the_offending_text(table, text, message, column, width):
    err = _raise(table, text)
    _, shown, caret = err.render(text).split("\n")
    first = caret.index("^")
    assert shown[first:first + width] == text[err.start:err.end]


def test_long_answer_is_windowed_around_the_error():
    text = " + ".join(["M"] * 30) + " $ " + " + ".join(["k"] * 30)
    err = _raise("S", text)
    assert err.message == "unexpected character '$'"
    assert err.column == text.index("$") + 1
    head, shown, caret = err.render(text).split("\n")
    assert head == f"unexpected character '$' (column {err.column})"
    assert shown.startswith("    ...") and shown.endswith("...")
    assert len(shown) <= 4 + 3 + 72 + 3
    assert caret.strip() == "^"
    assert shown[caret.index("^")] == "$"


def test_long_answer_error_at_the_end():
    text = "M + " * 40 + "Q"
    err = _raise("S", text)
    head, shown, caret = err.render(text).split("\n")
    assert head == f"unknown symbol 'Q'; {S_DECLARES} (column {len(text)})"
    assert shown.startswith("    ...") and shown.endswith("Q")
    assert shown[caret.index("^")] == "Q"


def test_multiline_answer_shows_the_offending_line():
    text = "M\n+ k\n+ Q"
    err = _raise("S", text)
    _, shown, caret = err.render(text).split("\n")
    assert shown == "    + Q"
    assert shown[caret.index("^")] == "Q"


def test_multiline_answer_column_matches_the_caret():
    text = "M\n+ k\n+ Q"
    err = _raise("S", text)
    head, shown, caret = err.render(text).split("\n")
    assert head.endswith(f"(line 3, column {caret.index('^') - 4 + 1})")


# -- known bugs -------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["[[1, 2], [3]]", "[[1, 2], [3, 4], [5]]"])
def test_ragged_bracket_rows(text):
    err = _raise("S", text)
    assert err.message.startswith("the rows of this matrix have different lengths")
    assert err.column == 1


def test_unclosed_matrix_environment():
    err = _raise("S", r"\begin{bmatrix} 1 & 2")
    assert err.message == "'\\begin{bmatrix}' is never closed"
    assert err.column == 1


@pytest.mark.parametrize("text", ["x^T^2", r"x^\top^2", "v^T^2"])
def test_power_of_transpose_mark(text):
    _raise("S", text)
