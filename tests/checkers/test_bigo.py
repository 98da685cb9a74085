"""bigO: orders of growth compared by f/g along growth paths, on real parts and parsed answers."""

from __future__ import annotations

import pytest

from pathlib import Path

from attngrade.checkers import bigo
from attngrade.checkers.base import Context
from attngrade.errors import ConfigError, MathError
from attngrade.grading import assignment, grade_answer
from attngrade.grading import Options
from attngrade.grading import grade as pipeline_grade
from attngrade.problems.keys import Keys, load_keys
from attngrade.mathlang import SymbolTable, parse
from attngrade.problems import load_homework, prepare_part
from attngrade.reading import FieldError, read_field
from attngrade.records import CheckSpec, Field, Homework, Part, Problem, Submission

SYMBOLS = {name: {"assumptions": ["positive"]} for name in ("M", "N", "k")}
POINTS = 2.0


def make_part(params=None, symbols=None, expect="bigO"):
    table = SymbolTable.from_data(symbols or SYMBOLS)
    spec = CheckSpec(check="bigO", fields=("cost",), points=POINTS, params=dict(params or {}))
    return prepare_part(Part(id="2a", points=POINTS, statement="The cost of one attention layer.",
                             fields=(Field(name="cost", kind="math", expect=expect),), checks=(spec,), table=table,
                             problem="test-bigo"))


def grade(answer, key, params=None, symbols=None):
    part = make_part(params, symbols)
    ctx = Context(part=part, spec=part.checks[0], key={"cost": parse(key, part.table)})
    return bigo.check({"cost": parse(answer, part.table)}, ctx)


# -- same order ------------------------------------------------------------------------
@pytest.mark.parametrize("answer", ["O(M^2 k)", "O(k M^2)", "O(M M k)", r"\mathcal{O}(M^2k)", "O(M^2 \\cdot k)"])
def test_the_same_monomial_in_any_notation_is_full_marks_without_notes(answer):
    outcome = grade(answer, "O(M^2 k)")
    assert outcome.earned == POINTS
    assert outcome.feedback == ()
    assert outcome.evidence["order"] == "same"


def test_constants_and_lower_order_terms_get_full_marks_and_a_note():
    outcome = grade("O(2M^2k + Mk)", "O(M^2 k)")
    assert outcome.earned == POINTS
    assert outcome.feedback == ("cost: constant factors and lower-order terms are unnecessary inside O(...); "
                                "O(k M^2) says the same",)


@pytest.mark.parametrize(("answer", "what"), [("O(3 M^2 k)", "constant factors"), ("O(M^2 k / 2)", "constant factors"),
                                              ("O(M^2 k - M k)", "lower-order terms"),
                                              ("O(M^2 k + M + k)", "lower-order terms")])
def test_each_kind_of_untidiness_is_named(answer, what):
    outcome = grade(answer, "O(M^2 k)")
    assert outcome.earned == POINTS
    assert len(outcome.feedback) == 1
    assert outcome.feedback[0].startswith(f"cost: {what} are unnecessary inside O(...)")


def test_a_sum_key_with_every_term_needed_gets_no_note():
    outcome = grade("O(M N (M + N))", "O(M^2 N + M N^2)")
    assert outcome.earned == POINTS
    assert outcome.feedback == ()


# -- not tight ---------------------------------------------------------------------------
def test_a_loose_upper_bound_gets_the_loose_points_with_the_reason():
    outcome = grade("O(M^3 k)", "O(M^2 k)", params={"loose_points": 1})
    assert outcome.earned == 1.0
    assert outcome.feedback == ("cost: O(k M^3) is an upper bound but not tight: it grows faster than the "
                                "expected order by a factor of M",)
    assert outcome.evidence["order"] == "faster"


def test_a_loose_upper_bound_gets_nothing_by_default():
    outcome = grade("O(M^3 k)", "O(M^2 k)")
    assert outcome.earned == 0.0
    assert "upper bound but not tight" in outcome.feedback[0]


def test_loose_points_never_exceed_the_check():
    assert grade("O(M^3 k)", "O(M^2 k)", params={"loose_points": 5}).earned == POINTS


def test_a_loose_sum_names_the_direction_it_grows_too_fast():
    outcome = grade("O(M^2 k + M^3)", "O(M^2 k)", params={"loose_points": 1})
    assert outcome.earned == 1.0
    assert outcome.feedback == ("cost: O(M^3 + k M^2) is an upper bound but not tight: it grows faster than the "
                                "expected order when M grows with k fixed",)


