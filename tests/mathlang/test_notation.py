"""The answer language reads every notation of its spec into the right sympy object.

Each notation is checked against sympy objects built directly from the symbol table
(never against the parser's own output), or by evaluating both sides on random
arrays with `attngrade.mathlang.evaluate`. Groups of different spellings must give
the identical expression, kind and shape.
"""

from __future__ import annotations

from importlib.resources import files

import numpy as np
import pytest
import sympy
import yaml

from attngrade.errors import MathError
from attngrade.mathlang import SymbolTable, parse
from attngrade.mathlang.evaluate import NUMERIC, evaluate
from attngrade.problems import load_problem

PROBLEM = "cs224n-attention-exploration"
SETS = yaml.safe_load(
    files("attngrade.problems").joinpath(f"library/{PROBLEM}.yaml").read_text(encoding="utf-8")
)["symbol_sets"]

# The real u-basis set of the CS224N problem (u_a..u_d, beta with alias B, I, x_1..x_3).
U = SymbolTable.from_data(SETS["u-basis"], free_scalar=False)
UF = SymbolTable.from_data(SETS["u-basis"], free_scalar=True)
KEY_MEANS = SymbolTable.from_data(SETS["key-means"], free_scalar=True)
# A small table of scalars (for complexity answers like M^2 k) plus two vectors and a matrix.
S = SymbolTable.from_data(
    {
        "M": {"assumptions": ["positive"]},
        "k": {"assumptions": ["positive"]},
        "n": {"assumptions": ["positive"]},
        "x": {"assumptions": ["positive"]},
        "v": {"kind": "vector"},
        "w": {"kind": "vector"},
        "A": {"kind": "matrix", "shape": ["d", "d"]},
    }
)
TABLES = {"U": U, "UF": UF, "S": S}


def sym(table: SymbolTable, name: str):
    return table.specs[name].sympy


M, k, n, x = (sym(S, c) for c in "Mknx")
v, w, A = sym(S, "v"), sym(S, "w"), sym(S, "A")
u_a, u_b, u_c, u_d = (sym(U, f"u_{c}") for c in "abcd")
beta = sym(U, "beta")
I_d = sym(U, "I")
d = U.specs["u_a"].dims[0]


# -- numeric instances -------------------------------------------------------------
DIM = 5


def instance(table: SymbolTable, seed: int = 0, extra: dict | None = None):
    """Random values for every declared symbol; returns (env, dims, values by name)."""
    rng = np.random.default_rng(seed)
    env, dims, named = {}, {}, {}
    for spec in table.specs.values():
        if spec.define is not None or spec.kind == "function":
            continue
        if spec.dims is not None:
            for dsym in spec.dims:
                if not dsym.is_Integer:
                    dims[dsym] = DIM
        if spec.kind == "scalar":
            value = float(rng.uniform(0.5, 2.0))
        elif spec.kind == "identity":
            named[spec.name] = np.eye(DIM)
            continue
        else:
            rows, cols = (dims.get(x_, None) or int(x_) for x_ in spec.dims)
            value = rng.normal(size=(rows, cols))
        env[spec.sympy] = value
        named[spec.name] = value
    for name, value in (extra or {}).items():
        env[sympy.Symbol(name, positive=True)] = value
        named[name] = value
    return env, dims, named


def numeric(value, table: SymbolTable, seed: int = 0, extra: dict | None = None):
    env, dims, named = instance(table, seed, extra)
    return np.asarray(evaluate(value.expr, env, dims, NUMERIC), dtype=float), named


