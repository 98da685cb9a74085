"""The data-driven torch_module check: CausalSelfAttention against the instructor's reference module."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attngrade.checkers.torch_module import (
    array,
    bounded,
    causal_property,
    equal_outputs,
    gradients_property,
    guarded,
    rows_property,
)

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "tests" / "data" / "banks" / "torch-module"
REFERENCE = ROOT / "solutions" / "cs224n-w21-a5" / "reference" / "attention.py"
EDITS = {  # a bug -> words of the failing property's feedback
    None: None,
    ("F.softmax(scores, dim=-1)", "F.softmax(scores, dim=-2)"): "attention weights: T=",
    ('scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))\n        weights',
     "weights"): "not causal",
    ("/ math.sqrt(k.size(-1))", "/ k.size(-1)"): "match the reference module",
    # masking by arithmetic: 0 * -inf is NaN on every allowed position, so every output is NaN
    ('scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))',
     'scores = scores * self.mask[:, :, :t, :t] + (1 - self.mask[:, :, :t, :t]) * float("-inf")'):
        "NaN or infinite",
}


def test_causal_self_attention_by_its_properties(tmp_path):
    pytest.importorskip("torch")
    reference = REFERENCE.read_text()
    for n, edit in enumerate(EDITS):
        folder = tmp_path / f"s{n}"
        folder.mkdir()
        (folder / "answers.yaml").write_text(f"homework: attention-code\nstudent: s{n}\nanswers: {{}}\n")
        text = reference if edit is None else reference.replace(*edit, 1)
        assert edit is None or text != reference
        (folder / "attention.py").write_text(text)
    done = subprocess.run([sys.executable, "-m", "attngrade", "run", str(tmp_path), "-o", str(tmp_path / "out"),
                           "--bank", str(BANK), "--workers", "1"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    results = {r["student"]: r["parts"][0] for r in json.loads((tmp_path / "out" / "results.json").read_text())}
    for n, (edit, broken) in enumerate(EDITS.items()):
        verdict = results[f"s{n}"]
        if broken is None:
            assert verdict["score"] == 5, verdict["feedback"]
        else:
            assert verdict["score"] < 5
            assert any(line.startswith("FAILED") and broken in line for line in verdict["feedback"]), verdict["feedback"]
    shutil.rmtree(tmp_path / "out")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_an_output_that_is_not_finite_is_never_equal_nor_causal(bad):
    """NaN is neither near nor far from anything: a comparison by `gap > tol` let it through."""
    job = {"lengths": [2], "perturb_from": 1}
    want = np.zeros((1, 2, 3))
    got = want.copy()
    got[0, 1, 2] = bad
    sent = {"shape": [1, 2, 3], "values": got.ravel().tolist()}
    data = {"outputs": {"2": sent}, "perturbed": sent}
    equal = equal_outputs(job, data, {2: want}, "reference", "the outputs")
    causal = causal_property(job, data)
    assert not equal.ok and "1 of your 6 output values are NaN or infinite" in equal.message
    assert not causal.ok and "could not be checked" in causal.message
    fine = {"outputs": {"2": {"shape": [1, 2, 3], "values": want.ravel().tolist()}}}
    assert equal_outputs(job, fine, {2: want}, "reference", "the outputs").ok


def test_an_expected_output_that_is_not_finite_is_never_a_pass():
    """The expected output is attngrade's (the reference module's, an equation on attngrade's weights),
    so one that is NaN is attngrade's to look into: the comparison waits for staff, and `gap > tol`
    (False for NaN) never lets it pass."""
    job = {"lengths": [2], "perturb_from": 1}
    zeros = np.zeros((1, 2, 3))
    sent = {"outputs": {"2": {"shape": [1, 2, 3], "values": zeros.ravel().tolist()}}}
    want = zeros.copy()
    want[0, 0, 0] = float("nan")
    equal = equal_outputs(job, sent, {2: want}, "equation", "the output")
    assert not equal.ok and equal.is_pending and "expected output is NaN or infinite" in equal.message


def test_the_tolerance_is_the_expected_outputs_not_the_students():
    """An output of 1e6 in one place widens nothing: the rest must still equal the expected outputs,
    to a tolerance of the expected values' size."""
    job = {"lengths": [2], "perturb_from": 1}
    want = np.full((1, 2, 3), 0.5)
    got = want + 0.05
    got[0, 0, 0] = 1e6
    sent = {"outputs": {"2": {"shape": [1, 2, 3], "values": got.ravel().tolist()}}}
    assert not equal_outputs(job, sent, {2: want}, "reference", "the outputs").ok
    big = want * 1e6  # an expected output that is large: float32's relative precision is what counts
    close = {"outputs": {"2": {"shape": [1, 2, 3], "values": big.astype(np.float32).ravel().tolist()}}}
    assert equal_outputs(job, close, {2: big}, "reference", "the outputs").ok