# -- too small and incomparable ---------------------------------------------------------
def test_too_small_is_zero_and_names_the_missing_factor():
    outcome = grade("O(Mk)", "O(M^2 k)", params={"loose_points": 1})
    assert outcome.earned == 0.0
    assert outcome.feedback == ("cost: too small: the cost grows like k M^2; your O(M k) misses a factor of M",)
    assert outcome.evidence["order"] == "slower"


@pytest.mark.parametrize("answer", ["O(MNk)", "O(N M k)", "O(k N M)", "O(N k M + N)"])
def test_three_variable_key_in_any_order(answer):
    assert grade(answer, "O(MNk)").earned == POINTS


def test_one_variable_for_another_is_incomparable_and_zero():
    outcome = grade("O(M^2 k)", "O(MNk)", params={"loose_points": 1})
    assert outcome.earned == 0.0
    assert outcome.evidence["order"] == "incomparable"
    (message,) = outcome.feedback
    assert message.startswith("cost: O(k M^2) is not the expected order: it grows faster when M grows")
    assert "more slowly when N grows" in message
    assert "off by a factor of M/N" in message


def test_the_key_variable_matters():
    assert grade("O(N^2 k)", "O(N^2 k)").earned == POINTS
    wrong = grade("O(M^2 k)", "O(N^2 k)", params={"loose_points": 1})
    assert wrong.earned == 0.0 and wrong.evidence["order"] == "incomparable"


def test_incomparable_only_in_a_mixed_direction_is_found():
    # (MN)^{3/2} beats M^2 + N^2 only when M and N grow together; on each axis it is smaller.
    outcome = grade("O((M N)^{3/2})", "O(M^2 + N^2)", params={"loose_points": 1})
    assert outcome.earned == 0.0
    assert outcome.evidence["order"] == "incomparable"
    assert "faster when M and N grow together" in outcome.feedback[0]


def test_a_term_too_big_only_at_unequal_rates_is_found():
    # (MN)^{3/2} is below M^4 + N^2 on both axes and on the diagonal, above it when N grows like M^2.
    outcome = grade("O(M^4 + N^2 + (M N)^{3/2})", "O(M^4 + N^2)", params={"loose_points": 1})
    assert outcome.earned == 1.0
    assert outcome.evidence["order"] == "faster"
    assert grade("O(M^4 + N^2 + M N)", "O(M^4 + N^2)").earned == POINTS


# -- logs and exponentials ---------------------------------------------------------------
def test_a_log_factor_is_not_the_same_order():
    loose = grade(r"O(N \log(N))", "O(N)", params={"loose_points": 1})
    assert loose.earned == 1.0
    assert loose.feedback == ("cost: O(N log(N)) is an upper bound but not tight: it grows faster than the "
                              "expected order by a factor of log(N)",)
    small = grade("O(N)", r"O(N \log(N))", params={"loose_points": 1})
    assert small.earned == 0.0
    assert small.feedback == ("cost: too small: the cost grows like N log(N); your O(N) misses a factor of log(N)",)


@pytest.mark.parametrize("answer", [r"O(N \log(N))", r"O(\log N \cdot N)", r"O(N \ln(N^2))", r"O(N \log(N) + N)"])
def test_n_log_n_in_several_spellings(answer):
    assert grade(answer, r"O(N \log(N))").earned == POINTS


def test_log_log_is_smaller_than_log():
    assert grade(r"O(\log(\log(N)))", r"O(\log(N))").evidence["order"] == "slower"


def test_exponentials_are_compared_by_limits():
    assert grade("O(N^5)", "O(2^N)").evidence["order"] == "slower"
    assert grade("O(3^N)", "O(2^N)").evidence["order"] == "faster"
    assert grade("O(2^N N)", "O(2^N)").evidence["order"] == "faster"
    assert grade("O(2^{N+1})", "O(2^N)").earned == POINTS


def test_what_nothing_can_decide_goes_to_staff():
    symbols = {"N": {"assumptions": ["positive"]}, "f": {"kind": "function"}}
    outcome = grade("O(f(N))", "O(N)", symbols=symbols)
    assert outcome.is_pending and outcome.earned == 0.0
    assert "course staff will grade it by hand" in outcome.feedback[0]


# -- not an order of growth --------------------------------------------------------------
@pytest.mark.parametrize(("answer", "why"), [("O(0)", "it is zero"), ("O(-M)", "it is not positive"),
                                             ("O(M - N)", "it is not positive when N grows")])
def test_non_positive_answers_are_zero(answer, why):
    outcome = grade(answer, "O(M^2 k)", params={"loose_points": 1})
    assert outcome.earned == 0.0
    assert outcome.evidence["order"] == "invalid"
    assert why in outcome.feedback[0]


