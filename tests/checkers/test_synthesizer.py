"""2g.i of CS224N A5: SynthesizerAttention and the model that uses it, checked in the sandbox."""

from __future__ import annotations

import numpy as np
import pytest

from attngrade.checkers.synthesizer import equation
from code_fixtures import BUGS, code_submission, failing, grade_code, grader_wording, part, raw_characters

CODE_BUGS = [name for name, bug in BUGS.items() if bug["part"] == "2g.i"]
CODE_POINTS = 4  # of 2g.i's 8: the prediction files keep the rest


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("layout", ["src", "a5/src"])
def test_the_correct_module_earns_the_code_points(tmp_path, a5, a5_keys, torch, layout):
    verdict = part(grade_code(code_submission(tmp_path / "s1", layout=layout), a5, a5_keys), "2g.i")
    assert verdict.score == CODE_POINTS and not failing(verdict), verdict.feedback
    assert verdict.max_score == 8


@pytest.mark.parametrize("bug", CODE_BUGS)
def test_each_bug_class_loses_points_on_the_property_it_breaks(tmp_path, a5, a5_keys, torch, bug):
    verdict = part(grade_code(code_submission(tmp_path / "s1", bug), a5, a5_keys), "2g.i")
    assert verdict.score < CODE_POINTS
    assert BUGS[bug]["fails"] in failing(verdict), verdict.feedback
    assert not raw_characters("".join(verdict.feedback)) and not grader_wording(verdict.feedback), verdict.feedback


def test_an_exception_is_quoted_as_the_codes_with_every_control_shown_as_its_escape(tmp_path, a5, a5_keys, torch):
    verdict = part(grade_code(code_submission(tmp_path / "s1", "forward-raises-control-characters"), a5, a5_keys),
                   "2g.i")
    line = next(line for line in verdict.feedback if "the handout's equation" in line)
    assert ("your code raised «Err\\x1b[31m\\u202eor\\u200b\\x0d\\nX: \\x1b[31mred\\u202e\\u2066text\\u200b "
            "\\x61ttngrade itself failed (attention.py line") in line, line


def test_the_equation_matches_torch_on_the_fixture(torch):
    """The grader's numpy equation against the fixture module run directly (outside any sandbox)."""
    import importlib.util
    import types

    from code_fixtures import CORRECT

    spec = importlib.util.spec_from_file_location("fixture_attention", CORRECT / "attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = types.SimpleNamespace(n_embd=8, n_head=2, block_size=6, attn_pdrop=0.0, resid_pdrop=0.0)
    m = module.SynthesizerAttention(config).eval()
    with torch.no_grad():
        m.w2.normal_()
        m.b2.normal_()
        x = torch.randn(3, 4, 8)
        y = m(x).numpy()
    weights = {name: p.detach().double().numpy() for name, p in m.named_parameters()}
    assert np.allclose(equation(x.double().numpy(), weights, 2), y, atol=1e-5)
