"""The whole bank: every homework grades its example class, and the seeds get a TA's verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attngrade.cli import main
from attngrade import grading
from attngrade.problems.keys import load_keys
from attngrade.problems import homework_ids, load_homework
from attngrade.intake.submissions import load_submission

ROOT = Path(__file__).resolve().parents[2]


def grade_file(homework: str, path: str):
    hw = load_homework(homework)
    result = grading.grade_submission(grading.assignment(hw, load_keys(ROOT / "solutions", hw)),
                                      load_submission(ROOT / path))
    return {v.part: v for v in result.parts}


def grade_answer(homework: str, part_id: str, answer):
    hw = load_homework(homework)
    return grading.grade_answer(grading.assignment(hw, load_keys(ROOT / "solutions", hw)), part_id, answer)


def test_problems_lists_all_five_homeworks(capsys):
    assert main(["problems"]) == 0
    out = capsys.readouterr().out
    for homework in ("cs224n-w21-a5", "mimuw-2022-p4", "eecs182-sp23-transformers", "eecs182-fa22-hw8",
                     "nyu-dl-transformer"):
        assert homework in out


@pytest.mark.parametrize("homework", homework_ids())
def test_run_works_for_every_homework(homework, tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(ROOT / "examples" / homework), "-o", str(out),
                 "--solutions", str(ROOT / "solutions")]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results and all(r["homework"] == homework and "error" not in r for r in results)


@pytest.mark.parametrize("homework", ["mimuw-2022-p4", "cs224n-w21-a5"])
def test_seed_000_london_25_percent_is_a_count(homework):
    part = grade_file(homework, f"examples/{homework}/seed-000.yaml")["2d"]
    assert any("25 is how many dev rows have London" in line for line in part.feedback)
    right = grade_answer(homework, "2d", {"london": "5%"})
    assert right.score > part.score  # the same part with the right baseline earns its share


def test_seed_004_beta_is_backwards_twice():
    parts = grade_file("nyu-dl-transformer", "examples/nyu-dl-transformer/seed-004.yaml")
    for pid, said, expected in (("1.1c", "small", "large"), ("1.1d", "large", "small")):
        assert f"beta: you answered {said}; the expected answer is {expected}" in parts[pid].feedback
        assert parts[pid].score < parts[pid].max_score
    assert parts["1.1a"].status == "correct"  # V softargmax_beta(K^T Q), shape t × n


def test_seed_003_shift_block_is_right():
    parts = grade_file("eecs182-fa22-hw8", "examples/eecs182-fa22-hw8/seed-003.yaml")
    assert parts["1c"].status == "correct"
    assert parts["3a.i"].status == "correct" and parts["3b"].status == "correct"


def test_transposed_block_is_rejected_with_the_ordering_reason():
    verdict = grade_answer("eecs182-fa22-hw8", "1c", r"\begin{pmatrix} \cos\omega & -\sin\omega \\ \sin\omega & \cos\omega \end{pmatrix}")
    assert verdict.score == 0
    assert "transpose of the block that works" in verdict.feedback[0]
    assert "(sin, cos)" in verdict.feedback[0]


def test_seed_002_counts_and_complexities_are_right():
    parts = grade_file("eecs182-sp23-transformers", "examples/eecs182-sp23-transformers/seed-002.yaml")
    for pid in ("c.ii", "e", "f", "b", "i"):
        assert parts[pid].status == "correct", (pid, parts[pid].feedback)


@pytest.mark.parametrize("answer", ["(2(T-1)+1)m", "(2T-1)m", "2Tm - m", r"(2 \cdot (T-1)+1) \cdot m"])
def test_relative_bias_count_in_any_form(answer):
    assert grade_answer("eecs182-sp23-transformers", "c.ii", answer).status == "correct"


@pytest.mark.parametrize("answer", ["O(k M^2)", "O(M M k)", r"\mathcal{O}(M^2 k)"])
def test_same_order_is_accepted(answer):
    verdict = grade_answer("eecs182-sp23-transformers", "f", {"encoder": answer})
    assert verdict.score == 1, verdict.feedback


@pytest.mark.parametrize("answer, what", [("O(2M^2k + Mk)", "constant factors and lower-order terms"),
                                          ("O(M^2 k + M)", "lower-order terms"), ("O(3 k M^2)", "constant factors")])
def test_the_right_order_written_untidily_earns_half_as_the_handout_says(answer, what):
    verdict = grade_answer("eecs182-sp23-transformers", "f", {"encoder": answer})
    assert verdict.score == 0.5
    assert any(f"the right order, but {what} do not belong inside O(...)" in line for line in verdict.feedback)


@pytest.mark.parametrize("answer", ["O(M^3 k)", "O(Mk)"])
def test_wrong_order_is_not_full_marks(answer):
    verdict = grade_answer("eecs182-sp23-transformers", "f", {"encoder": answer})
    assert verdict.score < 1 and verdict.feedback


def test_real_prediction_files_of_the_example_class(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(ROOT / "examples/cs224n-w21-a5"), "-o", str(out),
                 "--solutions", str(ROOT / "solutions")]) == 0
    results = {r["student"]: {p["id"]: p for p in r["parts"]} for r in json.loads((out / "results.json").read_text())}
    para = results["parachutel"]
    assert any("9/500 = 1.8%" in line for line in para["2d"]["feedback"])
    assert any("133/500 = 26.6%" in line for line in para["2f"]["feedback"])
    assert any("35/500 = 7.0%" in line for line in para["2g.i"]["feedback"])
    sarah = results["SarahLuym"]["2g.i"]
    assert any("has 492 lines but the dev set has 500" in line for line in sarah["feedback"])
    assert results["smidtfab"]["2g.i"].get("flags")
    assert not results["parachutel"]["2g.i"].get("flags")
    report = (out / "smidtfab" / "report.html").read_text()
    assert results["smidtfab"]["2g.i"]["flags"][0] not in report  # staff-only: never in the student's report


def test_wheel_ships_no_solutions_or_examples(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("attngrade-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith("problems/homeworks/cs224n-w21-a5.yaml") for n in names)
    assert any(n.endswith("data/cs224n-w21-a5/birth_dev.tsv") for n in names)  # dev gold ships
    assert any(n.endswith("mathlang/grammar.lark") for n in names)
    for name in names:
        top = name.split("/")[0]
        assert top in ("attngrade",) or top.endswith(".dist-info"), name
        assert "keys.yaml" not in name and "reference" not in name and "solutions" not in name, name
    # The long description students see (pip show, the package index) is PACKAGE.md: the README's
    # examples are full-credit answers, for course staff only.
    metadata = next(zipfile.ZipFile(wheel).read(n) for n in names if n.endswith(".dist-info/METADATA")).decode()
    assert (ROOT / "PACKAGE.md").read_text().strip() in metadata
    assert "u_c u_d^T" not in metadata and "answers:" not in metadata


def test_source_distribution_ships_no_readme_examples_or_tests(tmp_path):
    import tarfile

    subprocess.run([sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (sdist,) = tmp_path.glob("attngrade-*.tar.gz")
    names = tarfile.open(sdist).getnames()
    assert any(n.endswith("/PACKAGE.md") for n in names)
    for name in names:
        assert not name.endswith("/README.md") and "/tests/" not in name and "solutions" not in name, name


def test_no_formula_of_a_key_is_written_in_the_package():
    """The package is what students install: an example in a docstring or an error message
    ("e.g. O(M^2 k)") must not be a key's answer. Words (a choice key such as `identity`) are
    left out: they are ordinary words of the code."""
    import re

    import yaml

    def strings(node):
        if isinstance(node, dict):
            for value in node.values():
                yield from strings(value)
        elif isinstance(node, list):
            for value in node:
                yield from strings(value)
        elif isinstance(node, str):
            yield node

    squeeze = lambda text: re.sub(r"\s+", "", text)  # noqa: E731
    formulas = {squeeze(s): s for path in (ROOT / "solutions").glob("*/keys.yaml")
                for s in strings(yaml.safe_load(path.read_text())["keys"])
                if len(squeeze(s)) >= 6 and re.search(r"[\^_\\()/]", s)}
    for path in (ROOT / "attngrade").rglob("*"):
        if path.suffix in (".py", ".j2", ".lark"):
            text = squeeze(path.read_text(encoding="utf-8"))
            assert not [s for key, s in formulas.items() if key in text], path
