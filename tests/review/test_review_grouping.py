"""Grouping written answers: filler left out, by normalized text, by meaning (complete linkage),
near-identical copies, and the quality of meaning groups on real answers from public write-ups
(tests/data/review): `-k target` prints the curve and holds the default threshold to its target."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import time

import numpy as np
import pytest
import yaml

from attngrade.review import embed, grouping
from attngrade.review.classroom import SEEDS

DATA = Path(__file__).resolve().parents[1] / "data" / "review"
THRESHOLDS = [round(t, 2) for t in np.arange(0.30, 1.001, 0.02)]


def test_normalized_text_groups_ignore_case_spacing_punctuation_and_latex_spacing():
    texts = ["k_j^T q \\, dominates.", "K_j^T  q dominates", "$k_j^T q$ dominates!", "k_i^T q dominates"]
    assert grouping.exact(texts) == [[0, 1, 2], [3]]


def test_complete_linkage_never_chains_answers_that_differ():
    # a ~ b and b ~ c, but a and c are far apart: a chain would join all three
    a = np.array([1.0, 0.0])
    c = np.array([np.cos(1.2), np.sin(1.2)])
    b = (a + c) / np.linalg.norm(a + c)
    groups = grouping.by_meaning(np.stack([a, b, c]), threshold=np.cos(0.65))
    assert sorted(map(len, groups)) == [1, 2]


def test_order_by_meaning_puts_similar_answers_next_to_each_other():
    e = embed.default()
    texts = ["c swings between v_a and v_b", "the key's score must dominate the others",
             "c jumps between v_a and v_b across samples", "k_j^T q has to be far larger than the other scores"]
    order = grouping.chain(e.vectors(texts), 0)
    assert {order[1]} == {2} and set(order[2:]) == {1, 3}


def test_near_identical_long_answers_are_flagged_short_common_ones_are_not():
    long = ("The dot product between the query and key j is much larger than the dot products with every "
            "other key, so the softmax puts almost all weight on position j and c copies v_j.")
    texts = [long, long.replace("much larger", "far larger"), "c is about v_j.", "c is about v_j.", "Something else."]
    found = grouping.near_identical(texts, ["ann", "bob", "cy", "dee", "eve"])
    assert found == [(["ann", "bob"], pytest.approx(found[0][1]))] and found[0][1] >= 0.8


def items_of(part: str) -> list[str]:
    """The part's rubric items as `grade review` seeds them (the labels were given by these items)."""
    seeds = yaml.safe_load(SEEDS.read_text(encoding="utf-8"))
    return next(([i["text"] for i in parts[part]] for parts in seeds.values() if part in parts), [])


def grouped(rows: list[dict], e, threshold: float, with_items: bool) -> tuple[int, int]:
    """(groups, answers whose group's majority grade is their own) of one part's answers, grouped as
    `grade review` groups them: by normalized text, then by meaning, kept apart by nearest rubric item
    (`with_items`)."""
    exact = grouping.exact([r["text"] for r in rows])
    firsts = e.vectors([rows[g[0]]["text"] for g in exact])
    apart = grouping.nearest_items(firsts, e.vectors(items_of(rows[0]["part"]))) if with_items else None
    merged = [[i for m in members for i in exact[m]] for members in grouping.by_meaning(firsts, threshold, apart)]
    right = sum(Counter(rows[i]["points"] for i in members).most_common(1)[0][1] for members in merged)
    return len(merged), right


def by_part(answers: list[dict]) -> dict[str, list[dict]]:
    return {part: [a for a in answers if a["part"] == part] for part in sorted({a["part"] for a in answers})}


def curve(answers: list[dict], e, with_items: bool) -> list[tuple[float, float, float]]:
    """(threshold, groups per 100 answers, purity) pooled over the parts."""
    points = []
    for t in THRESHOLDS:
        counts = [grouped(rows, e, t, with_items) for rows in by_part(answers).values()]
        points.append((t, 100.0 * sum(g for g, _ in counts) / len(answers), sum(r for _, r in counts) / len(answers)))
    return points


def _at(measured: list[tuple[float, float, float]], threshold: float) -> tuple[float, float, float]:
    return min(measured, key=lambda m: abs(m[0] - threshold))


def _answers() -> list[dict]:
    return yaml.safe_load((DATA / "answers.yaml").read_text(encoding="utf-8"))


