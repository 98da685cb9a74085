"""accuracy_file on real CS224N W21 A5 prediction files (tests/data/predictions, see its README)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from attngrade.checkers.accuracy import check, packaged_gold, prediction_lines
from attngrade.checkers.base import Context
from attngrade.cli import main
from attngrade.errors import ConfigError
from attngrade.problems import load_homework, prepare_part
from attngrade.mathlang import SymbolTable
from attngrade.reading import FieldError, read_field
from attngrade.records import CheckSpec, Field, Part

PREDICTIONS = Path(__file__).resolve().parent.parent / "data" / "predictions"
PARACHUTEL = PREDICTIONS / "parachutel"
SARAH = PREDICTIONS / "SarahLuym"
SMIDTFAB = PREDICTIONS / "smidtfab"
DEV = "vanilla.pretrain.dev.predictions"  # parachutel: 133/500
SYNTH = "synthesizer.pretrain.dev.predictions"


def grade(folder: Path, filename: str, params: dict | None = None, *, points: float = 6.0,
          numbers: dict[str, str] | None = None, compare: str | None = None, gold: dict | None = None):
    """Read the files and numbers as the grader does, then run accuracy_file on them."""
    fields = [Field("predictions", "file", filename=filename)]
    if compare:
        fields.append(Field("vanilla", "file", filename=compare))
    for name in numbers or {}:
        fields.append(Field(name, "number", percent=True))
    spec = CheckSpec("accuracy_file", tuple(f.name for f in fields), points, params or {})
    part = prepare_part(Part("2x", points, "", tuple(fields), (spec,), SymbolTable.from_data(None), problem="test"))
    spec = part.checks[0]
    answers = {f.name: read_field(part, f, None, folder) for f in fields if f.kind == "file"}
    answers.update({name: read_field(part, part.field(name), text) for name, text in (numbers or {}).items()})
    return check(answers, Context(part=part, spec=spec, gold=gold or {}))


def lines_of(path: Path) -> list[str]:
    return prediction_lines(path.read_text(encoding="utf-8"))[0]


def write(folder: Path, name: str, data: bytes) -> Path:
    (folder / name).write_bytes(data)
    return folder


# -- the recomputed accuracy ----------------------------------------------------------
def test_packaged_dev_gold():
    gold = packaged_gold("dev")
    assert len(gold) == 500
    assert gold[:3] == ("Atlanta", "Berlin", "England")
    assert gold.count("London") == 25


@pytest.mark.parametrize("filename, correct, shown", [
    ("vanilla.nopretrain.dev.predictions", 9, "9/500 = 1.8%"),
    ("vanilla.pretrain.dev.predictions", 133, "133/500 = 26.6%"),
    ("synthesizer.pretrain.dev.predictions", 35, "35/500 = 7.0%"),
])
def test_parachutel_dev_accuracies(filename, correct, shown):
    outcome = grade(PARACHUTEL, filename)
    assert outcome.earned == 6.0
    assert outcome.feedback == (f"{filename}: {shown} correct on the dev set",)
    info = outcome.evidence["accuracy:predictions"]
    assert (info["correct"], info["total"], info["lines"], info["scored"]) == (correct, 500, 500, True)
    assert "flags" not in outcome.evidence


@pytest.mark.parametrize("reported", ["26.6%", "26.6", "0.266", "133/500", "27%", "26%", "0.27", "26.60 %"])
def test_reported_accuracy_that_agrees(reported):
    outcome = grade(PARACHUTEL, DEV, {"reported": "accuracy"}, numbers={"accuracy": reported})
    assert outcome.earned == 6.0  # file 3 + reported 3
    assert f"accuracy {reported}: agrees with the file's 133/500 = 26.6%" in outcome.feedback
    assert "flags" not in outcome.evidence


def test_reported_accuracy_that_does_not_agree():
    outcome = grade(PARACHUTEL, DEV, {"reported": "accuracy"}, numbers={"accuracy": "30%"})
    assert outcome.earned == 3.0  # the file's share only
    assert ("accuracy 30% does not match the file, which scores 133/500 = 26.6%; "
            "they must agree to the places you wrote") in outcome.feedback
    assert "flags" not in outcome.evidence  # 30% is 150/500: a possible count


@pytest.mark.parametrize("reported", ["27.0%", "26.4%", "26.8", "0.265", "134/500", "26.7%"])
def test_reported_accuracy_that_is_off_at_the_places_written_is_rejected(reported):
    outcome = grade(PARACHUTEL, DEV, {"reported": "accuracy"}, numbers={"accuracy": reported})
    assert outcome.earned == 3.0


@pytest.mark.parametrize("reported", ["0", "0.2", "0.3", "1", "0%", "20%"])
def test_rounding_to_the_places_written_stretches_to_a_whole_percentage_point_at_most(reported):
    # 133/500 = 26.6%: read as fractions of 1, a bare 0 would be 0.266 "to no places" and 0.2 would be
    # 0.266 cut off at one place; neither reports this file
    outcome = grade(PARACHUTEL, DEV, {"reported": "accuracy"}, numbers={"accuracy": reported})
    assert outcome.earned == 3.0, outcome.feedback  # the file's share only
    assert any(f"accuracy {reported} does not match the file" in line for line in outcome.feedback)


def test_a_coarse_number_still_agrees_with_a_file_it_rounds():
    from attngrade.checkers.accuracy import agrees
    from attngrade.reading import NumberReading

    assert agrees(NumberReading(0.0, "0"), 0, 500)  # nothing right: 0 is exact
    assert agrees(NumberReading(0.0, "0"), 2, 500)  # 0.4%, cut off to a whole percent
    assert not agrees(NumberReading(0.0, "0"), 6, 500)  # 1.2%: more than a percentage point away
    assert agrees(NumberReading(0.3, "0.3"), 150, 500)  # 30.0%: the number itself
    assert agrees(NumberReading(0.3, "0.3"), 148, 500)  # 29.6% is 30% to a whole percentage point
    assert not agrees(NumberReading(0.3, "0.3"), 140, 500)  # 28%: one digit of a fraction is not ten points


def test_reported_accuracy_that_is_no_count_of_500_is_flagged_not_told():
    outcome = grade(PARACHUTEL, DEV, {"reported": "accuracy"}, numbers={"accuracy": "26.63%"})
    assert outcome.earned == 3.0  # 26.60% is what 133/500 is, to two places
    assert outcome.evidence["flags"] == [
        "2x: reported accuracy 26.63% is not k/500 for any whole k, so it was not computed from 500 predictions"
    ]
    assert not any("k/500" in line for line in outcome.feedback)


def test_pass_line_met_and_missed():
    met = grade(PARACHUTEL, DEV, {"pass_line": 0.10}, points=10)
    assert met.earned == 10.0
    assert "133/500 = 26.6% reaches the pass line of 10.0%" in met.feedback
    missed = grade(PARACHUTEL, "vanilla.nopretrain.dev.predictions", {"pass_line": 0.10}, points=10)
    assert missed.earned == 5.0
    assert "9/500 = 1.8% is below the pass line of 10.0%" in missed.feedback


def test_weights_split_the_points():
    outcome = grade(PARACHUTEL, DEV, {"reported": "accuracy", "pass_line": 0.10,
                                      "weights": {"file": 1, "reported": 1, "pass_line": 3}},
                    points=10, numbers={"accuracy": "40%"})
    assert outcome.earned == pytest.approx(8.0)  # 2 for the file, 6 for the pass line, 0 of 2 reported


# -- the London baseline --------------------------------------------------------------
@pytest.mark.parametrize("answer", ["5", "5%", "0.05", "25/500", "5.0 %"])
def test_london_baseline_accepted(answer):
    outcome = grade(PARACHUTEL, DEV, {"baseline": "london"}, numbers={"london": answer})
    assert outcome.earned == 6.0
    assert outcome.feedback[-1] == f"london {answer}: right, always predicting London scores that on the dev set"
    assert outcome.evidence["baseline"]["expected"] == "25/500"


def test_london_baseline_as_the_count_is_rejected():
    outcome = grade(PARACHUTEL, DEV, {"baseline": "london"}, numbers={"london": "25%"})
    assert outcome.earned == 3.0
    assert outcome.feedback[-1] == ("london 25%: 25 is how many dev rows have London as the answer, a count, "
                                    "not a percentage; the accuracy is that count out of the 500 dev rows")


@pytest.mark.parametrize("answer", ["4.55%", "0.0455", "91/2000"])
def test_london_baseline_on_training_data_is_rejected(answer):
    outcome = grade(PARACHUTEL, DEV, {"baseline": "london"}, numbers={"london": answer})
    assert outcome.earned == 3.0
    assert outcome.feedback[-1] == (f"london {answer}: that is London's share of the training file "
                                    "(91 of its 2000 rows); the baseline is measured on the dev set")


def test_london_baseline_other_wrong_value_does_not_give_the_answer_away():
    outcome = grade(PARACHUTEL, DEV, {"baseline": "london"}, numbers={"london": "7%"})
    assert outcome.earned == 3.0
    assert outcome.feedback[-1] == "london 7%: not the accuracy of always predicting London on the dev set"
    assert not any("5%" in line or "25" in line for line in outcome.feedback)


def test_baseline_is_scored_even_when_the_file_is_misaligned():
    outcome = grade(SARAH, SYNTH, {"baseline": "london", "reported": "accuracy"},
                    numbers={"london": "5%", "accuracy": "7%"})
    assert outcome.earned == 2.0  # the baseline's third of 6
    assert "accuracy 7%: not compared, the prediction file could not be scored" in outcome.feedback


# -- files with the wrong number of lines ---------------------------------------------
def test_sarahluym_492_lines_is_misaligned_not_scored():
    assert len(lines_of(SARAH / SYNTH)) == 492
    outcome = grade(SARAH, SYNTH, {"pass_line": 0.05})
    assert outcome.earned == 0.0
    assert outcome.feedback[0] == (f"{SYNTH} has 492 lines but the dev set has 500: one prediction per line, "
                                   "in order, is needed, so it was not scored")
    where = outcome.feedback[1]
    assert where.startswith(f"{SYNTH}: comparing with the gold (an estimate), the lines stop lining up between")
    assert "as if lines were lost" in where
    assert outcome.feedback[2] == "pass line of 5.0%: not reached, the prediction file could not be scored"
    info = outcome.evidence["accuracy:predictions"]
    assert (info["lines"], info["expected"], info["scored"]) == (492, 500, False)


def test_a_deleted_line_is_located(tmp_path):
    lines = lines_of(PARACHUTEL / DEV)
    del lines[199]  # line 200
    folder = write(tmp_path, DEV, ("\n".join(lines) + "\n").encode())
    outcome = grade(folder, DEV)
    assert outcome.earned == 0.0
    assert "499 lines but the dev set has 500" in outcome.feedback[0]
    # the named range holds line 200, and the shift is one line down
    assert "between line 193 and line 201" in outcome.feedback[1]
    assert "your line 201 fits gold line 202" in outcome.feedback[1]


def test_a_truncated_file_is_said_to_miss_its_end(tmp_path):
    lines = lines_of(PARACHUTEL / DEV)[:490]
    folder = write(tmp_path, DEV, ("\n".join(lines) + "\n").encode())
    outcome = grade(folder, DEV)
    assert outcome.feedback[1] == (f"{DEV}: comparing with the gold (an estimate), your predictions fit the gold "
                                   "in place up to line 490, so the missing lines are probably at the end")


def test_one_answer_repeated_gives_no_location(tmp_path):
    folder = write(tmp_path, DEV, b"London\n" * 499)
    outcome = grade(folder, DEV)
    assert outcome.feedback[1] == f"{DEV}: comparing with the gold could not tell where the lines stop lining up"


def test_empty_file(tmp_path):
    folder = write(tmp_path, DEV, b"")
    outcome = grade(folder, DEV, {"reported": "accuracy", "pass_line": 0.1}, numbers={"accuracy": "0%"})
    assert outcome.earned == 0.0
    assert outcome.feedback[0] == (f"{DEV} is empty: the dev set needs 500 predictions, one per line; "
                                   "it was not scored")


def test_a_lone_newline_is_one_empty_prediction(tmp_path):
    folder = write(tmp_path, DEV, b"\n")
    outcome = grade(folder, DEV)
    assert outcome.evidence["accuracy:predictions"]["lines"] == 1
    assert outcome.earned == 0.0


# -- line endings and odd content ----------------------------------------------------
def test_crlf_copy_scores_the_same_and_says_so(tmp_path):
    data = (PARACHUTEL / DEV).read_bytes().replace(b"\n", b"\r\n")
    outcome = grade(write(tmp_path, DEV, data), DEV)
    assert outcome.earned == 6.0
    assert outcome.feedback == (
        f"{DEV}: 500 lines ended in \\r\\n (Windows line endings); the \\r was dropped before comparing",
        f"{DEV}: 133/500 = 26.6% correct on the dev set",
    )
    assert outcome.evidence["accuracy:predictions"]["crlf_dropped"] == 500


def test_a_stray_carriage_return_is_part_of_the_prediction(tmp_path):
    gold = packaged_gold("dev")
    data = "".join(f"{place}\r\n" for place in gold[:499]) + gold[499] + "\r"  # last line unterminated
    outcome = grade(write(tmp_path, DEV, data.encode()), DEV)
    info = outcome.evidence["accuracy:predictions"]
    assert (info["lines"], info["crlf_dropped"], info["correct"]) == (500, 499, 499)


def test_spaces_around_predictions_are_counted_wrong_and_explained(tmp_path):
    lines = lines_of(PARACHUTEL / DEV)
    gold = packaged_gold("dev")
    right = [i for i, (p, g) in enumerate(zip(lines, gold)) if p == g][:3]
    for i in right:
        lines[i] = f" {lines[i]} "
    outcome = grade(write(tmp_path, DEV, ("\n".join(lines) + "\n").encode()), DEV)
    assert f"{DEV}: 130/500 = 26.0% correct on the dev set" in outcome.feedback
    assert (f"{DEV}: 3 predictions differ from the answer only by surrounding spaces; the comparison is exact, "
            "so they count as wrong") in outcome.feedback


def test_odd_lines_are_just_wrong_predictions(tmp_path):
    lines = lines_of(PARACHUTEL / DEV)
    gold = packaged_gold("dev")
    odd = ["\x01\x02\x7f", "\u2028", "Lon\u0085don", "\t\t", "\x0b\x0c", "x" * 100_000, "\ufffd\ufffd",
           "London\u200b", "\U0001F600", "<script>"]
    lost = sum(1 for i in range(len(odd)) if lines[i] == gold[i])
    lines[:len(odd)] = odd
    outcome = grade(write(tmp_path, DEV, ("\n".join(lines) + "\n").encode("utf-8")), DEV)
    info = outcome.evidence["accuracy:predictions"]
    assert info["lines"] == 500  # \u2028, \x85, \x0b, \x0c do not split lines
    assert info["correct"] == 133 - lost
    assert not any("x" * 50 in line or "\x01" in line for line in outcome.feedback)


def test_bytes_that_are_not_utf8_stop_at_reading(tmp_path):
    folder = write(tmp_path, DEV, b"Paris\n\xff\xfeLondon\n")
    with pytest.raises(FieldError, match="is not UTF-8 text"):
        grade(folder, DEV)


# -- integrity flags -----------------------------------------------------------------
def test_smidtfab_synthesizer_is_flagged():
    outcome = grade(SMIDTFAB, SYNTH, {"compare_with": "vanilla", "pass_line": 0.05},
                    compare="vanilla.pretrain.dev.predictions")
    assert outcome.earned == 6.0  # a flag never changes the score
    assert outcome.evidence["accuracy:predictions"]["correct"] == 131
    assert outcome.evidence["accuracy:vanilla"]["correct"] == 134
    assert outcome.evidence["flags"] == [
        f"2x: {SYNTH} scores 131/500 = 26.2%, not clearly below vanilla.pretrain.dev.predictions at "
        "134/500 = 26.8% (margin 2.0%); check that the synthesizer attention was actually used"
    ]
    assert not any("synthesizer attention" in line or "vanilla" in line for line in outcome.feedback)


def test_parachutel_synthesizer_is_not_flagged():
    outcome = grade(PARACHUTEL, SYNTH, {"compare_with": "vanilla"}, compare="vanilla.pretrain.dev.predictions")
    assert outcome.evidence["accuracy:vanilla"]["correct"] == 133
    assert "flags" not in outcome.evidence


def test_smidtfab_not_flagged_with_a_zero_margin():
    outcome = grade(SMIDTFAB, SYNTH, {"compare_with": "vanilla", "flag_margin": 0},
                    compare="vanilla.pretrain.dev.predictions")
    assert "flags" not in outcome.evidence  # 26.2% is below 26.8%: only the margin catches it


def test_no_flag_when_one_file_is_misaligned():
    outcome = grade(SARAH, SYNTH, {"compare_with": "vanilla"}, compare="vanilla.pretrain.dev.predictions")
    assert "flags" not in outcome.evidence


# -- the test set ---------------------------------------------------------------------
TEST_FILE = "vanilla.pretrain.test.predictions"


def test_test_gold_absent_checks_the_line_count_only():
    outcome = grade(PARACHUTEL, TEST_FILE, {"gold": "test", "pass_line": 0.10}, points=4)
    assert outcome.earned == 0.0  # without the gold the file earns nothing yet: its points wait for staff
    assert outcome.unchecked
    assert outcome.feedback == (f"{TEST_FILE}: read, 437 lines as expected; it is scored against the test set, "
                                "which only course staff have",)
    assert "correct" not in outcome.evidence["accuracy:predictions"]


def test_test_gold_absent_and_wrong_line_count(tmp_path):
    lines = lines_of(PARACHUTEL / TEST_FILE)[:430]
    outcome = grade(write(tmp_path, TEST_FILE, ("\n".join(lines) + "\n").encode()), TEST_FILE, {"gold": "test"})
    assert outcome.earned == 0.0
    assert not outcome.unchecked
    assert outcome.feedback == (f"{TEST_FILE} has 430 lines but the test set has 437: one prediction per line, "
                                "in order, is needed, so it was not scored",)


def test_test_gold_supplied(tmp_path):
    predictions = lines_of(PARACHUTEL / TEST_FILE)
    assert len(predictions) == 437
    # a made-up gold: the student's first 50 answers are right, the rest wrong
    gold = [f"Where was Person {i} born?\t{p if i < 50 else 'Nowhere'}" for i, p in enumerate(predictions)]
    path = tmp_path / "birth_test.tsv"
    path.write_text("\n".join(gold) + "\n", encoding="utf-8")
    outcome = grade(PARACHUTEL, TEST_FILE, {"gold": "test", "pass_line": 0.10}, points=4, gold={"test": path})
    assert outcome.earned == 4.0
    assert not outcome.unchecked
    assert outcome.feedback == (f"{TEST_FILE}: 50/437 = 11.44% correct on the test set",
                                "50/437 = 11.44% reaches the pass line of 10.0%")


def test_test_gold_of_the_wrong_length_is_a_config_error(tmp_path):
    path = tmp_path / "birth_test.tsv"
    path.write_text("Where was A born?\tParis\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="has 1 lines"):
        grade(PARACHUTEL, TEST_FILE, {"gold": "test", "lines": 437}, gold={"test": path})


# -- configuration -------------------------------------------------------------------
@pytest.mark.parametrize("params, message", [
    ({"threshold": 0.1}, "unknown parameter .threshold."),
    ({"pass_line": 10}, "pass_line must be a fraction"),
    ({"reported": "nope"}, "not one of the check's fields"),
    ({"weights": {"bonus": 1}}, "weights maps"),
    ({"gold": "held-out"}, "has no 'lines' param"),
])
def test_bad_params_are_config_errors(params, message):
    with pytest.raises(ConfigError, match=message):
        grade(PARACHUTEL, DEV, params)


def test_dev_predictions_copied_from_the_public_gold_are_flagged_not_scored_down(tmp_path):
    """The dev gold ships with the handout (and in the wheel): a copy scores 500/500. The score stands
    (it is the course's to decide); staff are told, since no model of the assignment comes near."""
    copied = "\n".join(packaged_gold("dev")) + "\n"
    outcome = grade(write(tmp_path, DEV, copied.encode()), DEV)
    assert outcome.earned == 6.0
    assert outcome.evidence["flags"] == [f"2x: {DEV} scores 500/500 = 100.0% on the public dev gold, far above what "
                                         "the assignment's models reach: copied from it?"]
    assert not any("copied" in line for line in outcome.feedback)


def test_an_instructors_gold_named_dev_is_theirs_not_the_one_that_ships(tmp_path):
    """A course's own `dev` gold was replaced by the CS224N dev set: every student graded on the wrong answers."""
    from attngrade.checkers.accuracy import load_gold

    own = tmp_path / "dev.tsv"
    own.write_text("Where was Ada born?\tLondon\nWhere was Alan born?\tLondon\n")
    assert load_gold("dev", {"dev": own}) == ("London", "London")
    assert len(load_gold("dev", {})) == 500  # none given: the packaged dev set


def test_an_empty_gold_file_is_refused(tmp_path):
    from attngrade.checkers.accuracy import load_gold

    (tmp_path / "empty.tsv").write_text("\n\n")
    with pytest.raises(ConfigError, match="the gold file is empty"):
        load_gold("mine", {"mine": tmp_path / "empty.tsv"})


def test_a_gold_nobody_supplied_says_where_to_put_it():
    with pytest.raises(ConfigError, match=r"gold 'devset' was not supplied .*gold/devset.tsv, pass --gold devset=FILE"):
        grade(PARACHUTEL, DEV, {"gold": "devset"})


# -- copies of one file ---------------------------------------------------------------
def test_copies_of_one_file_are_scored_once_whatever_each_student_reports(monkeypatch):
    """A class hands in many copies of a few files: each student's reported accuracy makes their
    task distinct, but the file itself is read against the gold once."""
    from attngrade.checkers import accuracy

    monkeypatch.setattr(accuracy, "_SCORES", {})
    calls = []
    scored = accuracy._scored
    monkeypatch.setattr(accuracy, "_scored", lambda *args: calls.append(args[2]) or scored(*args))
    params = {"gold": "dev", "reported": "reported"}
    right = grade(PARACHUTEL, DEV, params, numbers={"reported": "26.6%"})
    wrong = grade(PARACHUTEL, DEV, params, numbers={"reported": "30%"})
    assert calls == ["dev"]
    assert right.earned > wrong.earned
    assert "reported 30% does not match the file, which scores 133/500 = 26.6%" in " ".join(wrong.feedback)
    assert right.evidence["accuracy:predictions"] == wrong.evidence["accuracy:predictions"]
    assert right.evidence["accuracy:predictions"]["mismatches"][0][0] >= 1  # (line, prediction, gold)


def test_a_file_is_scored_again_against_a_gold_file_that_changed(tmp_path, monkeypatch):
    """The remembered score belongs to one gold as read: the same file against a gold file read
    again (edited between two runs of one process) is scored against what it now says."""
    from attngrade.checkers import accuracy

    monkeypatch.setattr(accuracy, "_SCORES", {})
    write(tmp_path, "p.txt", b"Paris\nRome\n")
    gold = tmp_path / "g.tsv"
    gold.write_text("Where was A born?\tParis\nWhere was B born?\tOslo\n", encoding="utf-8")
    first = grade(tmp_path, "p.txt", {"gold": "g", "lines": 2}, gold={"g": gold})
    gold.write_text("Where was A born?\tParis\nWhere was B born?\tRome\n", encoding="utf-8")
    os.utime(gold, ns=(gold.stat().st_atime_ns, gold.stat().st_mtime_ns + 10**9))
    second = grade(tmp_path, "p.txt", {"gold": "g", "lines": 2}, gold={"g": gold})
    assert first.evidence["accuracy:predictions"]["correct"] == 1
    assert second.evidence["accuracy:predictions"]["correct"] == 2


def test_a_huge_files_score_is_not_kept(tmp_path, monkeypatch):
    """Its first mismatching lines may be megabytes long: they go with its outcome, not into the memo."""
    from attngrade.checkers import accuracy

    monkeypatch.setattr(accuracy, "_SCORES", {})
    monkeypatch.setattr(accuracy, "KEPT_TEXT", 1_000)
    write(tmp_path, "p.txt", (("x" * 2_000 + "\n") * 2).encode())
    gold = tmp_path / "g.tsv"
    gold.write_text("Where was A born?\tParis\nWhere was B born?\tOslo\n", encoding="utf-8")
    outcome = grade(tmp_path, "p.txt", {"gold": "g", "lines": 2}, gold={"g": gold})
    assert outcome.evidence["accuracy:predictions"]["correct"] == 0
    assert accuracy._SCORES == {}


# -- a test file is held to the pass line its part states for dev -------------------------------
A5_PARTS = {p.id: p for p in load_homework("cs224n-w21-a5").parts}
LONDON_IN_TEST = 6  # of the 437 test questions, as many born in London as 1.37% of them


def made_up_test_gold(folder: Path) -> Path:
    """A 437-line test gold (made up: the real one is never published) with 6 London answers."""
    places = ["London" if i % 73 == 3 else f"Town {i}" for i in range(437)]
    assert places.count("London") == LONDON_IN_TEST
    path = folder / "birth_test.tsv"
    path.write_text("".join(f"Where was Person {i} born?\t{p}\n" for i, p in enumerate(places)), encoding="utf-8")
    return path


def grade_test_check(part_id: str, folder: Path, gold: Path) -> tuple:
    """The part's test-file check on `folder`'s test predictions, read as the grader reads them."""
    part = A5_PARTS[part_id]
    index = next(i for i, c in enumerate(part.checks) if (c.params or {}).get("gold") == "test")
    spec = part.checks[index]
    name = spec.fields[0]
    answers = {name: read_field(part, part.field(name), None, folder)}
    return check(answers, Context(part=part, spec=spec, gold={"test": gold})), spec


def london_file(folder: Path, filename: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / filename).write_text("London\n" * 437, encoding="utf-8")
    return folder


def test_an_all_london_test_file_is_held_to_2fs_dev_pass_line(tmp_path):
    gold = made_up_test_gold(tmp_path)
    folder = london_file(tmp_path / "s", "vanilla.pretrain.test.predictions")
    outcome, spec = grade_test_check("2f", folder, gold)
    assert spec.prepared["pass_line"] == 0.10 and spec.prepared["pass_line_from"] == "dev"
    # the file share (well-formed, scored) stays; the pass-line share is lost
    assert outcome.earned == pytest.approx(spec.points / 2)
    assert "vanilla.pretrain.test.predictions: 6/437 = 1.37% correct on the test set" in outcome.feedback
    assert ("6/437 = 1.37% is below the pass line of 10.0% (2f states it for the dev set; the file scored here "
            "is held to the same line)") in outcome.feedback
    assert outcome.evidence["accuracy:test"]["pass_line"] == 0.10
    assert outcome.evidence["accuracy:test"]["pass_line_from"] == "dev"


def test_a_test_file_above_the_dev_pass_line_earns_the_whole_share(tmp_path):
    gold = made_up_test_gold(tmp_path)
    places = [line.split("\t")[1] for line in gold.read_text().splitlines()]
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "vanilla.pretrain.test.predictions").write_text(
        "".join((p if i < 50 else "London") + "\n" for i, p in enumerate(places)), encoding="utf-8")
    outcome, spec = grade_test_check("2f", folder, gold)
    assert outcome.earned == spec.points
    right = 50 + places[50:].count("London")
    assert any(line.startswith(f"{right}/437 = {100 * right / 437:.2f}% reaches the pass line of 10.0% (2f states it "
                               "for the dev set") for line in outcome.feedback), outcome.feedback


