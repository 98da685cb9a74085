"""equivalent and choice against the A5 key, and the manual check."""

from __future__ import annotations

from pathlib import Path

import pytest

from attngrade.checkers import REGISTRY, Context
from attngrade.mathlang import parse


def run(a5, a5_keys, part_id, index, **answers):
    part = a5.part(part_id)
    spec = part.checks[index]
    return REGISTRY[spec.check].run(answers, Context(part=part, spec=spec, key=a5_keys.answers[part_id],
                                                     explain=a5_keys.explain.get(part_id, {})))


@pytest.mark.parametrize("c2", ["u_a", "x_2", r"\mathbf{u}_a", "u_a^T", r"\frac{\beta^2 u_a}{\beta^2}",
                                "u_a + u_b - u_b", "(u_a u_a^T / beta^2) u_a"])
def test_c2_equivalent_forms(a5, a5_keys, c2):
    value = parse(c2, a5.part("1e.i").table)
    assert run(a5, a5_keys, "1e.i", 0, c2=value).earned == 1


@pytest.mark.parametrize("c2", ["u_b", "x_1", "2 u_a", "u_a/beta", "(u_a u_a^T) u_a"])
def test_c2_wrong_forms(a5, a5_keys, c2):
    outcome = run(a5, a5_keys, "1e.i", 0, c2=parse(c2, a5.part("1e.i").table))
    assert outcome.earned == 0
    assert outcome.feedback[0] == "c2: not equivalent to the expected answer"


def test_possible_yes_is_wrong_with_the_explanation(a5, a5_keys):
    outcome = run(a5, a5_keys, "1e.i", 1, possible=True)
    assert outcome.earned == 0
    assert outcome.feedback[0] == "possible: you answered yes; the expected answer is no"
    assert "2 beta^2" in outcome.feedback[1]
    assert run(a5, a5_keys, "1e.i", 1, possible=False).earned == 1


def test_manual_is_pending_and_shows_the_rubric(a5, a5_keys):
    part = a5.part("1a")
    outcome = REGISTRY["manual"].run({"answer": "anything"},
                                     Context(part=part, spec=part.checks[0], rubric=a5_keys.rubrics["1a"]))
    assert outcome.is_pending and outcome.earned == 0
    assert "k_j^T q" in outcome.evidence["rubric"]


# -- declared functions: K_Gauss (defined), φ (random features), softargmax_β (column-wise) --
def _hw8(part_id, index, **answers):
    from attngrade.problems.keys import load_keys
    from attngrade.problems import load_homework
    from pathlib import Path

    hw = load_homework("eecs182-fa22-hw8")
    part = hw.part(part_id)
    keys = load_keys(Path(__file__).resolve().parents[2] / "solutions", hw)
    values = {n: parse(t, part.table_for(n)) for n, t in answers.items()}
    spec = part.checks[index]
    return REGISTRY[spec.check].run(values, Context(part=part, spec=spec, key=keys.answers[part_id]))


@pytest.mark.parametrize("sim", [
    r"\exp(\frac{\|q\|^2}{2\sigma^2}) K_{Gauss}(q, k) \exp(\frac{\|k\|^2}{2\sigma^2})",
    r"K_Gauss(q, k) \exp((q^T q + k^T k)/(2 \sigma^2))",
    r"K_Gauss(q,k) exp(\|q\|^2/(2 \sqrt{D})) exp(\|k\|^2/(2 \sqrt{D}))",  # sigma^2 = sqrt(D)
])
def test_gaussian_kernel_forms(sim):
    assert _hw8("3a.i", 0, sim=sim).earned == 2


def test_the_kernel_must_be_used():
    outcome = _hw8("3a.i", 0, sim=r"\exp(q^T k/\sqrt{D})")
    assert outcome.earned == 0 and "in terms of K_Gauss" in outcome.feedback[0]


def test_wrong_kernel_form():
    assert _hw8("3a.i", 0, sim=r"K_Gauss(q, k) \exp(\|q\|^2/(2\sigma^2))").earned == 0