def test_causality_is_judged_to_an_absolute_bound_where_nothing_is_expected():
    """A leak of 0.01 into earlier outputs is not hidden by outputs of 1e6 that are the same in both
    runs (a bias): float32 could not show the change, so causality is not checked, never passed."""
    job = {"lengths": [3], "perturb_from": 2}
    full = np.zeros((1, 3, 2))
    full[0, :, 1] = 1e6
    changed = full.copy()
    changed[0, 0, 0] += 0.01
    changed[0, 2] += 1.0
    data = {"outputs": {"3": {"shape": [1, 3, 2], "values": full.ravel().tolist()}},
            "perturbed": {"shape": [1, 3, 2], "values": changed.ravel().tolist()}}
    found = causal_property(job, data)
    assert not found.ok and "float32 cannot show" in found.message
    full[0, :, 1] = 1.0
    changed[0, :, 1] = 1.0
    data["outputs"]["3"]["values"], data["perturbed"]["values"] = full.ravel().tolist(), changed.ravel().tolist()
    found = causal_property(job, data)
    assert not found.ok and "not causal" in found.message
    changed[0, 0, 0] = 0.0  # the leak gone: causal
    data["perturbed"]["values"] = changed.ravel().tolist()
    assert causal_property(job, data).ok


def test_rows_and_gradients_that_are_not_finite_fail():
    job = {"lengths": [2]}
    rows = np.array([[1.0, 0.0], [float("nan"), 1.0]])
    data = {"attention": {"2": {"shape": [2, 2], "values": rows.ravel().tolist()}}}
    assert not rows_property(job, data).ok
    grads = {"grads": {"w": float("nan"), "b": 1.0}, "params": {"w": {}, "b": {}}}
    found = gradients_property(grads)
    assert not found.ok and "NaN or infinite" in found.message
    assert gradients_property({"grads": {"w": 2.0, "b": 1.0}, "params": {"w": {}, "b": {}}}).ok


@pytest.mark.parametrize("info", [{"shape": [float("inf"), 2], "values": []}, {"shape": [-1, 2], "values": [1, 2]},
                                  {"shape": [2, True], "values": [1, 2]}, {"shape": [3], "values": [1, 2]},
                                  {"shape": "2", "values": [1, 2]}, {"shape": [10**12, 10**12], "values": [1]}])
def test_a_shape_that_is_not_whole_numbers_filled_by_the_values_is_no_array(info):
    assert array(info) is None


def test_data_the_driver_never_sends_fails_its_property_as_malformed():
    """A property that reads a value of the wrong type (student code writes to the result pipe itself)
    fails as the student's malformed data, never as attngrade's error."""
    forged = {"grads": {"w": "a lot"}, "params": {"w": {}}}
    found = guarded("gradients", 1.0, lambda: gradients_property(forged))
    assert not found.ok and "sent back something malformed" in found.message
    other = guarded("gradients", 1.0, lambda: gradients_property({"grads": {"w": 1.0}, "params": {"v": {}}}))
    assert not other.ok and "malformed" in other.message


def test_quoted_feedback_is_clipped_line_by_line_and_as_a_whole():
    lines = bounded(["x" * 10_000_000] + ["y" * 1000] * 100)
    assert len(lines[0]) < 2100 and lines[0].endswith("more characters)")
    assert sum(map(len, lines)) < 40_000 and lines[-1].endswith("more lines)")