@pytest.mark.skipif(not embed.available(), reason="the embed extra (wordllama) is not installed")
def test_meaning_groups_on_real_answers_meet_the_target_at_the_default_threshold():
    """Target: at least 97% purity at the default threshold, on every labelled answer pooled, with the
    groups per 100 answers it costs printed. Purity: the share of answers whose group's majority grade
    is their own."""
    answers = _answers()
    assert len(answers) >= 158 and len({a["source"] for a in answers}) >= 20
    e = embed.default()
    by_items, raw = curve(answers, e, True), curve(answers, e, False)
    print(f"\n{len(answers)} answers; threshold, then groups/100 and purity kept apart by rubric items | raw cosine")
    for (t, g, p), (_, g2, p2) in zip(by_items, raw):
        print(f"{t:9.2f}  {g:6.1f}  {p:6.1%}  |  {g2:6.1f}  {p2:6.1%}")
    _, groups, purity = _at(by_items, e.threshold)
    _, groups_alone, purity_alone = _at(raw, e.threshold_alone)
    print(f"default {e.threshold}: {groups:.1f} groups per 100 answers, purity {purity:.1%}; without rubric "
          f"items, default {e.threshold_alone}: {groups_alone:.1f} groups per 100, purity {purity_alone:.1%}")
    print("per part at the default: answers, groups/100, purity (all in one group: purity)")
    for part, rows in by_part(answers).items():
        count, right = grouped(rows, e, e.threshold, True)
        alone = Counter(r["points"] for r in rows).most_common(1)[0][1]
        print(f"{part:>6}  {len(rows):3d}  {100 * count / len(rows):5.0f}  {right / len(rows):6.1%}  "
              f"({alone / len(rows):.0%})")
    assert purity >= 0.97 and groups < 100
    # a part without rubric items merges only nearer answers, and stays as pure
    assert purity_alone >= 0.97
    # fewer groups as the threshold falls: greedy merging in a different order may leave a group
    # more here and there, never a trend the other way
    assert all(lower[1] <= higher[1] + 2.0 for lower, higher in zip(by_items[:-1], by_items[1:]))
    assert by_items[0][1] < groups < by_items[-1][1]
    # the curve shows the trade: merging far enough mixes grades
    assert by_items[0][2] < 0.97 and by_items[0][1] < groups


def test_answers_the_model_cannot_read_group_only_with_the_same_text():
    e = embed.default()
    chinese = ["如果所有键都正交且范数相等，注意力就是值的平均", "注意力只复制一个值，因为查询与一个键的点积远大于其他",
               "如果所有键都正交且范数相等，注意力就是值的平均"]
    vectors = e.vectors(chinese)
    assert [embed.readable(t) for t in chinese] == [False, False, False]
    assert float(vectors[0] @ vectors[2]) > 0.999 and abs(float(vectors[0] @ vectors[1])) < 0.3
    assert embed.readable("the keys are orthogonal, so $\\alpha_i = 1/n$") and embed.readable("Ökonomie café")


FILLERS = ["In short, {}", "The answer is {}", "I think {}", "So, {}", "{} Thus, this is the answer.", "**{}**",
           "Answer: {}", "My answer: I believe that {}", "> {}", "So, {} Thus {}"]


def test_filler_is_left_out_of_what_grouping_sees():
    plain = "c swings between $v_a$ and $v_b$ as the length of $k_a$ changes."
    for filler in FILLERS:
        assert grouping.core(filler.format(plain, plain)) == grouping.core(plain), filler
    assert grouping.core("\\textbf{In short}, $c \\approx v_{a}$") == grouping.core("c \\approx v_a")
    assert grouping.core("\\(k_{j}^{T} q\\) dominates") == grouping.core("$k_j^T q$ dominates")
    assert grouping.core("_c_ stays near the average") == grouping.core("c stays near the average")


def test_filler_removal_keeps_what_changes_the_meaning():
    differ = [("c varies.", "c does not vary."), ("Yes, because x_2 scores highest.", "No, because x_2 scores highest."),
              ("So it is possible.", "So it is impossible."), ("k_j^T q > k_i^T q", "k_i^T q > k_j^T q"),
              ("The answer is 2.", "The answer is 3."), ("c is v_a. Thus c is v_b.", "c is v_a."),
              ("k_a_1 grows", "k_a grows")]
    for a, b in differ:
        assert grouping.core(a) != grouping.core(b), (a, b)
    # a filler word alone is an answer, never emptied
    assert grouping.core("So.") == "so" and grouping.core("Thus.") == "thus"


def test_filler_variants_of_real_answers_share_their_group_and_the_stored_text_is_untouched():
    texts = [a["text"] for a in _answers() if len(a["text"]) < 400][:12]
    variants = [f.format(t, t) for t in texts for f in FILLERS]
    before = list(variants)
    groups = grouping.exact(texts + variants)
    assert variants == before and len(groups) == len(texts)
    for i, members in enumerate(groups):
        assert members == [i] + [len(texts) + i * len(FILLERS) + k for k in range(len(FILLERS))]
    vectors = embed.default().vectors(texts + variants)
    for i, members in enumerate(groups):
        assert np.allclose(vectors[members] @ vectors[i], 1.0, atol=1e-5)


def test_filler_removal_takes_linear_time_on_hostile_text():
    hostile = ["so " * 200_000, "Thus. " * 100_000, "a." * 300_000, "_{" * 300_000, "> " * 200_000,
               "In short, " * 100_000 + "x", "c swings. " * 50_000 + "Thus c swings."]
    for text in hostile:
        started = time.process_time()
        grouping.core(text)
        assert time.process_time() - started < 1.0, text[:20]