def test_feature_maps_and_causal_output():
    assert _hw8("3a.ii", 0, sim=r"\exp(\|q\|^2/(2\sigma^2)) \phi(q)^T \phi(k) \exp(\|k\|^2/(2\sigma^2))").earned == 2
    assert _hw8("3a.ii", 0, sim=r"\phi(q)^T \phi(k)").earned == 0
    assert _hw8("3b", 0, output=r"\frac{\phi(Q_i)^T S_i}{\phi(Q_i)^T Z_i}").earned == 2
    assert _hw8("3b", 0, output=r"\frac{\phi(Q_i)^T S_i}{\phi(Q_i)^T Z_i + 1}").earned == 0


def test_a_vector_written_the_other_way_round_is_named_as_written():
    column = _hw8("3b", 0, output=r"S_i^T \phi(Q_i) / (\phi(Q_i)^T Z_i)")  # the key is the row
    assert column.earned == 2
    assert "read as a row vector (you wrote a column vector)" in column.feedback


def test_column_softargmax():
    from attngrade.problems.keys import load_keys
    from attngrade.problems import load_homework
    from pathlib import Path

    hw = load_homework("nyu-dl-transformer")
    part = hw.part("1.1a")
    keys = load_keys(Path(__file__).resolve().parents[2] / "solutions", hw)
    ctx = Context(part=part, spec=part.checks[0], key=keys.answers["1.1a"])
    right = parse(r"V \mathrm{softargmax}_\beta(K^\top Q)", part.table)
    wrong = parse(r"V softargmax_beta(2 K^T Q)", part.table)  # a different temperature
    assert REGISTRY["equivalent"].run({"H": right}, ctx).earned == 0.5
    assert REGISTRY["equivalent"].run({"H": wrong}, ctx).earned == 0


# -- evidence: how it was decided, and where the sides differ ------------------------------------
def test_a_wrong_formula_keeps_the_instance_where_it_differs():
    from attngrade import grading
    from attngrade.problems.keys import load_keys
    from attngrade.problems import load_homework
    from attngrade.reports import render_student
    from attngrade.intake.submissions import load_submission

    root = Path(__file__).resolve().parents[2]
    hw = load_homework("eecs182-sp23-transformers")
    given = grading.assignment(hw, load_keys(root / "solutions", hw))
    result = grading.grade_submission(given, load_submission(root / "examples/eecs182-sp23-transformers/"
                                                                    "common-mistakes.yaml"))
    wrong = [v for v in result.parts if any("not equivalent" in f for f in v.feedback)]
    assert wrong, "the common mistakes include a formula that is not equivalent"
    decided = [info for key, info in wrong[0].evidence.items() if key.startswith("equivalent:")
               and info.get("mismatch")]
    assert decided and decided[0]["method"] == "numeric"
    mismatch = decided[0]["mismatch"]
    assert mismatch["yours"] != mismatch["expected"]
    html = render_student(result, hw)
    assert "where your answer and the expected one differ" in html


def test_an_equal_formula_says_how_it_was_decided():
    from attngrade import grading
    from attngrade.problems.keys import load_keys
    from attngrade.problems import load_homework

    root = Path(__file__).resolve().parents[2]
    hw = load_homework("eecs182-sp23-transformers")
    given = grading.assignment(hw, load_keys(root / "solutions", hw))
    key = given.keys.answers
    part_id = next(p.id for p in hw.parts if p.checks[0].check == "equivalent" and len(p.fields) == 1
                   and p.id in key)
    field = hw.part(part_id).fields[0].name
    verdict = grading.grade_answer(given, part_id, key[part_id][field].text)
    assert verdict.status == "correct"
    assert verdict.evidence[f"equivalent:{field}"]["method"] in ("expansion", "numeric")


