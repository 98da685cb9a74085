"""Property: no wrong module passes a code check, whatever numbers it puts in its own parameters.

A tolerance that grows with the student's output is a door: a synthesizer with no attention at all
once passed the equation because one bias of 1e6 made "equal to 0.1 % of the largest value" wide
enough. Here every code check that compares numbers (`synthesizer`, `torch_module`) gets wrong
modules, each an edit of the reference solution's code, with an extreme value (1e6, 1e-6, NaN,
±inf, 0, -0, huge negative) written into one element of one of its parameters, in `__init__` or at
every call of forward. None may earn the check's points, and the property its edit breaks must
fail. The right module with such a value in `__init__` keeps full marks: attngrade copies in its own
weights (the synthesizer's, or the reference's), so what the module does with them is what counts.

The judging functions get the same treatment without the sandbox (`test_judges_*`): data as the
child could send it, wrong in one place, with extremes written anywhere else.

CI runs a fixed set of examples (derandomize); ATTNGRADE_EXPLORE=N explores N fresh ones.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attngrade.checkers import REGISTRY
from attngrade.checkers.base import Context
from attngrade.checkers.synthesizer import MOVED, _gpt
from attngrade.checkers.torch_module import causal_property, equal_outputs, rows_property
from attngrade.problems import Bank, load_homework
from attngrade.reading import FileReading

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "solutions" / "cs224n-w21-a5" / "reference"
BANK = ROOT / "tests" / "data" / "banks" / "torch-module"
EXPLORE = int(os.environ.get("ATTNGRADE_EXPLORE", "0"))
SANDBOXED = settings(max_examples=EXPLORE or 20, deadline=None, derandomize=not EXPLORE, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
JUDGED = settings(max_examples=EXPLORE or 200, deadline=None, derandomize=not EXPLORE, database=None)

EXTREMES = ["1e6", "1e-6", "float('nan')", "float('inf')", "float('-inf')", "0.0", "-0.0", "-1e30", "-3.4e38"]
VALUES = [1e6, 1e-6, float("nan"), float("inf"), float("-inf"), 0.0, -0.0, -1e30, -3.4e38, 1e300]

# -- the synthesizer ---------------------------------------------------------------------------
# Edits of SynthesizerAttention.forward in the reference's attention.py; each breaks the equation.
SYNTHESIZER_WRONG = {
    "no attention": ("y = (weights @ v)", "y = (v + 0 * weights.sum())"),
    "no ReLU": ("hidden = F.relu(self.w1(x))", "hidden = (self.w1(x))"),
    "no mask": ('scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))', "scores = scores"),
    "softmax over the queries": ("F.softmax(scores, dim=-1)", "F.softmax(scores, dim=-2)"),
    "scaled scores": ("scores = hidden @ self.w2[:, :t]", "scores = hidden @ self.w2[:, :t] / (c // h) ** 0.5"),
    "no b2": ("scores = hidden @ self.w2[:, :t] + self.b2[:t]", "scores = hidden @ self.w2[:, :t] + 0 * self.b2[:t]"),
    "w2's last columns": ("scores = hidden @ self.w2[:, :t] + self.b2[:t]",
                          "scores = hidden @ self.w2[:, -t:] + self.b2[-t:]"),
    "no projection": ("return self.resid_drop(self.proj(y))", "return self.resid_drop(y + 0 * self.proj(y))"),
    "uniform weights": ("weights = self.attn_drop(F.softmax(scores, dim=-1))",
                        "weights = self.attn_drop(F.softmax(torch.where(torch.isinf(scores), scores, 0 * scores), "
                        "dim=-1))"),
}
SYNTHESIZER_PARAMS = {"w1.weight": 256, "w1.bias": 16, "w2": 44, "b2": 11, "value.weight": 256, "value.bias": 16,
                      "proj.weight": 256, "proj.bias": 16}  # the default config: n_embd 16, n_head 4, block 12
SYNTHESIZER_INIT = "        nn.init.uniform_(self.w2, -0.001, 0.001)\n"
FORWARD = "        b, t, c = x.size()\n"  # the first line of either forward


def reading(name: str, text: str) -> FileReading:
    return FileReading.of(name, text, hashlib.sha256(text.encode()).hexdigest())


def with_extremes(text: str, anchor: str, extremes: list[tuple[str, int, str]]) -> str:
    """`text` with each `self.<param>` set at flat `index` to `value`, on lines after `anchor`."""
    lines = "".join(f"            self.{param}.view(-1)[{index}] = {value}\n" for param, index, value in extremes)
    assert text.count(anchor) == 1, anchor
    return text.replace(anchor, anchor + "        with torch.no_grad():\n" + lines) if extremes else text


def synthesizer_module(wrong: str | None, extremes: list[tuple[str, int, str]], where: str) -> str:
    reference = (REFERENCE / "attention.py").read_text()
    head, tail = reference.split("class SynthesizerAttention", 1)
    if wrong is not None:
        old, new = SYNTHESIZER_WRONG[wrong]
        assert tail.count(old) == 1, wrong
        tail = tail.replace(old, new)
    anchor = SYNTHESIZER_INIT if where == "init" else FORWARD
    return head + "class SynthesizerAttention" + with_extremes(tail, anchor, extremes)


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def synthesizer_check():
    part = load_homework("cs224n-w21-a5").part("2g.i")
    spec = next(s for s in part.checks if s.check == "synthesizer")
    model = reading("model.py", (REFERENCE / "model.py").read_text())

    def run(attention: str):
        outcome = REGISTRY["synthesizer"].run({"attention": reading("attention.py", attention), "model": model},
                                              Context(part, spec))
        failed = [p["name"] for p in outcome.evidence.get("properties", []) if not p["ok"]]
        return outcome, failed, spec.points

    return run


@st.composite
def extreme(draw, params: dict[str, int]) -> tuple[str, int, str]:
    param = draw(st.sampled_from(sorted(params)))
    return param, draw(st.integers(0, params[param] - 1)), draw(st.sampled_from(EXTREMES))


def extreme_sets(params: dict[str, int]) -> st.SearchStrategy[list[tuple[str, int, str]]]:
    """One to three elements of the module's parameters, each set to an extreme value."""
    return st.lists(extreme(params), min_size=1, max_size=3)