# -- exact readings ----------------------------------------------------------------
EXACT = [
    # numbers
    ("S", "3", sympy.Integer(3), "scalar"),
    ("S", "3.5", sympy.Rational(7, 2), "scalar"),
    ("S", ".5", sympy.Rational(1, 2), "scalar"),
    ("S", "0.125", sympy.Rational(1, 8), "scalar"),
    ("S", "007", sympy.Integer(7), "scalar"),
    # + - * / \cdot \times \frac
    ("S", "M + k", M + k, "scalar"),
    ("S", "M - k", M - k, "scalar"),
    ("S", "-M", -M, "scalar"),
    ("S", "\u2212M", -M, "scalar"),
    ("S", "+M", M, "scalar"),
    ("S", "M * k", M * k, "scalar"),
    ("S", r"M \cdot k", M * k, "scalar"),
    ("S", r"M \times k", M * k, "scalar"),
    ("S", "M \u00d7 k", M * k, "scalar"),
    ("S", "M \u00b7 k", M * k, "scalar"),
    ("S", "M/k", M / k, "scalar"),
    ("S", r"\frac{M}{k}", M / k, "scalar"),
    ("S", r"\dfrac{M}{k}", M / k, "scalar"),
    ("S", r"\tfrac{M}{k}", M / k, "scalar"),
    ("S", r"\frac{1}{2}", sympy.Rational(1, 2), "scalar"),
    # powers with LaTeX binding
    ("S", "M^2k", M**2 * k, "scalar"),
    ("S", "M^2 k", M**2 * k, "scalar"),
    ("S", "M^{2k}", M ** (2 * k), "scalar"),
    ("S", "x^{2k}", x ** (2 * k), "scalar"),
    ("S", "x^2k", x**2 * k, "scalar"),
    ("S", "M^{-1}", 1 / M, "scalar"),
    ("S", "M^-1", 1 / M, "scalar"),
    ("S", "M^{1/2}", sympy.sqrt(M), "scalar"),
    ("S", "M^{0.5}", sympy.sqrt(M), "scalar"),
    ("S", "M^{k^2}", M ** (k**2), "scalar"),
    ("S", "2^{10}", sympy.Integer(1024), "scalar"),
    # implicit multiplication
    ("S", "2M", 2 * M, "scalar"),
    ("S", "M k", M * k, "scalar"),
    ("S", r"M\,k", M * k, "scalar"),
    ("S", r"M\quad k", M * k, "scalar"),
    ("S", "M~k", M * k, "scalar"),
    ("S", "(M)(k)", M * k, "scalar"),
    ("S", "M(M+k)", M * (M + k), "scalar"),
    ("S", "(M+k)(M-k)", (M + k) * (M - k), "scalar"),
    ("S", "2(M+k)", 2 * (M + k), "scalar"),
    ("S", "k v", k * v, "matrix"),
    # brackets
    ("S", "(M+k)", M + k, "scalar"),
    ("S", r"\left(M+k\right)", M + k, "scalar"),
    ("S", "[M+k]", M + k, "scalar"),
    ("S", r"\left[M+k\right]", M + k, "scalar"),
    ("S", "{M+k}", M + k, "scalar"),
    ("S", "((M))", M, "scalar"),
    ("S", "(M+k)^2", (M + k) ** 2, "scalar"),
    # functions
    ("S", r"\sqrt{M}", sympy.sqrt(M), "scalar"),
    ("S", "sqrt(M)", sympy.sqrt(M), "scalar"),
    ("S", r"\sqrt{M^2 + k^2}", sympy.sqrt(M**2 + k**2), "scalar"),
    ("S", r"\exp(M)", sympy.exp(M), "scalar"),
    ("S", "exp(M)", sympy.exp(M), "scalar"),
    ("S", r"\exp\left(M\right)", sympy.exp(M), "scalar"),
    ("S", r"\exp(-M^2/k)", sympy.exp(-(M**2) / k), "scalar"),
    ("S", r"\log(M)", sympy.log(M), "scalar"),
    ("S", "log(M)", sympy.log(M), "scalar"),
    ("S", r"\ln(M)", sympy.log(M), "scalar"),
    ("S", r"\sin(M)", sympy.sin(M), "scalar"),
    ("S", "sin(M)", sympy.sin(M), "scalar"),
    ("S", r"\cos(M)", sympy.cos(M), "scalar"),
    ("S", "cos(M)", sympy.cos(M), "scalar"),
    ("S", r"\sin(M)^2", sympy.sin(M) ** 2, "scalar"),
    # Greek spellings and the declared alias B
    ("U", r"\beta", beta, "scalar"),
    ("U", "beta", beta, "scalar"),
    ("U", "\u03b2", beta, "scalar"),
    ("U", "B", beta, "scalar"),
    ("U", r"\boldsymbol{\beta}", beta, "scalar"),
    # identity where the table declares it
    ("U", "I", I_d, "matrix"),
    ("U", r"\mathbf{I}", I_d, "matrix"),
    ("U", r"\beta I", beta * I_d, "matrix"),
    ("U", r"\beta^2 I", beta**2 * I_d, "matrix"),
    # vectors: subscripts and bold styles read as the plain name
    ("U", "u_a", u_a, "matrix"),
    ("U", "u_{a}", u_a, "matrix"),
    ("U", r"\mathbf{u}_a", u_a, "matrix"),
    ("U", r"\mathbf{u}_{a}", u_a, "matrix"),
    ("U", r"\mathbf{u_a}", u_a, "matrix"),
    ("U", r"\boldsymbol{u}_a", u_a, "matrix"),
    ("U", r"\bm{u}_a", u_a, "matrix"),
    ("U", r"\beta u_a + u_b", beta * u_a + u_b, "matrix"),
    # transposes
    ("U", "u_a^T", u_a.T, "matrix"),
    ("U", r"u_a^\top", u_a.T, "matrix"),
    ("U", "u_a'", u_a.T, "matrix"),
    ("U", r"u_a^\intercal", u_a.T, "matrix"),
    ("U", "u_a^\u22a4", u_a.T, "matrix"),
    ("S", "A^T", A.T, "matrix"),
    ("S", "A'", A.T, "matrix"),
    ("U", "(u_a u_b^T)^T", u_b * u_a.T, "matrix"),
    ("U", "u_c u_d^T", u_c * u_d.T, "matrix"),
    ("U", "u_c u_d'", u_c * u_d.T, "matrix"),
    # a scalar's transpose is itself
    ("S", "M^T", M, "scalar"),
    ("S", "M'", M, "scalar"),
    # matrix powers of square matrices
    ("S", "A^2", sympy.MatPow(A, 2), "matrix"),
    ("S", r"\|M\|", sympy.Abs(M), "scalar"),
    # shorthands declared with define:
    ("U", "x_1", u_d + u_b, "matrix"),
    ("U", "x_{1}", u_d + u_b, "matrix"),
    ("U", r"\mathbf{x}_1", u_d + u_b, "matrix"),
    ("U", "x_2", u_a, "matrix"),
    ("U", "x_1 + x_3", u_d + 2 * u_b + u_c, "matrix"),
    # multi-letter words split into declared letters
    ("S", "Mk", M * k, "scalar"),
    ("S", "kM", M * k, "scalar"),
    ("S", "Mkn", M * k * n, "scalar"),
    ("S", "MMk", M**2 * k, "scalar"),
    ("S", "kA", k * A, "matrix"),
]