def test_a_scalar_without_the_O_is_read_as_an_order_with_a_note():
    part = make_part(expect=None)
    ctx = Context(part=part, spec=part.checks[0], key={"cost": parse("O(M^2 k)", part.table)})
    outcome = bigo.check({"cost": parse("M^2 k", part.table)}, ctx)
    assert outcome.earned == POINTS
    assert outcome.feedback == ("cost: read k M^2 as O(k M^2)",)


# -- params and keys ---------------------------------------------------------------------
def test_variables_param_makes_other_symbols_constants():
    assert grade("O(N M^2 k)", "O(M^2 k)").evidence["order"] == "faster"
    outcome = grade("O(N M^2 k)", "O(M^2 k)", params={"variables": ["M", "k"]})
    assert outcome.earned == POINTS
    assert outcome.feedback == ("cost: constant factors are unnecessary inside O(...); O(k M^2) says the same",)


@pytest.mark.parametrize("params", [{"loose_points": "half"}, {"loose_points": -1}, {"variables": ["Q"]},
                                    {"variables": "M"}, {"tight": True}])
def test_bad_params_are_config_errors(params):
    with pytest.raises(ConfigError):
        grade("O(M^2 k)", "O(M^2 k)", params=params)


def test_a_key_that_is_not_a_positive_order_is_a_config_error():
    with pytest.raises(ConfigError, match="not a positive order of growth"):
        grade("O(M)", "O(M - N)")


# -- unreadable answers never reach the check --------------------------------------------
def test_a_malformed_answer_is_a_math_error_not_a_wrong_answer():
    part = make_part()
    with pytest.raises(MathError) as err:
        parse("O(M^2 k", part.table)
    assert "never closed" in err.value.message
    with pytest.raises(FieldError, match="never closed"):
        read_field(part, part.field("cost"), "O(M^2 k")


def test_through_the_pipeline_malformed_is_invalid_and_good_is_correct():
    part = make_part(params={"loose_points": 1})
    homework = Homework(id="hw-bigo", title="", course="",
                        problems=(Problem(id="test-bigo", title="", source="", intro="", parts=(part,)),))
    keys = Keys(homework="hw-bigo", answers={"2a": {"cost": parse("O(M^2 k)", part.table)}})
    given = assignment(homework, keys)

    graded = pipeline_grade([Submission("s", "hw-bigo", {"2a": "O(M^2 k"}, Path("s.yaml"))],
                            Options(assignments={"hw-bigo": given}))
    bad = grade_answer(given, "2a", "O(M^2 k")
    assert bad.status == "invalid" and bad.score == 0
    assert not any("too small" in f or "not tight" in f for f in bad.feedback)
    assert graded.stats.checks == 0 and graded.stats.tasks == 0  # the check never ran

    good = grade_answer(given, "2a", r"\mathcal{O}(k M^2)")
    assert good.status == "correct" and good.score == POINTS
    loose = grade_answer(given, "2a", "O(M^3 k)")
    assert loose.status == "partial" and loose.score == 1.0


def test_symbols_the_key_uses_are_not_constant_factors_to_drop():
    # Only N grows, but D_random and M are in the key: writing them is not untidy.
    symbols = {name: {"assumptions": ["positive"]} for name in ("N", "M", "D")}
    outcome = grade("O(N D M)", "O(N D M)", params={"variables": ["N"]}, symbols=symbols)
    assert outcome.earned == POINTS and outcome.feedback == ()
    assert grade("O(N)", "O(N D M)", params={"variables": ["N"]}, symbols=symbols).earned == POINTS
    tight = grade("O(N^2 D M)", "O(N D M)", params={"variables": ["N"]}, symbols=symbols)
    assert tight.feedback[0].endswith("by a factor of N")


def test_a_field_with_its_own_symbols_uses_them():
    fields_table = SymbolTable.from_data({"L": {"assumptions": ["positive"]}, "d": {"assumptions": ["positive"]}})
    spec = CheckSpec(check="bigO", fields=("cost",), points=POINTS, params={"variables": ["L"]})
    part = prepare_part(Part(id="3c", points=POINTS, statement="", checks=(spec,), problem="test-bigo",
                             fields=(Field(name="cost", kind="math", expect="bigO", table=fields_table),),
                             table=SymbolTable.from_data({"q": {"kind": "vector"}})))
    spec = part.checks[0]
    ctx = Context(part=part, spec=spec, key={"cost": parse("O(L^2 d)", fields_table)})
    assert bigo.check({"cost": parse("O(L^2 d)", fields_table)}, ctx).earned == POINTS
    assert bigo.check({"cost": parse("O(L d)", fields_table)}, ctx).evidence["order"] == "slower"


