"""Grouping written answers: by normalized text, by meaning (complete linkage), near-identical copies,
and the quality of meaning groups on real answers from public write-ups (tests/data/review)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

from attngrade.review import embed, grouping

DATA = Path(__file__).resolve().parents[1] / "data" / "review"
THRESHOLDS = [round(t, 2) for t in np.arange(0.50, 1.001, 0.05)]


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


def curve(answers: list[dict], e) -> list[tuple[float, float, float]]:
    """(threshold, groups per 100 answers, purity) pooled over the parts."""
    points = []
    for t in THRESHOLDS:
        groups = right = total = 0
        for part in sorted({a["part"] for a in answers}):
            rows = [a for a in answers if a["part"] == part]
            exact = grouping.exact([r["text"] for r in rows])
            firsts = e.vectors([rows[g[0]]["text"] for g in exact])
            merged = [[i for m in members for i in exact[m]] for members in grouping.by_meaning(firsts, t)]
            for members in merged:
                labels = Counter(rows[i]["points"] for i in members)
                right += labels.most_common(1)[0][1]
            groups += len(merged)
            total += len(rows)
        points.append((t, 100.0 * groups / total, right / total))
    return points


def test_meaning_groups_on_real_answers_are_pure_at_the_default_threshold():
    answers = yaml.safe_load((DATA / "answers.yaml").read_text(encoding="utf-8"))
    assert len(answers) >= 15 and {a["part"] for a in answers} == {"1a", "1c.ii", "1d.ii"}
    e = embed.default()
    measured = curve(answers, e)
    print("\nthreshold  groups/100  purity")
    for t, g, p in measured:
        print(f"{t:9.2f}  {g:10.1f}  {p:6.1%}")
    at_default = min(measured, key=lambda m: abs(m[0] - e.threshold))
    assert at_default[2] >= 0.97
    # fewer groups as the threshold falls, never more
    assert all(a[1] >= b[1] for a, b in zip(measured[1:], measured[:-1]))
    # the curve shows the trade: merging far enough mixes grades (why the default stays high)
    assert measured[0][2] < 0.97 and measured[0][1] < at_default[1]