# -- inner products and norms, checked by value (their sympy form is an implementation detail)
def _ip(a, b):
    return float(a[:, 0] @ b[:, 0])


INNER_AND_NORMS = [
    ("u_c^T u_d", lambda e: _ip(e["u_c"], e["u_d"])),
    ("u_c' u_d", lambda e: _ip(e["u_c"], e["u_d"])),
    (r"u_c \cdot u_d", lambda e: _ip(e["u_c"], e["u_d"])),
    ("u_c \u00b7 u_d", lambda e: _ip(e["u_c"], e["u_d"])),
    (r"\langle u_c, u_d \rangle", lambda e: _ip(e["u_c"], e["u_d"])),
    (r"\left\langle u_c, u_d \right\rangle", lambda e: _ip(e["u_c"], e["u_d"])),
    ("\u27e8u_c, u_d\u27e9", lambda e: _ip(e["u_c"], e["u_d"])),
    ("u_d^T u_c", lambda e: _ip(e["u_c"], e["u_d"])),
    ("x_3^T x_1", lambda e: _ip(e["u_c"] + e["u_b"], e["u_d"] + e["u_b"])),
    (r"\|u_a\|", lambda e: np.linalg.norm(e["u_a"])),
    ("||u_a||", lambda e: np.linalg.norm(e["u_a"])),
    ("\u2016u_a\u2016", lambda e: np.linalg.norm(e["u_a"])),
    (r"\lVert u_a \rVert", lambda e: np.linalg.norm(e["u_a"])),
    (r"\left\|u_a\right\|", lambda e: np.linalg.norm(e["u_a"])),
    (r"\|u_a\|_2", lambda e: np.linalg.norm(e["u_a"])),
    (r"\|u_a\|_{2}", lambda e: np.linalg.norm(e["u_a"])),
    (r"\|u_a^T\|", lambda e: np.linalg.norm(e["u_a"])),
    (r"\|u_a\|_2^2", lambda e: _ip(e["u_a"], e["u_a"])),
    (r"\|u_a\|^2", lambda e: _ip(e["u_a"], e["u_a"])),
    ("||u_a||_2^2", lambda e: _ip(e["u_a"], e["u_a"])),
    (r"\lVert u_a \rVert_2^2", lambda e: _ip(e["u_a"], e["u_a"])),
    (r"\|u_a + u_b\|_2^2", lambda e: _ip(e["u_a"] + e["u_b"], e["u_a"] + e["u_b"])),
]