def test_2d_keeps_its_baseline_only_rule_and_2g_its_own_test_line(tmp_path):
    gold = made_up_test_gold(tmp_path)
    nopretrain = london_file(tmp_path / "a", "vanilla.nopretrain.test.predictions")
    outcome, spec = grade_test_check("2d", nopretrain, gold)
    assert spec.prepared["pass_line"] is None and outcome.earned == spec.points
    assert not any("pass line" in line for line in outcome.feedback)
    synthesizer = london_file(tmp_path / "b", "synthesizer.pretrain.test.predictions")
    outcome, spec = grade_test_check("2g.i", synthesizer, gold)
    assert spec.prepared["pass_line"] == 0.05 and spec.prepared["pass_line_from"] is None
    assert "6/437 = 1.37% is below the pass line of 5.0%" in outcome.feedback


def test_without_the_test_gold_the_inherited_line_waits_with_the_file(tmp_path):
    folder = london_file(tmp_path / "s", "vanilla.pretrain.test.predictions")
    part = A5_PARTS["2f"]
    spec = next(s for s in part.checks if s.check == "accuracy_file" and s.params.get("gold") == "test")
    answers = {"test": read_field(part, part.field("test"), None, folder)}
    outcome = check(answers, Context(part=part, spec=spec, gold={}))
    assert outcome.unchecked and outcome.earned == 0.0


def test_grade_run_with_the_test_gold_says_which_line_the_test_file_was_held_to(tmp_path):

    gold = made_up_test_gold(tmp_path)
    folder = london_file(tmp_path / "class" / "amy", "vanilla.pretrain.test.predictions")
    (folder / "vanilla.pretrain.dev.predictions").write_bytes((PARACHUTEL / DEV).read_bytes())
    (folder / "answers.yaml").write_text("homework: cs224n-w21-a5\nstudent: amy\nanswers:\n  2f:\n    accuracy: 26.6%\n",
                                         encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(folder), "-o", str(out), "--gold", f"test={gold}", "--workers", "1"]) == 0
    verdict = next(p for p in json.loads((out / "results.json").read_text())[0]["parts"] if p["id"] == "2f")
    assert verdict["score"] == pytest.approx(8 + 1)  # dev: every share; test: the file but not the pass line
    line = "6/437 = 1.37% is below the pass line of 10.0% (2f states it for the dev set"
    assert any(f.startswith(line) for f in verdict["feedback"]), verdict["feedback"]
    report = (out / "amy" / "report.html").read_text(encoding="utf-8")
    assert "below the pass line of 10.0% (2f states it for the dev set" in report