@SANDBOXED
@given(wrong=st.sampled_from(sorted(SYNTHESIZER_WRONG)), extremes=extreme_sets(SYNTHESIZER_PARAMS),
       where=st.sampled_from(["init", "forward"]))
def test_no_wrong_synthesizer_passes_whatever_its_parameters_hold(torch, synthesizer_check, wrong, extremes, where):
    outcome, failed, points = synthesizer_check(synthesizer_module(wrong, extremes, where))
    assert outcome.earned < points and not outcome.failed and not outcome.is_pending, outcome.feedback
    assert "equation" in failed, (wrong, extremes, where, outcome.feedback)


@pytest.mark.parametrize("wrong", sorted(SYNTHESIZER_WRONG))
def test_each_wrong_synthesizer_fails_the_equation_as_it_is(torch, synthesizer_check, wrong):
    outcome, failed, points = synthesizer_check(synthesizer_module(wrong, [], "init"))
    assert "equation" in failed and outcome.earned < points, outcome.feedback


@SANDBOXED
@given(extremes=extreme_sets(SYNTHESIZER_PARAMS))
def test_the_right_synthesizer_keeps_its_points_whatever_its_init_puts_in_its_parameters(torch, synthesizer_check,
                                                                                          extremes):
    """Every property of the module itself holds. The model is another matter: GPT(config) builds the
    module as its __init__ leaves it, and a NaN there makes the model's logits NaN (`gpt` fails)."""
    outcome, failed, points = synthesizer_check(synthesizer_module(None, extremes, "init"))
    assert set(failed) <= {"gpt"}, outcome.feedback
    assert outcome.earned == (points if not failed else points * (1 - 1.5 / 8)), outcome.feedback