@pytest.mark.parametrize("text, expected", INNER_AND_NORMS, ids=[c[0] for c in INNER_AND_NORMS])
def test_inner_products_and_norms(text, expected):
    value = parse(text, U)
    assert value.kind == "scalar" and value.shape is None
    got, named = numeric(value, U)
    assert got.shape == ()
    assert got == pytest.approx(expected(named), rel=1e-12)
    # the scalar is built from the declared vectors, never from fresh symbols
    assert value.expr.free_symbols <= {u_a, u_b, u_c, u_d, d}


@pytest.mark.parametrize("table, text, expected, kind", EXACT, ids=[c[1] for c in EXACT])
def test_reads_as(table, text, expected, kind):
    value = parse(text, TABLES[table])
    assert value.kind == kind
    assert value.expr == expected, f"{text!r} read as {value.expr}, expected {expected}"
    assert value.text == text


SHAPES = [
    ("U", "u_a", (d, 1)),
    ("U", "u_a^T", (1, d)),
    ("U", "u_c u_d^T", (d, d)),
    ("U", "I", (d, d)),
    ("U", "x_1", (d, 1)),
    ("U", "u_a u_a^T u_b", (d, 1)),
    ("S", r"\begin{bmatrix} 1 & 2 & 3 \end{bmatrix}", (1, 3)),
    ("S", "[1, 2, 3]", (3, 1)),
    ("U", "u_a^T u_b", None),
]


@pytest.mark.parametrize("table, text, shape", SHAPES, ids=[s[1] for s in SHAPES])
def test_shapes(table, text, shape):
    value = parse(text, TABLES[table])
    if shape is None:
        assert value.kind == "scalar" and value.shape is None
    else:
        assert value.kind == "matrix"
        assert tuple(value.shape) == tuple(sympy.sympify(s) for s in shape)


# -- transposes written with braces -------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("u_a^{T}", u_a.T),
    (r"u_a^{\top}", u_a.T),
    ("u_c u_d^{T}", u_c * u_d.T),
])
def test_braced_transpose(text, expected):
    assert parse(text, U).expr == expected


def test_braced_transpose_of_matrix():
    assert parse("A^{T}", S).expr == A.T


# -- matrix literals ----------------------------------------------------------------
MATRIX_LITERALS = [
    r"\begin{bmatrix} M & k \\ 1 & 2 \end{bmatrix}",
    r"\begin{pmatrix} M & k \\ 1 & 2 \end{pmatrix}",
    r"\begin{bmatrix} M & k \\ 1 & 2 \\ \end{bmatrix}",
    r"\begin{bmatrix}M&k\\1&2\end{bmatrix}",
    "[[M, k], [1, 2]]",
    "[[M,k],[1,2]]",
]


@pytest.mark.parametrize("text", MATRIX_LITERALS)
def test_matrix_literal(text):
    value = parse(text, S)
    assert value.kind == "matrix"
    assert value.expr == sympy.ImmutableMatrix([[M, k], [1, 2]])
    assert tuple(value.shape) == (2, 2)


@pytest.mark.parametrize("text, expected", [
    ("[M, k]", [[M], [k]]),
    (r"\begin{bmatrix} M \\ k \end{bmatrix}", [[M], [k]]),
    ("[[M, k]]", [[M, k]]),
    (r"\begin{bmatrix} M & k \end{bmatrix}", [[M, k]]),
    ("[[1, 2], [3, 4]]^T", [[1, 3], [2, 4]]),
])
def test_vector_and_row_literals(text, expected):
    value = parse(text, S)
    assert value.expr == sympy.ImmutableMatrix(expected)