# -- the bank's own parts ----------------------------------------------------------------
@pytest.mark.parametrize(("name", "answer", "earned"), [
    ("encoder", "O(M^2k)", 1.0), ("encoder", "O(Mk)", 0.0), ("cross", "O(NMk)", 1.0),
    ("cross", "O(M^2 k)", 0.0), ("decoder", r"\mathcal{O}(k N^2)", 1.0), ("decoder", "O(N^2 k^2)", 0.0),
])
def test_sp23_attention_costs_against_their_keys(root, name, answer, earned):
    homework = load_homework("eecs182-sp23-transformers")
    keys = load_keys(root / "solutions", homework)
    part = homework.part("f")
    (spec,) = [s for s in part.checks if s.fields == (name,)]
    ctx = Context(part=part, spec=spec, key=keys.answers["f"])
    assert bigo.check({name: parse(answer, ctx.table)}, ctx).earned == earned


def test_hw8_causal_cost_grows_in_n_only():
    part = load_homework("eecs182-fa22-hw8").part("3b")
    (spec,) = [s for s in part.checks if s.check == "bigO"]
    table = part.table_for("cost")
    ctx = Context(part=part, spec=spec, key={"cost": parse("O(N D_random M)", table)})
    assert bigo.check({"cost": parse("O(N R M)", table)}, ctx).earned == spec.points
    assert bigo.check({"cost": parse("O(N)", table)}, ctx).earned == spec.points
    assert bigo.check({"cost": parse("O(N^2 R M)", table)}, ctx).evidence["order"] == "faster"


def test_an_answer_the_exact_analysis_cannot_follow_is_judged_on_every_path():
    """exp(1/M) sends it to sympy's limits. Along M, N, k alone, together or in pairs it grows like
    M N k; where N grows like M^2 it grows more slowly, and that path decides."""
    wrong = grade(r"O(M N k (M/N + N/M + \sqrt{M N})/(M+N) \exp(1/M))", "O(M N k)")
    assert wrong.earned == 0.0 and wrong.evidence["order"] == "slower", wrong
    assert "when N grows like M^2" in wrong.feedback[0]
    right = grade(r"O(M N k \exp(1/M))", "O(M N k)")  # exp(1/M) tends to 1: the same order
    assert right.earned == POINTS and right.evidence["order"] == "same", right


# -- lower-order terms wherever they sit, and the `lower_order` param ------------------------------------
@pytest.mark.parametrize("answer", ["O(M^2 k + M^2)", "O(M^2 (k + 1))", "O((M + 1)^2 k)", "O(M^2 (k + 1) + M k)",
                                    "O(M (M k + 1))"])
def test_a_lower_order_term_inside_a_factor_is_treated_as_one_at_the_top(answer):
    outcome = grade(answer, "O(M^2 k)", {"untidy_points": 1.0})
    assert outcome.earned == 1.0, outcome.feedback
    assert "lower-order terms do not belong inside O(...): write O(k M^2)" in str(outcome.feedback[0])


def test_a_factor_the_key_needs_is_not_a_lower_order_term():
    outcome = grade("O(N (D + M))", "O(N (D + M))", {"untidy_points": 1.0},
                    symbols={name: {"assumptions": ["positive"]} for name in ("N", "D", "M")})
    assert outcome.earned == POINTS and outcome.feedback == ()


@pytest.mark.parametrize("lower_order, earned", [("half", POINTS / 2), ("full", POINTS), (None, POINTS)])
def test_lower_order_half_is_prairielearns_half_and_full_is_the_default(lower_order, earned):
    params = {} if lower_order is None else {"lower_order": lower_order}
    for answer in ("O(M^2 (k + 1))", "O(M^2 k + M^2)", "O(2 M^2 k)"):
        assert grade(answer, "O(M^2 k)", params).earned == earned, answer
    assert grade("O(M^2 k)", "O(M^2 k)", params).earned == POINTS


@pytest.mark.parametrize("params, message", [({"lower_order": "halve"}, "did you mean 'half'?"),
                                             ({"lower_order": "half", "untidy_points": 1}, "not both")])
def test_lower_order_is_checked_when_the_problem_loads(params, message):
    with pytest.raises(ConfigError, match=message):
        make_part(params)


def test_max_and_min_grow_like_their_faster_and_slower_terms():
    assert grade(r"O(\max(M, N)^2 k)", "O((M + N)^2 k)").earned == POINTS
    assert grade(r"O(\min(M, N) k)", "O(M k)").evidence["order"] == "slower"


def test_a_chain_of_orders_must_be_one_order():
    assert grade("O(M^2 k + M k) = O(M^2 k)", "O(M^2 k)").earned == POINTS
    outcome = grade("O(M^2) = O(M^2 k)", "O(M^2 k)")
    assert outcome.invalid and "different orders" in str(outcome.feedback[-1])