def test_a_synthesizer_without_attention_and_one_huge_bias_fails_the_equation(torch, synthesizer_check):
    """The module that once earned every code point: no attention, gradients to every parameter,
    and proj.bias[0] = 1e6 in __init__."""
    module = synthesizer_module("no attention", [("proj.bias", 0, "1e6")], "init")
    module = module.replace("y = (v + 0 * weights.sum())", "y = (v + 1e-12 * (weights ** 2).sum())")
    outcome, failed, points = synthesizer_check(module)
    assert failed == ["equation"] and outcome.earned == points - points * 3 / 8, outcome.feedback


# -- torch_module: CausalSelfAttention against the reference module ------------------------------
CAUSAL_WRONG = {  # edits of CausalSelfAttention.forward, and the property each must fail
    "no attention": (("y = (weights @ v)", "y = (v + 0 * weights.sum())"), "reference"),
    "softmax over the queries": (("F.softmax(scores, dim=-1)", "F.softmax(scores, dim=-2)"), "reference"),
    "no mask": (('scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))', "scores = scores"),
                "causal"),
    "divided by d": (("/ math.sqrt(k.size(-1))", "/ k.size(-1)"), "reference"),
    "no projection": (("return self.resid_drop(self.proj(y))", "return self.resid_drop(y + 0 * self.proj(y))"),
                      "reference"),
}
CAUSAL_PARAMS = {f"{layer}.{kind}": 256 if kind == "weight" else 16
                 for layer in ("key", "query", "value", "proj") for kind in ("weight", "bias")}
CAUSAL_INIT = "        _output_side(self, config)\n"


def causal_module(wrong: str | None, extremes: list[tuple[str, int, str]], where: str) -> str:
    reference = (REFERENCE / "attention.py").read_text()
    head, tail = reference.split("class SynthesizerAttention", 1)
    if wrong is not None:
        old, new = CAUSAL_WRONG[wrong][0]
        assert head.count(old) == 1, wrong
        head = head.replace(old, new)
    anchor = CAUSAL_INIT if where == "init" else FORWARD
    return with_extremes(head, anchor, extremes) + "class SynthesizerAttention" + tail


@pytest.fixture(scope="module")
def causal_check():
    homework = Bank(BANK).load_homework("attention-code")
    part = homework.parts[0]
    spec = part.checks[0]

    def run(attention: str):
        outcome = REGISTRY["torch_module"].run({"code": reading("attention.py", attention)}, Context(part, spec))
        failed = [p["name"] for p in outcome.evidence.get("properties", []) if not p["ok"]]
        return outcome, failed, spec.points

    return run


@SANDBOXED
@given(wrong=st.sampled_from(sorted(CAUSAL_WRONG)), extremes=extreme_sets(CAUSAL_PARAMS),
       where=st.sampled_from(["init", "forward"]))
def test_no_wrong_causal_attention_passes_whatever_its_parameters_hold(torch, causal_check, wrong, extremes, where):
    outcome, failed, points = causal_check(causal_module(wrong, extremes, where))
    assert outcome.earned < points and not outcome.failed and not outcome.is_pending, outcome.feedback
    assert CAUSAL_WRONG[wrong][1] in failed, (wrong, extremes, where, outcome.feedback)


@pytest.mark.parametrize("wrong", sorted(CAUSAL_WRONG))
def test_each_wrong_causal_attention_fails_its_property_as_it_is(torch, causal_check, wrong):
    outcome, failed, points = causal_check(causal_module(wrong, [], "init"))
    assert CAUSAL_WRONG[wrong][1] in failed and outcome.earned < points, outcome.feedback


@SANDBOXED
@given(extremes=extreme_sets(CAUSAL_PARAMS))
def test_the_right_causal_attention_keeps_full_marks_whatever_its_init_puts_in_its_parameters(torch, causal_check,
                                                                                             extremes):
    outcome, failed, points = causal_check(causal_module(None, extremes, "init"))
    assert outcome.earned == points and not failed, outcome.feedback


# -- the judges, on data as the child could send it ----------------------------------------------
def sent(a: np.ndarray) -> dict:
    return {"shape": list(a.shape), "values": a.ravel().tolist()}