@pytest.mark.parametrize("text", [
    r"\begin{bmatrix} 1 \\ 2 \end{bmatrix}^T \begin{bmatrix} 3 \\ 4 \end{bmatrix}",
    r"[1, 2] \cdot [3, 4]",
    r"\langle [1, 2], [3, 4] \rangle",
    "[[1, 2]] [3, 4]",
])
def test_literal_inner_products_are_exact(text):
    value = parse(text, S)
    assert value.kind == "scalar"
    assert value.expr == 11


def test_literal_norm():
    assert parse(r"\|[3, 4]\|", S).expr == 5


# -- O(...) --------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["O(M^2 k)", r"\mathcal{O}(M^2 k)", r"\operatorname{O}(M^2k)", "O(k M^2)",
                                  r"\mathcal{O}(M^{2}k)"])
def test_big_o(text):
    value = parse(text, S)
    assert value.kind == "bigO"
    assert value.expr == M**2 * k


# -- the free constant ---------------------------------------------------------------
@pytest.mark.parametrize("text, name", [
    ("C u_a", "C"),
    ("c u_a", "c"),
    (r"\lambda u_a", "lambda"),
    ("\u03bb u_a", "lambda"),
    ("lambda u_a", "lambda"),
    ("C_1 u_a", "C_1"),
    ("C_{1} u_a", "C_1"),
])
def test_free_constant(text, name):
    value = parse(text, UF)
    assert value.kind == "matrix"
    assert value.expr == sympy.Symbol(name, positive=True) * u_a


@pytest.mark.parametrize("text, expected", [
    ("C + C", 2 * sympy.Symbol("C", positive=True)),
    ("\\lambda + \u03bb", 2 * sympy.Symbol("lambda", positive=True)),
    (r"\lambda + lambda", 2 * sympy.Symbol("lambda", positive=True)),
    ("C_1 + C_{1}", 2 * sympy.Symbol("C_1", positive=True)),
    (r"\beta^2 C", beta**2 * sympy.Symbol("C", positive=True)),
])
def test_free_constant_may_repeat_in_any_spelling(text, expected):
    assert parse(text, UF).expr == expected


def test_free_constant_with_identity_and_outer_product():
    C = sympy.Symbol("C", positive=True)
    assert parse("C I + u_a u_a^T", UF).expr == C * I_d + u_a * u_a.T


@pytest.mark.parametrize("text", ["C + D", "C + c", r"C \lambda", "C C_1", r"\lambda + C"])
def test_second_free_name_is_an_error(text):
    with pytest.raises(MathError, match="allows one free constant"):
        parse(text, UF)


@pytest.mark.parametrize("text", ["C u_a", r"\lambda", "c"])
def test_no_free_constant_without_free_scalar(text):
    with pytest.raises(MathError, match="unknown symbol"):
        parse(text, U)


@pytest.mark.parametrize("word", ["T", "O"])
def test_reserved_letters_are_never_the_free_constant(word):
    with pytest.raises(MathError):
        parse(word, UF)


def test_undeclared_e_is_eulers_number():
    assert parse("e^{2}", UF).expr == sympy.exp(2)
    assert parse("e", U).expr == sympy.E


# -- splitting words -----------------------------------------------------------------
@pytest.mark.parametrize("text", ["Mz", "zM", "Mkz", "MC"])
def test_words_split_only_when_every_letter_is_declared(text):
    with pytest.raises(MathError, match="unknown symbol"):
        parse(text, S)


def test_word_with_free_letter_does_not_split():
    # C may be the free constant, but it is not declared, so MC is not M C
    table = SymbolTable.from_data({"M": {}}, free_scalar=True)
    with pytest.raises(MathError, match="unknown symbol 'MC'"):
        parse("MC", table)


def test_identity_only_where_declared():
    with pytest.raises(MathError, match="unknown symbol 'I'"):
        parse("I", S)
    assert parse("I", U).expr == sympy.Identity(d)