# -- must_use: the answer depends on the function, not just names it -------------------------------------
@pytest.mark.parametrize("answer, uses", [
    (r"exp(\|q\|^2/(2 sigma^2)) K_Gauss(q, k) exp(\|k\|^2/(2 sigma^2))", True),
    (r"exp(q^T k / sigma^2) + \log(\exp(K_Gauss(q, k))) - K_Gauss(q, k)", False),  # named, then cancelled
    (r"exp(q^T k / sigma^2)", False),
    # a kernel of a point with itself is 1 whatever the kernel: it is not using the kernel
    (r"\exp(q^T k/\sqrt{D}) K_Gauss(q, q)", False),
    (r"\exp(q^T k/\sqrt{D}) K_Gauss(k, k)^2", False),
    (r"exp(\|q\|^2/(2 sigma^2)) K_Gauss(q, k) exp(\|k\|^2/(2 sigma^2)) K_Gauss(q, q)", True),
])
def test_must_use_means_the_value_depends_on_the_function(answer, uses):
    from attngrade import grading
    from attngrade.problems.keys import load_keys
    from attngrade.problems import load_homework

    root = Path(__file__).resolve().parents[2]
    hw = load_homework("eecs182-fa22-hw8")
    given = grading.assignment(hw, load_keys(root / "solutions", hw))
    verdict = grading.grade_answer(given, "3a.i", answer)
    asks = any("asks for it in terms of K_Gauss" in line for line in verdict.feedback)
    assert asks != uses, verdict.feedback
    assert (verdict.status == "correct") == uses


@pytest.mark.parametrize("beta", [r"1/\sqrt{d} + 10^{-9}", r"\frac{1 + 10^{-12}}{\sqrt{d}}", "d^{-1/2 - 10^{-9}}"])
def test_agreeing_to_many_digits_is_not_being_equal(beta):
    """Random instances in floating point agreed to 1e-7; the last one worked out exactly does not."""
    from attngrade.grading import assignment, grade_answer
    from attngrade.problems.keys import load_keys
    from attngrade.problems import load_homework

    hw = load_homework("nyu-dl-transformer")
    given = assignment(hw, load_keys(Path(__file__).resolve().parents[2] / "solutions", hw))
    verdict = grade_answer(given, "1.1b", {"beta": beta})
    assert verdict.score == 0, verdict.feedback
    assert any("worked out exactly the two differ" in line for line in verdict.feedback)
    right = grade_answer(given, "1.1b", {"beta": r"\sqrt{d}/d"})
    assert not any("differ" in line for line in right.feedback) and right.score > 0


def test_a_formula_not_in_the_asked_terms_says_so_when_it_is_also_not_equal():
    """3a.ii asks for the random features phi: the exact softmax kernel written with K_Gauss is
    not equal to the key (phi approximates it), and the reason worth telling is the missing phi."""
    outcome = _hw8("3a.ii", 0, sim=r"\exp(\|q\|^2/(2\sigma^2)) K_{Gauss}(q, k) \exp(\|k\|^2/(2\sigma^2))")
    assert outcome.earned == 0
    assert any("in terms of phi, which your answer does not use" in str(line) for line in outcome.feedback)


@pytest.mark.parametrize("beta", [r"0.70710678118/\sqrt{d/2}", r"1.41421356237/\sqrt{2d}", "d^{-0.5000000001}"])
def test_an_answer_written_with_decimals_is_judged_in_floating_point(beta):
    """What was written is a float: equal to seven digits is equal (the exact confirmation is for exact answers)."""
    from attngrade.grading import assignment, grade_answer
    from attngrade.problems.keys import load_keys
    from attngrade.problems import load_homework

    hw = load_homework("nyu-dl-transformer")
    given = assignment(hw, load_keys(Path(__file__).resolve().parents[2] / "solutions", hw))
    verdict = grade_answer(given, "1.1b", {"beta": beta})
    assert not any("differ" in line for line in verdict.feedback) and verdict.score > 0, verdict.feedback


def test_an_answer_is_judged_on_its_own_writing_not_on_a_classmates(data_dir, tmp_path):
    """Two answers read as the same formula, one written with a decimal: checked once for both,
    the exact one would have been judged by floating point as the decimal one was."""
    import json

    from attngrade.cli import main

    main(["run", str(data_dir / "classes/decimals-apart"), "-o", str(tmp_path / "out"), "--solutions",
          str(Path(__file__).resolve().parents[2] / "solutions"), "--workers", "0"])
    results = {r["student"]: {p["id"]: p for p in r["parts"]}
               for r in json.loads((tmp_path / "out" / "results.json").read_text())}
    exact = results["b-exact"]["1.1b"]
    assert exact["status"] == "incorrect", exact
    assert results["a-decimals"]["1.1b"]["score"] > exact["score"]  # floats judged the decimal one
    assert results["c-one-point-zero"]["1.1b"]["status"] == "incorrect"  # 1.0 is 1: judged exactly