def planted(a: np.ndarray, spots: list[tuple[int, float]]) -> np.ndarray:
    out = a.copy().ravel()
    for index, value in spots:
        out[index % out.size] = value
    return out.reshape(a.shape)


SPOTS = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(VALUES)), min_size=1, max_size=4)
WRONG_BY = st.floats(0.01, 10.0).flatmap(lambda x: st.sampled_from([x, -x]))


@JUDGED
@given(seed=st.integers(0, 2**32 - 1), where=st.integers(0, 10**6), by=WRONG_BY, spots=SPOTS)
def test_judges_an_output_wrong_in_one_place_is_never_equal(seed, where, by, spots):
    """The expected output is attngrade's: extremes in the student's output widen nothing."""
    want = np.random.default_rng(seed).normal(size=(2, 3, 4))
    got = planted(want, [(where, want.ravel()[where % want.size] + by)])
    got = planted(got, [(s, v) for s, v in spots if s % got.size != where % got.size])
    job = {"lengths": [3]}
    assert not equal_outputs(job, {"outputs": {"3": sent(got)}}, {3: want}, "reference", "the outputs").ok
    assert equal_outputs(job, {"outputs": {"3": sent(want.astype(np.float32))}}, {3: want}, "reference",
                         "the outputs").ok


@JUDGED
@given(seed=st.integers(0, 2**32 - 1), where=st.integers(0, 10**6), by=WRONG_BY, spots=SPOTS,
       scale=st.sampled_from([0.0, 1.0, 3.0]))
def test_judges_outputs_that_see_the_future_are_never_causal(seed, where, by, spots, scale):
    """Changed outputs before position k: whatever else the outputs hold (the same in both runs, as a
    bias would be), the module is not causal, and never passes as causal."""
    full = np.random.default_rng(seed).normal(size=(2, 6, 4))
    k = 3
    changed = full.copy()
    changed[:, k:] += 1.0
    spot = (where % 2, where % k, where % 4)
    changed[spot] += by
    elsewhere = [(i, v) for i, v in spots if i % full.size != np.ravel_multi_index(spot, full.shape)]
    full, changed = planted(full, elsewhere), planted(changed, elsewhere)
    job = {"lengths": [6], "perturb_from": k}
    data = {"outputs": {"6": sent(full)}, "perturbed": sent(changed)}
    assert not causal_property(job, data, scale=scale).ok


@JUDGED
@given(seed=st.integers(0, 2**32 - 1), spots=SPOTS, leak=st.floats(0.01, 0.5))
def test_judges_attention_with_weight_on_later_positions_never_passes(seed, spots, leak):
    t = 4
    rows = np.tril(np.random.default_rng(seed).uniform(0.1, 1.0, size=(t, t)))
    rows[0, 1] = leak
    rows /= rows.sum(axis=-1, keepdims=True)
    rows = planted(rows, spots)
    assert not rows_property({"lengths": [t]}, {"attention": {str(t): sent(rows)}}).ok


@JUDGED
@given(seed=st.integers(0, 2**32 - 1), spots=SPOTS)
def test_judges_logits_that_do_not_move_never_show_the_synthesizer_used(seed, spots):
    """The same logits twice (a model that holds the synthesizer but never calls it), with extremes in
    both: the model does not use it, however large its logits."""
    logits = planted(np.random.default_rng(seed).normal(size=(2, 5, 7)), spots)
    gpt = {"modules": [["blocks.0.attn", "SynthesizerAttention", True]], "logits": sent(logits),
           "redrawn_logits": sent(logits)}
    option = {"gpt": True, "option": "synthesizer"}
    assert not _gpt({"gpt": gpt}, option, True).ok
    free = next(i for i in range(logits.size) if i not in {s % logits.size for s, _ in spots})
    moved = planted(logits, [(free, logits.ravel()[free] + 10 * MOVED)])
    if np.isfinite(logits).all():  # and a model whose logits do move, by a little, uses it
        assert _gpt({"gpt": {**gpt, "redrawn_logits": sent(moved)}}, option, True).ok