# -- aliases with notes --------------------------------------------------------------
def test_alias_reads_as_declared_symbol_with_note():
    mu_a = sym(KEY_MEANS, "mu_a")
    value = parse("u_a", KEY_MEANS)
    assert value.expr == mu_a
    assert value.notes == (KEY_MEANS.specs["mu_a"].note,)


@pytest.mark.parametrize("text", [r"\mu_a", "mu_a", "\u03bc_a", r"\boldsymbol{\mu}_a", r"\mu_{a}"])
def test_greek_vector_spellings(text):
    value = parse(text, KEY_MEANS)
    assert value.expr == sym(KEY_MEANS, "mu_a")
    assert value.notes == ()


def test_part_table_matches_the_symbol_set():
    problem = load_problem(PROBLEM)
    part = next(p for p in problem.parts if p.id == "1e.ii")
    assert part.table.free_scalar is True
    assert part.table.names() == U.names()


# -- different notations, identical expressions ---------------------------------------
EQUIVALENT = [
    ("U", [
        r"\frac{1}{\beta^2}(u_b u_b^\top - u_c u_c^\top)",
        "(u_b u_b^T - u_c u_c^T)/beta^2",
        "(u_b u_b' - u_c u_c')/\u03b2^2",
        r"\dfrac{1}{B^{2}}\left(u_b u_b^T - u_c u_c^T\right)",
        r"\frac{u_b u_b^T - u_c u_c^T}{\beta^2}",
        r"\beta^{-2}(\mathbf{u}_b \mathbf{u}_b^T - \boldsymbol{u}_c \boldsymbol{u}_c^T)",
    ]),
    ("U", ["u_c^T u_d", "u_c' u_d", r"u_c \cdot u_d", r"\langle u_c, u_d \rangle", "\u27e8u_c,u_d\u27e9",
           r"\mathbf{u}_c^\top \mathbf{u}_d"]),
    ("U", [r"\|u_a\|_2^2", r"\|u_a\|^2", "||u_a||^2", r"\lVert u_a \rVert_2^2", "u_a^T u_a",
           r"\langle u_a, u_a \rangle", r"u_a \cdot u_a"]),
    ("U", [r"\beta^2 I", "beta^2 I", "\u03b2^2 I", "B^2 I", r"\boldsymbol{\beta}^{2} \mathbf{I}", r"\beta \cdot \beta I"]),
    ("U", ["x_1", "x_{1}", "u_d + u_b", r"\mathbf{u}_d + \mathbf{u}_b"]),
    ("U", ["x_1 x_2^T", "(u_d + u_b) u_a^T", "(u_b + u_d)u_a'"]),
    ("S", ["M^2k", "M^2 k", "M^{2}k", r"M \cdot M \cdot k", "M*M*k", "MMk", "k M^2", r"M^2 \times k"]),
    ("S", [r"\frac{M}{k}", "M/k", r"M \cdot k^{-1}", r"\dfrac{M}{k}"]),
    ("S", [r"\sqrt{M}", "sqrt(M)", "M^{1/2}", "M^{0.5}"]),
    ("S", [r"\exp(M)", "exp(M)", r"\exp\left(M\right)", r"\exp((M))"]),
    ("S", ["O(M^2 k)", r"\mathcal{O}(M^2 k)", r"\operatorname{O}(M^2 k)", "O(Mk M)"]),
    ("S", MATRIX_LITERALS),
    # a power or transpose after a bracket is the bracket's, not the whole product's
    ("S", ["M (k + 1)^2", "M(k+1)^2", r"M \cdot (k+1)^2", "M (k+1)(k+1)", r"M\left(k+1\right)^{2}", "M(k+1)'^2"]),
    ("S", ["2(M+1)^2", "2 (M + 1)^2", r"2 \cdot (M+1)^{2}"]),
    ("U", ["u_d (u_a + u_b)^T", "u_d(u_a + u_b)'", r"u_d (u_a + u_b)^\top", "u_d (u_a^T + u_b^T)",
           "(u_d)(u_a + u_b)^T"]),
]


