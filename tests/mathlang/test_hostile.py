"""Untrusted answers: nothing is executed, nothing runs long, only MathError escapes.

Every input here is hostile or absurd. Each must raise `attngrade.errors.MathError`
(never another exception) in well under a second. Inputs that are known to hang are
run in child processes with a hard timeout, so a regression cannot hang the suite.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from attngrade.errors import MathError
from attngrade.mathlang import DEFAULT_LIMITS, SymbolTable, parse

BUDGET = 1.0  # seconds one answer may take
SYMBOLS = {
    "M": {}, "k": {}, "x": {}, "a": {},
    "v": {"kind": "vector"},
    "A": {"kind": "matrix", "shape": ["d", "d"]},
}
TABLE = SymbolTable.from_data(SYMBOLS, free_scalar=False)
FREE_TABLE = SymbolTable.from_data(SYMBOLS, free_scalar=True)


@pytest.fixture(autouse=True)
def _hard_stop():
    """A safety net: a test that runs 10 s is stopped rather than hanging the suite."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum, frame):
        raise TimeoutError("parse ran for more than 10 s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 10.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def rejected_quickly(text, table=TABLE) -> MathError:
    """Parse `text`; it must raise MathError (and nothing else) within BUDGET."""
    start = time.perf_counter()
    try:
        parse(text, table)
    except MathError as err:
        elapsed = time.perf_counter() - start
        assert elapsed < BUDGET, f"rejected, but only after {elapsed:.2f} s"
        return err
    except Exception as err:  # noqa: BLE001 - the point is that nothing else escapes
        pytest.fail(f"{type(err).__name__} escaped instead of MathError: {err}")
    pytest.fail(f"{text[:60]!r} was accepted")


# -- code is never executed -----------------------------------------------------------
def test_import_os_system_is_not_run(tmp_path):
    target = tmp_path / "pwned-by-import"
    text = f"__import__('os').system('touch {target}')"
    rejected_quickly(text)
    rejected_quickly(text, FREE_TABLE)
    assert not target.exists()


@pytest.mark.parametrize("template", [
    "exec(\"open('{p}', 'w')\")",
    "eval(\"open('{p}', 'w')\")",
    "open('{p}', 'w')",
    "lambda: open('{p}', 'w')",
    "().__class__.__bases__[0].__subclasses__()[0]('{p}')",
    "__builtins__.open('{p}', 'w')",
    "import os; os.system('touch {p}')",
    "x; __import__('pathlib').Path('{p}').touch()",
    r"\immediate\write18{{touch {p}}}",
    r"\input{{{p}}}",
])
def test_code_strings_are_not_run(tmp_path, template):
    target = tmp_path / "pwned-by-code"
    rejected_quickly(template.format(p=target))
    assert not target.exists()


@pytest.mark.parametrize("text", [
    "lambda: 0",
    "lambda x: x",
    "exec('1')",
    "eval('1+1')",
    "compile('1', '', 'eval')",
    "globals()",
    "getattr(x, 'y')",
    "Symbol('x')",
    "sympify('x')",
    "S('1')",
    "Integer(1)",
    "x.__class__",
    "os.system('ls')",
    "${7*7}",
    "#{7*7}",
    "<%= 7*7 %>",
    "{% for x in y %}",
    "{{config}}",
    "<script>alert(1)</script>",
    "javascript:alert(1)",
    "'; DROP TABLE answers; --",
    "%s%s%s%n",
    r"\def\x{1}",
    r"\newcommand{\x}{1}",
    r"\csname x\endcsname",
    "oo", "zoo", "nan", "pi", "E",
])
def test_code_and_injection_strings(text):
    rejected_quickly(text)


def test_template_braces_are_latex_groups():
    # `{...}` is a LaTeX group, so {{7*7}} is the number 49. That is safe: no template engine
    # ever sees an answer (reports are autoescaped and never rendered as templates).
    value = parse("{{7*7}}", TABLE)
    assert value.expr == 49 and value.kind == "scalar"


# -- size and depth ---------------------------------------------------------------------
def test_power_tower():
    err = rejected_quickly("9^9^9^9^9")
    assert "too large" in err.message


@pytest.mark.parametrize("text", [
    "a" * 100_000,
    "a+" * 50_000,
    "(" * 100_000,
    "1" * 100_000,
    "\\frac{" * 20_000,
    "x" + "^x" * 50_000,
])
def test_100_kb_answer(text):
    err = rejected_quickly(text)
    assert err.message == f"the answer is {len(text)} characters long; at most {DEFAULT_LIMITS.max_length} are read"
    assert err.column == DEFAULT_LIMITS.max_length + 1


def test_10000_nested_parentheses():
    rejected_quickly("(" * 10_000 + "x" + ")" * 10_000)


@pytest.mark.parametrize("opener, closer", [
    ("(", ")"), ("[", "]"), ("{", "}"), (r"\left(", r"\right)"), (r"\sqrt{", "}"),
    (r"\frac{1}{", "}"), ("x^{", "}"), (r"\exp(", ")"),
])
def test_nesting_within_the_length_limit(opener, closer):
    depth = (DEFAULT_LIMITS.max_length - 1) // (len(opener) + len(closer))
    text = opener * depth + "x" + closer * depth
    assert len(text) <= DEFAULT_LIMITS.max_length
    rejected_quickly(text)


def test_nesting_at_the_depth_limit_is_read():
    depth = DEFAULT_LIMITS.max_depth
    assert parse("(" * depth + "x" + ")" * depth, TABLE).expr == TABLE.specs["x"].sympy
    err = rejected_quickly("(" * (depth + 1) + "x" + ")" * (depth + 1))
    assert err.message == f"brackets are nested more than {depth} deep"
    assert err.column == depth + 1


@pytest.mark.parametrize("func", [
    r"\exp",
    "exp ",
    r"\log",
    r"\sin",
    r"\cos",
])
def test_functions_nested_without_brackets(func):
    """Function applications nest like brackets even when no bracket is written."""
    count = (DEFAULT_LIMITS.max_length - 2) // len(func)
    rejected_quickly(func * count + " x")


@pytest.mark.parametrize("text", ["1e999", "1E999", "1e-999", "10^{999}", "1*10^999"])
def test_scientific_notation(text):
    rejected_quickly(text)


def test_500_digit_number():
    err = rejected_quickly("7" * 500)
    assert err.message == f"this number has 500 digits; at most {DEFAULT_LIMITS.max_digits} are allowed"


def test_500_digit_decimal():
    rejected_quickly("0." + "3" * 500)


@pytest.mark.parametrize("text", ["x^{10^{10}}", "x^{10^{10^{10}}}", "2^{2^{2^{2^{2}}}}", "x^{-10^{10}}",
                                  "(10^{64})^{64}", "(2^{64})^{64}", "9999999999999999999999999999999999999999^{64}",
                                  "0.0000000000000000000000000000000000001^{64}", "x" + "^2" * 101])
def test_huge_powers(text):
    rejected_quickly(text)


def test_long_chain_at_the_length_limit_is_read_quickly():
    limit = DEFAULT_LIMITS.max_length
    text = "a" + "+a" * ((limit - 1) // 2) + " " * ((limit - 1) % 2)
    assert len(text) == limit
    start = time.perf_counter()
    value = parse(text, TABLE)
    assert time.perf_counter() - start < BUDGET
    assert value.expr == (limit // 2) * TABLE.specs["a"].sympy


def test_long_chain_over_the_length_limit():
    limit = DEFAULT_LIMITS.max_length
    text = "a+" * (limit // 2) + "a"
    err = rejected_quickly(text)
    assert err.message == f"the answer is {len(text)} characters long; at most {limit} are read"


def test_long_product_chain_of_big_numbers_is_bounded():
    # 48 numbers of 40 digits: ~1900 digits in all, still a quick exact integer
    text = "*".join(["9" * 40] * 48)
    assert len(text) <= DEFAULT_LIMITS.max_length
    start = time.perf_counter()
    try:
        parse(text, TABLE)
    except MathError:
        pass
    assert time.perf_counter() - start < BUDGET


def test_largest_matrix_literal():
    side = 20
    body = r"\\".join("&".join(["9"] * side) for _ in range(side))
    text = (r"\begin{bmatrix}" + body + r"\end{bmatrix}") * 2
    assert len(text) <= DEFAULT_LIMITS.max_length
    start = time.perf_counter()
    value = parse(text, TABLE)
    assert time.perf_counter() - start < BUDGET
    assert value.expr[0, 0] == 81 * side


def test_matrix_literal_over_the_entry_limit():
    err = rejected_quickly("[" + ",".join(["1"] * (DEFAULT_LIMITS.max_matrix_entries + 1)) + "]")
    assert err.message == f"this matrix is too large (at most {DEFAULT_LIMITS.max_matrix_entries} entries)"


@pytest.mark.parametrize("text", ["[[1,1],[1,1]]^{64}", "A^{64}", "(A^{64})^{64}", "((x^{64})^{64})^{64}",
                                  "(M+k)^{64}(M+k)^{64}", "x" + "'" * 1999, "v" + "'" * 1999, "-" * 1999 + "x"])
def test_symbolic_blowups_stay_cheap(text):
    start = time.perf_counter()
    try:
        parse(text, TABLE)
    except MathError:
        pass
    assert time.perf_counter() - start < BUDGET


# -- characters -----------------------------------------------------------------------
@pytest.mark.parametrize("text", ["\x00", "x\x00", "x\x00+1", "\x00" * 1000, "M + \x00k"])
def test_nul_bytes(text):
    err = rejected_quickly(text)
    assert err.message == "the answer contains a NUL character"
    assert err.column == text.index("\x00") + 1


@pytest.mark.parametrize("text", [
    "\u202ex",  # right-to-left override
    "M\u200bk",  # zero-width space
    "\ufeffM",  # byte order mark
    "x\u2028+1",  # line separator
    "\x1b[31mx",  # terminal escape
    "\x07",
    "x\ud800",  # lone surrogate
    "\U0001f4a9 + x",
    "x\u0301",  # combining accent
    "\uff11\uff12",  # fullwidth digits
    "\u0663",  # Arabic-Indic digit
    "\u221e", "\u2211", "\u222b", "\u211d", "\u2148",  # (x\u00b2 and \u221ax are read: see test_normalize.py)
    "\U0001d400",  # mathematical bold A
    "\ufffd" * 100,
    "\u0000\uffff",
])
def test_unicode_junk(text):
    rejected_quickly(text)


def test_control_character_is_named():
    err = rejected_quickly("M\u200bk")
    assert err.message == "unexpected control character U+200B"
    assert err.column == 2


@pytest.mark.parametrize("value", [None, b"x", 3, 3.5, ["x"], {"x": 1}, object()])
def test_non_text(value):
    rejected_quickly(value)


# -- fuzz: any string of the language's own tokens ----------------------------------------
TOKENS = ["u", "x", "M", "k", "v", "A", "0", "1", "9", "64", "0.5", "+", "-", "*", "/", "^", "^T", "'", "_",
          "{", "}", "(", ")", "[", "]", ",", "&", r"\\", r"\frac", r"\sqrt", r"\|", "||", r"\langle", r"\rangle",
          r"\exp", r"\log", r"\sin", "O(", r"\mathcal{O}", r"\begin{bmatrix}", r"\end{bmatrix}", r"\cdot", " ",
          r"\left(", r"\right)", r"\top", "T", r"\mathbf", "C", r"\lambda", "\u03b2"]


def test_fuzz_only_math_errors():
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    @hypothesis.settings(max_examples=400, deadline=None, derandomize=True, database=None)
    @hypothesis.given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=30))
    def check(tokens):
        text = "".join(tokens)
        for table in (TABLE, FREE_TABLE):
            start = time.perf_counter()
            try:
                parse(text, table)
            except MathError:
                pass
            except Exception as err:  # noqa: BLE001
                if "^T^" in text.replace(r"\top", "T").replace(" ", ""):
                    continue  # the known ^T^ bug, tested on its own in test_errors.py
                raise AssertionError(f"{type(err).__name__} on {text!r}: {err}") from err
            assert time.perf_counter() - start < BUDGET, text

    check()


# -- known to hang or crash: run in child processes with a hard timeout --------------------
CHILD = r"""
import json, sys, time
from attngrade.errors import MathError
from attngrade.mathlang import SymbolTable, parse
table = SymbolTable.from_data(json.loads(sys.argv[2]))
start = time.perf_counter()
try:
    parse(sys.argv[1], table)
    outcome = "accepted"
except MathError:
    outcome = "MathError"
except BaseException as err:
    outcome = type(err).__name__
print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - start}))
"""
CHILD_TIMEOUT = 90.0  # for all children together: imports on a busy 2-core machine; the parse itself must take < BUDGET

ISOLATED = {
    "exp-tower-squared": r"\exp(\exp(\exp(100)))^{2}",
    "exp-tower-exponent": r"x^{\exp(\exp(\exp(100)))}",
    "sin-of-huge-in-denominator": r"\frac{1}{\sin(\exp(10^{10}))}",
    "log-of-sin-of-exp-tower": r"\log(\sin(\exp(\exp(\exp(100)))))",
    "exp-tower-minus-one-in-denominator": r"\frac{1}{\exp(\exp(\exp(100)))-1}",
    "exp-tower-4-squared": r"\exp(\exp(\exp(\exp(10))))^{2}",
    "sin-of-6400-digit-number-in-denominator": r"\frac{1}{\sin(" + "10^{64}" * 100 + ")}",
}


@pytest.fixture(scope="module")
def isolated_results():
    """Run every ISOLATED answer in its own child process, all at once."""
    procs = {
        name: subprocess.Popen([sys.executable, "-c", CHILD, text, json.dumps(SYMBOLS)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, text in ISOLATED.items()
    }
    deadline = time.monotonic() + CHILD_TIMEOUT
    results = {}
    for name, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
            try:
                results[name] = json.loads(out.strip().splitlines()[-1])
            except (IndexError, ValueError):
                results[name] = {"outcome": f"child failed: {err.strip()[-200:]}", "seconds": None}
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            results[name] = {"outcome": "timeout", "seconds": None}
    return results


def _check_isolated(results, name):
    result = results[name]
    assert result["outcome"] == "MathError", f"{ISOLATED[name]!r}: {result}"
    assert result["seconds"] < BUDGET, f"{ISOLATED[name]!r}: {result}"


def test_exp_tower_squared(isolated_results):
    _check_isolated(isolated_results, "exp-tower-squared")


def test_exp_tower_exponent(isolated_results):
    _check_isolated(isolated_results, "exp-tower-exponent")


def test_sin_of_huge_in_denominator(isolated_results):
    _check_isolated(isolated_results, "sin-of-huge-in-denominator")


def test_log_of_sin_of_exp_tower(isolated_results):
    _check_isolated(isolated_results, "log-of-sin-of-exp-tower")


def test_exp_tower_minus_one_in_denominator(isolated_results):
    _check_isolated(isolated_results, "exp-tower-minus-one-in-denominator")


def test_exp_tower_4_squared(isolated_results):
    _check_isolated(isolated_results, "exp-tower-4-squared")


def test_sin_of_6400_digit_number_in_denominator(isolated_results):
    _check_isolated(isolated_results, "sin-of-6400-digit-number-in-denominator")


# pylatexenc's tolerant parser backtracks over every argument left open: `\sqrt[` thirty times would take
# hours. The front end gives it only text whose braces and brackets pair up, and reads definitions itself.
@pytest.mark.parametrize("text", [r"\begin{aligned}" + r"\sqrt[" * 30 + r"\end{aligned}",
                                  r"\begin{bmatrix}" + r"\frac{" * 30 + r"\end{bmatrix}",
                                  r"\newcommand{\x}{" * 30 + r"\x",
                                  r"\newcommand{\x}[2][" * 30 + "a"])
def test_open_arguments_in_latex_are_refused_quickly(text):
    rejected_quickly(text)


def test_a_file_of_broken_definitions_is_scanned_quickly():
    from attngrade.mathlang.macros import find_definitions

    start = time.perf_counter()
    assert find_definitions(r"\newcommand{" * 100_000 + r"\sqrt[" * 1000) == ()
    assert len(find_definitions(r"\newcommand{\a}{x}" * 100_000)) == 1  # one name, defined again and again
    assert time.perf_counter() - start < BUDGET


def test_an_answer_cannot_hide_open_arguments_behind_iffalse_or_end_document():
    """Only a whole LaTeX file skips what \\iffalse skips and what follows \\end{document}: in an answer's text
    they hide no brace or bracket from the pairing that keeps open arguments away from the tolerant parser."""
    from attngrade.mathlang.macros import unpaired, walkable

    for prefix in ("\\iffalse", "\\end{document}", "\\begin{aligned}\\iffalse"):
        assert not walkable(prefix + "\\sqrt[" * 20)
    assert unpaired("\\iffalse {\\fi").braces == ()  # a whole file: TeX pairs nothing it skips