@pytest.mark.parametrize("table, texts", EQUIVALENT, ids=[g[1][0] for g in EQUIVALENT])
def test_notations_agree(table, texts):
    values = [parse(t, TABLES[table]) for t in texts]
    first = values[0]
    for text, value in zip(texts[1:], values[1:]):
        assert (value.kind, value.expr, value.shape) == (first.kind, first.expr, first.shape), text
        # One key for all, but for one written with decimals (see the test below)
        assert value.canonical == first.canonical or value.decimals != first.decimals, text


def test_an_answer_written_with_decimals_reads_the_same_but_has_a_key_of_its_own():
    exact, decimal = parse(r"\sqrt{M}", TABLES["S"]), parse("M^{0.5}", TABLES["S"])
    assert exact.expr == decimal.expr and decimal.decimals and not exact.decimals
    assert exact.canonical != decimal.canonical  # floating point judges the one written with decimals


# -- numeric meaning -------------------------------------------------------------------

NUMERIC_CASES = [
    ("U", r"\frac{1}{\beta^2}(u_b u_b^\top - u_c u_c^\top)",
     lambda e: (e["u_b"] @ e["u_b"].T - e["u_c"] @ e["u_c"].T) / e["beta"] ** 2),
    ("U", "u_c^T u_d", lambda e: _ip(e["u_c"], e["u_d"])),
    ("U", r"\langle x_1, x_3 \rangle", lambda e: _ip(e["u_d"] + e["u_b"], e["u_c"] + e["u_b"])),
    ("U", r"\|u_a + u_b\|_2^2", lambda e: _ip(e["u_a"] + e["u_b"], e["u_a"] + e["u_b"])),
    ("U", r"\|u_a\|", lambda e: np.linalg.norm(e["u_a"])),
    ("U", r"\sqrt{\beta} I + u_a u_a^T", lambda e: np.sqrt(e["beta"]) * np.eye(DIM) + e["u_a"] @ e["u_a"].T),
    ("U", "(u_a u_b^T)^T u_c", lambda e: (e["u_a"] @ e["u_b"].T).T @ e["u_c"]),
    ("U", r"u_a^T (I - u_b u_b^T / \beta^2) u_c",
     lambda e: (e["u_a"].T @ (np.eye(DIM) - e["u_b"] @ e["u_b"].T / e["beta"] ** 2) @ e["u_c"]).item()),
    ("S", r"\frac{M}{k} + \log(M) - \sin(k)\cos(M)",
     lambda e: e["M"] / e["k"] + np.log(e["M"]) - np.sin(e["k"]) * np.cos(e["M"])),
    ("S", "v^T A^2 w", lambda e: (e["v"].T @ e["A"] @ e["A"] @ e["w"]).item()),
    ("S", "A^T v - 2 w", lambda e: e["A"].T @ e["v"] - 2 * e["w"]),
    ("S", "M^2k", lambda e: e["M"] ** 2 * e["k"]),
    ("S", "M^{2k}", lambda e: e["M"] ** (2 * e["k"])),
]


@pytest.mark.parametrize("table, text, expected", NUMERIC_CASES, ids=[c[1] for c in NUMERIC_CASES])
@pytest.mark.parametrize("seed", [0, 1])
def test_numeric_meaning(table, text, expected, seed):
    got, named = numeric(parse(text, TABLES[table]), TABLES[table], seed)
    np.testing.assert_allclose(got, np.asarray(expected(named), dtype=float), rtol=1e-10, atol=1e-12)


# An inner product (a scalar) times a matrix: the scalar must stay an inner product.
SCALAR_TIMES_MATRIX = [
    (r"\exp(-\|u_a\|^2/\beta) u_b", lambda e: np.exp(-_ip(e["u_a"], e["u_a"]) / e["beta"]) * e["u_b"]),
    (r"\langle x_1, u_b \rangle u_a", lambda e: _ip(e["u_d"] + e["u_b"], e["u_b"]) * e["u_a"]),
    ("(u_a^T u_b) u_c", lambda e: _ip(e["u_a"], e["u_b"]) * e["u_c"]),
    (r"\|u_a\|^2 u_b", lambda e: _ip(e["u_a"], e["u_a"]) * e["u_b"]),
    ("u_a^T u_b u_b^T u_c", lambda e: _ip(e["u_a"], e["u_b"]) * _ip(e["u_b"], e["u_c"])),
    (r"\exp(u_a^T u_b) I", lambda e: np.exp(_ip(e["u_a"], e["u_b"])) * np.eye(DIM)),
]


@pytest.mark.parametrize("text, expected", SCALAR_TIMES_MATRIX, ids=[c[0] for c in SCALAR_TIMES_MATRIX])
def test_inner_product_times_matrix_evaluates(text, expected):
    got, named = numeric(parse(text, U), U)
    np.testing.assert_allclose(got, np.asarray(expected(named), dtype=float), rtol=1e-10)


@pytest.mark.parametrize("text", [c[0] for c in SCALAR_TIMES_MATRIX])
def test_canonical_is_deterministic_for_inner_product_times_matrix(text):
    assert parse(text, U).canonical == parse(text, U).canonical


@pytest.mark.parametrize("table, text", [c[:2] for c in EXACT], ids=[c[1] for c in EXACT])
def test_canonical_is_deterministic(table, text):
    assert parse(text, TABLES[table]).canonical == parse(text, TABLES[table]).canonical


def test_numeric_free_constant():
    got, named = numeric(parse(r"C u_a u_b^T + \beta I", UF), UF, extra={"C": 3.0})
    np.testing.assert_allclose(got, 3.0 * named["u_a"] @ named["u_b"].T + named["beta"] * np.eye(DIM))


# -- malformed numbers -----------------------------------------------------------------
def test_malformed_number_is_rejected():
    with pytest.raises(MathError):
        parse("2.5.3", S)


# -- functions applied without parentheses ---------------------------------------------
@pytest.mark.parametrize("text, expected, kind", [
    (r"\log M", sympy.log(M), "scalar"),
    ("log M", sympy.log(M), "scalar"),
    (r"\ln M", sympy.log(M), "scalar"),
    (r"M \log M", M * sympy.log(M), "scalar"),
    ("M log M", M * sympy.log(M), "scalar"),
    (r"\log M k", k * sympy.log(M), "scalar"),
    (r"O(M \log M)", M * sympy.log(M), "bigO"),
    (r"\exp(M) \log(k)", sympy.exp(M) * sympy.log(k), "scalar"),
])
def test_function_without_parentheses(text, expected, kind):
    value = parse(text, S)
    assert (value.kind, value.expr) == (kind, expected)


@pytest.mark.parametrize("text, expected", [
    (r"\log M^2", sympy.log(M**2)),
    (r"\sin M^2", sympy.sin(M**2)),
    (r"O(\log M^2)", sympy.log(M**2)),
])
def test_function_without_parentheses_takes_the_power_inside(text, expected):
    assert parse(text, S).expr == expected


def test_declared_scalar_T_is_an_exponent_not_a_transpose():
    table = SymbolTable.from_data({"M": {}, "T": {}, "v": {"kind": "vector"}})
    M_, T_, v_ = (table.specs[c].sympy for c in "MTv")
    assert parse("M^T", table).expr == M_**T_
    assert parse("M^{T}", table).expr == M_**T_
    assert parse("v^T", table).expr == v_.T  # a vector cannot be raised to a power: still a transpose
    assert parse(r"v^\top", table).expr == v_.T


# -- course notations found by the benchmark's answer pools --------------------------------
def test_position_labels_and_greek_subscripts():
    from attngrade.problems import load_homework

    c_i = load_homework("eecs182-sp23-transformers").part("c.i")
    assert parse(r"q_i^{(pos)} \cdot k_j^{(pos)}", c_i.table).canonical == parse("qpos_i^T kpos_j", c_i.table).canonical
    h = load_homework("nyu-dl-transformer").part("1.1a")
    for text in (r"V softargmax_β(K^T Q)", r"V softargmax_{\beta}(K^\top Q)", r"V \mathrm{softargmax}_\beta(K^T Q)"):
        assert parse(text, h.table).canonical == parse("V softargmax_beta(K^T Q)", h.table).canonical


def test_a_functions_power_is_the_values():
    # \sin(M)^2 is (sin M)^2, as everyone writes it; only a non-function's bracket takes the power
    assert parse(r"\sin(M)^2", S).expr == parse(r"(\sin M)^2", S).expr
    assert parse("2(M+1)^2", S).expr != parse("(2M+2)^2", S).expr
