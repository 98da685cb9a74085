#!/usr/bin/env python3
"""Generate a synthetic class of N submissions across the five homeworks in the bank.

    python bench/generate.py --n 1000 --seed 7 --out /tmp/attngrade-bench/class

Every answer is drawn from a per-part pool (a few dozen entries at most), so the number
of *distinct* answers per part stays realistic while N grows. The pools mix:

* right answers in several notations (LaTeX, ASCII, unicode β, primes, bmatrix vs [[...]]),
  and equivalent variants (another 1e.ii construction, (x_1+p_1)^T(x_2+p_2), 2Tm - m, ...);
* the common mistakes listed in BANK.md (the seeds' wrong Q for 1e.ii, `k_a + k_b` without a
  large constant, O(M^3 k), a London baseline of 25%, β small/large swapped, the transposed
  rotation block, dropped cross terms, ...);
* unreadable answers (syntax errors, unknown symbols, shape errors) and missing parts;
* free text for the manual parts, mostly different per student (as in a real class).

A5 and MIMUW submissions are, with probability --folder-share, folders holding a YAML
file plus *copies* of the real prediction files of one of the students in
`examples/cs224n-w21-a5/<owner>/` (attngrade refuses symlinks); their reported
accuracies are computed from those files (mostly right, sometimes wrong or missing).

The output is deterministic for a given --seed and --n (pools are fixed; only the
draws depend on the seed). A manifest (`manifest.json` next to the class folder)
records, for each submission, its homework and the pool label of every part, so the
benchmark can report the class mix and the distinct answers per part.

`--validate` grades every pool entry once (one submission each, all graded by one
`grade run` in a process of its own) and lists the entries whose status does not match
their label: a quick way to see that the pools still mean what they say after the grader
changes. Run it with attngrade's venv.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_A5 = ROOT / "examples" / "cs224n-w21-a5"


def _dev_gold_path() -> Path:
    """The A5 dev gold the course scores prediction files against, wherever the package keeps its data."""
    usual = ROOT / "attngrade" / "data" / "cs224n-w21-a5" / "birth_dev.tsv"
    return usual if usual.is_file() else next(iter(sorted((ROOT / "attngrade").rglob("birth_dev.tsv"))), usual)


DEV_GOLD = _dev_gold_path()

MARKER = ".attngrade-bench-class"  # a dot file: attngrade's discovery skips it

HOMEWORKS = {  # share of the class
    "cs224n-w21-a5": 0.35,
    "mimuw-2022-p4": 0.15,
    "eecs182-sp23-transformers": 0.20,
    "eecs182-fa22-hw8": 0.15,
    "nyu-dl-transformer": 0.15,
}

# Labels of pool entries. `ok`: right (any notation); `mistake`: a real wrong answer
# (graded partial or incorrect); `invalid`: cannot be read; `text`: free text (manual).
OK, MISTAKE, INVALID, TEXT = "ok", "mistake", "invalid", "text"
LABEL_ORDER = {OK: 0, TEXT: 0, MISTAKE: 1, INVALID: 2}


class Raw(str):
    """A YAML token written as is (e.g. `no`, `false`, `0.05`), like a student types it."""


@dataclass(frozen=True)
class Text:
    """A free-text answer drawn from `base`, usually reworded per student."""

    base: tuple[str, ...]


# -- free text -----------------------------------------------------------------------------
_OPENERS = ("", "I think ", "Because ", "In short, ", "Basically, ", "My answer: ", "As shown in lecture, ")
_CLOSERS = ("", " This is why.", " (see my derivation above)", " So that is the effect.", " Hence the result.",
            " I am not fully sure.")


def _text(*base: str) -> Text:
    return Text(tuple(base))


# -- pools: (weight, label, value) -----------------------------------------------------------
Pool = list[tuple[float, str, Any]]

A5_TEXT = {
    "1a": _text("k_j^T q must be much larger than every other k_i^T q.",
                "q has to point along k_j and be large, so the softmax puts all weight on j.",
                "The score of key j must dominate: k_j^T q >> k_i^T q for i != j."),
    "1c.ii": _text("||k_a|| varies between samples: c leans to v_a when it is above 1 and to v_b below 1.",
                   "c points closer to v_a if ||k_a|| > ||k_b|| and closer to v_b otherwise.",
                   "The norm of k_a changes, so the weights between a and b change from sample to sample."),
    "1d.ii": _text("Each head saturates on its own key whatever ||k_a|| is, so c stays near (v_a + v_b)/2.",
                   "The perturbation has no effect: each head is one-hot regardless of the norm.",
                   "c is about (v_a + v_b)/2 again since each head is chosen for one key."),
    "2g.ii": _text("Synthesizer weights do not compare pairs of tokens, so it cannot build custom queries and keys.",
                   "The synthesizer learns attention from one position only; it cannot do self-alignment in one layer."),
    "3a": _text("The pretraining data had people and birth places; finetuning only taught the format.",
                "Pretraining learned the facts, finetuning taught the question format."),
    "3b": _text("Users cannot tell invented answers from retrieved ones; errors look plausible.",
                "A made-up place looks real and users trust the output."),
    "3c": _text("It guesses a place typical of similar names, a bias from name origin.",
                "It predicts the birth place of a known person with a similar name."),
    "why": _text("x_2 scores 2 beta^2 against itself and only beta^2 against x_1 or x_3, so c_2 still follows x_2.",
                 "The u_i have equal norms, so the weights cannot be adjusted.",
                 "Adding u_b or u_c to x_2 makes x_2 score 2B against itself, so c_2 is still x_2."),
}

MIMUW_TEXT = {
    "2g.1": _text("Self-attention matrices are low rank, so Linformer projects keys and values to a fixed length.",
                  "Linformer adds a linear projection that reduces the sequence dimension."),
    "2g.2": _text("Sparse attention from random, window and global tokens, linear in the length.",
                  "BigBird mixes sliding windows, random links and global tokens."),
    "2g.3": _text("With global tokens it is a universal approximator and Turing complete.",
                  "It can simulate any Turing machine."),
    "2h.1": _text("FAVOR+ gives an unbiased estimate of the attention matrix in linear time.",
                  "Random features approximate the softmax kernel, so attention is linear in N."),
    "2h.2": _text("Trigonometric features can be negative, so small kernel values get high-variance estimates.",
                  "Negative features make the estimate unstable near 0."),
    "2h.3": _text("Positive random features with exp(u) instead of sin and cos.",
                  "Use exp-based positive features."),
    "2h.4": _text("Orthogonal features lower the variance of the estimator.",
                  "Orthogonal random features reduce the variance for any dimension."),
}

POOL_1B: Pool = [
    (10, OK, r"C(k_a + k_b)"), (3, OK, r"C \cdot (k_a + k_b)"), (3, OK, "C * (k_a + k_b)"), (4, OK, "c(k_a + k_b)"),
    (2, OK, "100 (k_a + k_b)"), (2, OK, r"\lambda (k_a + k_b)"), (3, OK, "C k_a + C k_b"), (1, OK, "(k_a + k_b) C"),
    (2, OK, r"C(\mathbf{k}_a + \mathbf{k}_b)"), (1, OK, "t (k_a + k_b)"), (2, OK, "(k_a^T + k_b^T) c_1"),
    (1, OK, "γ(k_a + k_b)"), (1, OK, r"\gamma k_a + \gamma k_b"),
    (6, MISTAKE, "k_a + k_b"), (3, MISTAKE, "(k_a + k_b)/2"), (1, MISTAKE, "C k_a"), (1, MISTAKE, "C(k_a - k_b)"),
    (1, INVALID, "k_a k_b^T"), (1, INVALID, "C(k_a + k_b"), (1, INVALID, "C(k_a + k_c)"),
    (1, INVALID, "C(v_a + v_b)"), (0.5, INVALID, "k_a^T k_b"),
]

POOL_1CI: Pool = [
    (10, OK, r"C(\mu_a + \mu_b)"), (5, OK, "C(mu_a + mu_b)"), (2, OK, "C(μ_a + μ_b)"), (2, OK, "lambda (mu_a + mu_b)"),
    (1, OK, "(u_a + u_b) C_1"), (1, OK, "C(u_a + u_b)"), (2, OK, "C(k_a + k_b)"), (2, OK, r"C \mu_a + C \mu_b"),
    (5, MISTAKE, "mu_a + mu_b"), (2, MISTAKE, r"\mu_a + \mu_b"), (1, MISTAKE, r"C \mu_a"),
    (1, INVALID, r"\mu_a \mu_b^T"), (1, INVALID, r"C(\mu_a + \mu_c)"), (1, INVALID, r"C(\mu_a + \mu_b"),
]

POOL_1DI: Pool = [
    (10, OK, {"q1": r"C \mu_a", "q2": r"C \mu_b"}), (3, OK, {"q1": "C mu_b", "q2": "C mu_a"}),
    (2, OK, {"q1": "c u_a", "q2": "c u_b"}), (2, OK, {"q1": "u_a b_1", "q2": "u_b b_2"}),
    (2, OK, {"q1": r"\lambda \mu_a", "q2": r"\lambda \mu_b"}),
    (1, OK, {"q1": "C(mu_a + mu_b)", "q2": "C(mu_a + mu_b)"}),
    (2, MISTAKE, {"q1": "C mu_a", "q2": "C mu_a"}), (4, MISTAKE, {"q1": "mu_a", "q2": "mu_b"}),
    (1, MISTAKE, {"q1": r"C \mu_a"}),
    (1, INVALID, {"q1": "C mu_a^T mu_b", "q2": "C mu_b"}),
]

POOL_1EI_C2: Pool = [(10, OK, "u_a"), (3, OK, "x_2"), (2, MISTAKE, "u_b"), (1, MISTAKE, "u_a + u_b"),
                     (1, MISTAKE, "x_1")]
POOL_1EI_POSSIBLE: Pool = [(10, OK, Raw("no")), (3, OK, Raw("false")), (1, OK, Raw("No")), (2, MISTAKE, Raw("yes")),
                           (0.5, INVALID, Raw("maybe"))]

# 1e.ii: whole (V, K, Q) answers. Students keep one notation for the three matrices,
# so right answers are built per notation; mistakes sit next to a right V or a right K, Q.
_V = {
    "latex": r"\frac{1}{\beta^2}(u_b u_b^\top - u_c u_c^\top)",
    "latex2": r"\frac{u_b u_b^T - u_c u_c^T}{\beta^2}",
    "ascii": "(u_b u_b^T - u_c u_c^T)/beta^2",
    "unicode": "(u_b u_b' - u_c u_c')/β^2",
}
_KQ = {
    "latex": [("I", r"\frac{1}{\beta^2}(u_d u_a^\top + u_c u_d^\top)"),
              (r"u_c u_c^\top + u_d u_d^\top", r"u_d u_a^\top + u_c u_d^\top")],
    "latex2": [("I", r"\frac{u_d u_a^T + u_c u_d^T}{\beta^2}")],
    "ascii": [("I", "(u_d u_a^T + u_c u_d^T)/beta^2"), ("u_d u_d^T + u_c u_c^T", "u_d u_a^T + u_c u_d^T"),
              ("I", "u_d u_a^T + u_c u_d^T"), ("I", "C(u_d u_a^T + u_c u_d^T)")],
    "unicode": [("I", "(u_d u_a' + u_c u_d')/β^2"), ("u_d u_d' + u_c u_c'", "u_d u_a' + u_c u_d'")],
}
POOL_1EII: Pool = []
for _style, _v in _V.items():
    for _i, (_k, _q) in enumerate(_KQ[_style]):
        POOL_1EII.append((6 if _i == 0 else 2, OK, {"V": _v, "K": _k, "Q": _q}))
POOL_1EII += [
    (1, OK, {"V": "u_b u_b^T/beta^2 - u_c u_c^T/beta^2", "K": "I", "Q": "u_d u_a^T/beta^2 + u_c u_d^T/beta^2"}),
    (1, OK, {"V": r"(u_b u_b^T - u_c u_c^T)/\|u_b\|^2", "K": "I", "Q": "(u_d u_a^T + u_c u_d^T)/beta^2"}),
    # seed 000's final Q, seed 001's Q (with its V), and other real mistakes
    (4, MISTAKE, {"V": r"\frac{u_b u_b^T - u_c u_c^T}{\beta^2}", "K": "I", "Q": r"\frac{u_c u_c^T + u_d u_d^T}{\beta^2}"}),
    (2, MISTAKE, {"V": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I", "Q": "(u_c u_c^T + u_d u_d^T)/beta^2"}),
    (2, MISTAKE, {"V": r"\frac{1}{B} u_b u_b^T - \frac{1}{B} u_c u_c^T", "K": "I", "Q": "u_a u_a^T + u_c u_c^T"}),
    (2, MISTAKE, {"V": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I", "Q": "u_a u_a^T + u_c u_c^T"}),
    (2, MISTAKE, {"V": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I", "Q": "u_c u_d^T"}),
    (2, MISTAKE, {"V": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I", "Q": "(u_a u_d^T + u_d u_c^T)/beta^2"}),
    (3, MISTAKE, {"V": "u_b u_b^T - u_c u_c^T", "K": "I", "Q": "(u_d u_a^T + u_c u_d^T)/beta^2"}),
    (1, MISTAKE, {"V": "(u_b u_b^T - u_c u_c^T)/beta^4", "K": "I", "Q": "(u_d u_a^T + u_c u_d^T)/beta^2"}),
    (1, MISTAKE, {"V": "I", "K": "I", "Q": "I"}),
    (1, MISTAKE, {"V": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I"}),
    (2, INVALID, {"V": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I", "Q": "u_c u_d + u_d u_a^T"}),
    (1, INVALID, {"V": "(u_b u_b^T - u_c u_c^T)/beta^2", "K": "I", "Q": "u_e u_a^T"}),
    (1, INVALID, {"V": "(u_b u_b^T - u_c u_c^T/beta^2", "K": "I", "Q": "u_d u_a^T + u_c u_d^T"}),
]

# Reported accuracies when there are no prediction files (YAML-only submissions).
POOL_ACC_NOFILE: Pool = [(3, MISTAKE, "1.2%"), (2, MISTAKE, "1.401%"), (2, MISTAKE, "16.2%"), (2, MISTAKE, "25.8%"),
                         (1, MISTAKE, Raw("0.22")), (1, MISTAKE, "9.4%"), (0.3, INVALID, "about twenty percent")]
POOL_LONDON: Pool = [(8, OK, "5%"), (3, OK, Raw("0.05")), (2, OK, "25/500"), (2, OK, Raw("5")),
                     (3, MISTAKE, "25%"), (2, MISTAKE, "4.55%"), (0.3, INVALID, "five")]

SP23: dict[str, Pool | Text] = {
    "a": _text("Attention treats its inputs as a set, so order must be encoded; 'dog bites man' differs from 'man bites dog'.",
               "Without positions the model cannot tell word order; translation needs it."),
    "b": [
        (6, OK, {"added": r"x_1 \cdot x_2 + x_1 \cdot p_2 + p_1 \cdot x_2 + p_1 \cdot p_2",
                 "concatenated": r"x_1 \cdot x_2 + p_1 \cdot p_2"}),
        (6, OK, {"added": "(x_1 + p_1)^T (x_2 + p_2)", "concatenated": "x_1^T x_2 + p_1^T p_2"}),
        (3, OK, {"added": r"\langle x_1 + p_1, x_2 + p_2 \rangle",
                 "concatenated": r"\langle x_1, x_2 \rangle + \langle p_1, p_2 \rangle"}),
        (2, OK, {"added": "x_1^T x_2 + x_1^T p_2 + p_1^T x_2 + p_1^T p_2", "concatenated": "x_1^T x_2 + p_1^T p_2"}),
        (4, MISTAKE, {"added": "x_1^T x_2 + p_1^T p_2", "concatenated": "x_1^T x_2 + p_1^T p_2"}),
        (1, MISTAKE, {"added": "x_1^T x_2 + 2 x_1^T p_2 + p_1^T p_2", "concatenated": "x_1^T x_2"}),
        (1, MISTAKE, {"added": "x_1 x_2 + p_1 p_2", "concatenated": "x_1 x_2"}),
        (1, INVALID, {"added": "x_1^T x_2 + x_3^T p_2", "concatenated": "x_1^T x_2 + p_1^T p_2"}),
        (1, INVALID, {"added": "(x_1+p_1)^T(x_2+p_2", "concatenated": "x_1^T x_2 + p_1^T p_2"}),
    ],
    "c.i": [(6, OK, "qpos_i^T kpos_j"), (4, OK, "qpos_i kpos_j"), (3, OK, r"\langle qpos_i, kpos_j \rangle"),
            (1, OK, "kpos_j^T qpos_i"), (1, OK, r"q_i^{(pos)} \cdot k_j^{(pos)}"),
            (1, INVALID, "qpos_i kpos_j^T"), (1, INVALID, "qpos_i^T kpos_i"), (0.5, INVALID, "qpos_i + kpos_j")],
    "c.ii": [(5, OK, "(2T-1) m"), (3, OK, r"(2 \cdot (T-1)+1) \cdot m"), (1, OK, "2Tm - m"), (2, OK, "m(2T - 1)"),
             (3, MISTAKE, "T m"), (2, MISTAKE, "2 T m"), (1, MISTAKE, "(2T+1)m"), (1, MISTAKE, "(2T - 1)"),
             (1, MISTAKE, "T^2 m"), (0.5, INVALID, "(2T - 1) h"), (0.5, INVALID, "(2T-1)m)")],
    "d": _text("Several heads attend to different relations at once: syntax, coreference, neighbours.",
               "Multiple heads can focus on several parts of the input in parallel."),
    "e": [(8, OK, {"one": "2^n", "two": "3^n", "k": "(k+1)^n"}), (2, OK, {"one": "2^{n}", "two": "3^{n}", "k": "(1+k)^{n}"}),
          (3, MISTAKE, {"one": "2^n", "two": "2^n", "k": "k^n"}), (2, MISTAKE, {"one": "2^n", "two": "3^n", "k": "k^n"}),
          (1, MISTAKE, {"one": "n", "two": "2n", "k": "kn"}), (0.5, INVALID, {"one": "2^n", "two": "3^n", "k": "(k+1)^m"})],
    "f": [(6, OK, {"encoder": r"\mathcal{O}(M^2k)", "cross": r"\mathcal{O}(MNk)", "decoder": r"\mathcal{O}(N^2k)"}),
          (6, OK, {"encoder": "O(M^2 k)", "cross": "O(M N k)", "decoder": "O(N^2 k)"}),
          (1, OK, {"encoder": "O(2 M^2 k)", "cross": "O(MNk)", "decoder": "O(N^2k)"}),
          (3, MISTAKE, {"encoder": "O(M^3 k)", "cross": "O(MNk)", "decoder": "O(N^2k)"}),
          (2, MISTAKE, {"encoder": "O(k M^2)", "cross": "O(M^2 N k)", "decoder": "O(N k)"}),
          (1, MISTAKE, {"encoder": "O(M^2 k + M k^2)", "cross": "O(MNk)", "decoder": "O(N^2k)"}),
          (2, MISTAKE, {"encoder": "O(M^2)", "cross": "O(MN)", "decoder": "O(N^2)"}),
          (0.5, INVALID, {"encoder": "O(M^2 d)", "cross": "O(MNk)", "decoder": "O(N^2k)"})],
    "g": [(8, OK, {"answer": Raw("false"), "why": _text("The position is kept, or masked tokens would look identical.",
                                                        "Only the token is masked; its position stays.")}),
          (2, OK, {"answer": Raw("no")}), (3, MISTAKE, {"answer": Raw("true")}), (0.5, INVALID, {"answer": "maybe"})],
    "h": [(8, OK, {"useful": Raw("true"), "why": _text("Pretraining is self-supervised: labels come from the text.",
                                                       "The next word is the label, so no annotation is needed.")}),
          (2, OK, {"useful": Raw("yes")}), (3, MISTAKE, {"useful": Raw("false"), "why": _text("No labels, so nothing to learn.")})],
    "i": [(6, OK, {"summarize": "encoder-decoder", "sentiment": "encoder", "retrieval": "encoder", "translate": "encoder-decoder"}),
          (3, OK, {"summarize": "seq-to-seq", "sentiment": "encoder model", "retrieval": "encoder model", "translate": "seq-to-seq"}),
          (2, OK, {"summarize": "seq2seq", "sentiment": "encoder", "retrieval": "encoder", "translate": "seq2seq"}),
          (3, MISTAKE, {"summarize": "encoder", "sentiment": "encoder", "retrieval": "encoder-decoder", "translate": "seq2seq"}),
          (0.5, INVALID, {"summarize": "decoder", "sentiment": "encoder", "retrieval": "encoder", "translate": "encoder-decoder"})],
}

FA22: dict[str, Pool | Text] = {
    "1a": [(10, OK, "keys"), (3, MISTAKE, "queries"), (1, INVALID, "the keys"), (1, INVALID, "rows")],
    "1b": [(8, OK, {"weights": "identity", "why": _text("Each query matches its own key best.",
                                                         "q_i and k_i are identical, so their dot product is the largest.")}),
           (2, OK, {"weights": "close to the identity"}), (3, MISTAKE, {"weights": "uniform"}), (1, MISTAKE, {"weights": "random"})],
    "1c": [(5, OK, r"\begin{bmatrix} \cos(\omega_k) & \sin(\omega_k) \\ -\sin(\omega_k) & \cos(\omega_k) \end{bmatrix}"),
           (5, OK, "[[cos(omega), sin(omega)], [-sin(omega), cos(omega)]]"),
           (2, OK, r"\begin{pmatrix} \cos\omega & \sin\omega \\ -\sin\omega & \cos\omega \end{pmatrix}"),
           (1, OK, "[[cos(ω), sin(ω)], [-sin(ω), cos(ω)]]"),
           (4, MISTAKE, "[[cos(omega), -sin(omega)], [sin(omega), cos(omega)]]"),
           (2, MISTAKE, r"\begin{bmatrix} \cos\omega & -\sin\omega \\ \sin\omega & \cos\omega \end{bmatrix}"),
           (1, MISTAKE, "[[cos(omega t), sin(omega t)], [-sin(omega t), cos(omega t)]]"),
           (1, MISTAKE, "[[1, omega], [-omega, 1]]"),
           (0.5, INVALID, "[[cos(omega), sin(omega)], [-sin(omega)]]"),
           (0.5, INVALID, "[[cos(theta), sin(theta)], [-sin(theta), cos(theta)]]")],
    "1d": [(8, OK, {"required": Raw("no"), "why": _text("Only cross-attention must read the encoder outputs.",
                                                        "Cross-attention projects encoder outputs; sizes can differ.")}),
           (2, OK, {"required": Raw("false")}), (3, MISTAKE, {"required": Raw("yes")})],
    "1e": _text("Pad tokens are masked; the decoder also masks future tokens.", "Padding everywhere, plus a causal mask in the decoder."),
    "1f": _text("Beam search returning several beams, or sampling.", "Sample with temperature several times."),
    "1g": _text("They perform similarly.", "Performer is close to softmax attention."),
    "2a": _text("Heads attend to the previous token.", "Attention goes to separators."),
    "2b": _text("Some heads attend to the same word.", "Attention is broad in early layers."),
    "2c": _text("BERT attends both ways, GPT only to the left.", "GPT is causal."),
    "2d": _text("Later layers are more specific.", "Heads specialise with depth."),
    "3a.i": [(5, OK, r"\exp(\frac{\|q\|_2^2}{2\sigma^2}) * K_{Gauss}(q, k) * \exp(\frac{\|k\|_2^2}{2\sigma^2})"),
             (5, OK, r"exp(\|q\|^2/(2 sigma^2)) K_Gauss(q, k) exp(\|k\|^2/(2 sigma^2))"),
             (2, OK, r"exp((\|q\|^2 + \|k\|^2)/(2 sigma^2)) K_Gauss(q, k)"),
             (1, OK, r"exp(\|q\|^2/(2 σ^2)) K_Gauss(q, k) exp(\|k\|^2/(2 σ^2))"),
             (3, MISTAKE, "exp(q^T k / sigma^2)"), (2, MISTAKE, r"exp(\|q\|^2/(2 sigma^2)) K_Gauss(q, k)"),
             (1, MISTAKE, "K_Gauss(q, k)"),
             (0.5, INVALID, r"exp(\|q\|^2/(2 sigma^2)) K_Gauss(q) exp(\|k\|^2/(2 sigma^2))")],
    "3a.ii": [(5, OK, {"sim": r"\exp(\frac{\|q\|_2^2}{2\sigma^2}) * \phi_{random}(q)^T \phi_{random}(k) * \exp(\frac{\|k\|_2^2}{2\sigma^2})",
                       "cost": r"\mathcal{O}(N(M+D)D_{random})"}),
              (5, OK, {"sim": r"exp((\|q\|^2 + \|k\|^2)/(2 sigma^2)) phi(q)^T phi(k)", "cost": "O(N D_random (D + M))"}),
              (2, MISTAKE, {"sim": r"exp(\|q\|^2/(2 sigma^2)) phi(q)^T phi(k)", "cost": "O(N^2 D)"}),
              (2, MISTAKE, {"sim": r"exp((\|q\|^2 + \|k\|^2)/(2 sigma^2)) phi(q)^T phi(k)", "cost": "O(N^2 D_random)"}),
              (1, MISTAKE, {"sim": "phi(q)^T phi(k)", "cost": "O(N D_random D)"})],
    "3a.iii": _text("The error falls as D_random grows.", "More random features, smaller error."),
    "3b": [(5, OK, {"output": r"\frac{\phi(Q_i)^T S_i}{\phi(Q_i)^T Z_i}", "cost": "O(N)"}),
           (5, OK, {"output": "phi(Q_i)^T S_i / (phi(Q_i)^T Z_i)", "cost": "O(N D_random M)"}),
           (3, MISTAKE, {"output": "phi(Q_i)^T S_i", "cost": "O(N^2)"}),
           (1, INVALID, {"output": "S_i / Z_i", "cost": "O(N)"}),
           (1, INVALID, {"output": "phi(Q_i)^T S_i / phi(Q_i)^T Z_i", "cost": "O(N)"})],
}

NYU: dict[str, Pool | Text] = {
    "1.1a": [(5, OK, {"H": r"V \mathrm{softargmax}_\beta(K^\top Q)", "shape": r"\mathbb{R}^{t \times n}"}),
             (5, OK, {"H": "V softargmax_beta(K^T Q)", "shape": "t x n"}),
             (2, OK, {"H": "V softargmax_β(K^T Q)", "shape": "t × n"}),
             (3, INVALID, {"H": "V softmax_beta(Q^T K)", "shape": "n x t"}),
             (2, INVALID, {"H": "softargmax_beta(K^T Q) V", "shape": r"t \times n"}),
             (1, INVALID, {"H": "V^T softargmax_beta(K^T Q)", "shape": r"t \times n"})],
    "1.1b": [(6, OK, {"beta": r"\frac{1}{\sqrt{d_k}}", "why": _text("It keeps the scale of the scores independent of d.",
                                                                   "The dot products grow like sqrt(d).")}),
             (4, OK, {"beta": r"1/\sqrt{d}"}), (1, OK, {"beta": "d^{-1/2}"}),
             (3, MISTAKE, {"beta": r"\sqrt{d}"}), (1, MISTAKE, {"beta": "1/d"}), (0.5, INVALID, {"beta": "1/sqrt(d"})],
    "1.1c": [(6, OK, {"beta": "large", "type": "hard", "why": _text("A one-hot softargmax passes one value through.")}),
             (2, OK, {"beta": "big", "type": "hard"}),
             (4, MISTAKE, {"beta": "small", "type": "hard", "why": _text("The output must look one-hot.")}),
             (1, MISTAKE, {"beta": "small", "type": "soft"})],
    "1.1d": [(6, OK, {"beta": "small", "type": "soft", "why": _text("A flat softargmax averages the values.")}),
             (4, MISTAKE, {"beta": "big", "type": "soft", "why": _text("High temperature gives a distribution.")}),
             (1, MISTAKE, {"beta": "large", "type": "hard"})],
    "1.1e": _text("Only the attention for that key changes.", "Mean-zero noise changes the output little."),
    "1.1f": _text("The whole column for that query changes.", "One query's weights all move."),
    "1.1g": _text("Set masked scores to minus infinity before the softmax.", "Mask with -inf."),
    "1.2": _text("Heads split the dimension and attend separately.", "Multi-head runs attention h times in parallel."),
    "1.3": _text("Queries, keys and values all come from the same sequence.", "Self-attention: Q, K, V from x."),
    "1.4": _text("Attention, add and norm, feed-forward, add and norm.", "Blocks of attention and MLP with residuals."),
    "1.5": _text("Images are cut into patches treated as tokens.", "ViT embeds patches."),
}


def a5_pools(homework: str) -> dict[str, Pool | Text | str]:
    pools: dict[str, Pool | Text | str] = {
        "1a": A5_TEXT["1a"], "1b": POOL_1B, "1c.i": POOL_1CI, "1c.ii": A5_TEXT["1c.ii"], "1d.i": POOL_1DI,
        "1d.ii": A5_TEXT["1d.ii"], "1e.i": "1e.i", "1e.ii": POOL_1EII, "2d": "files", "2f": "files",
    }
    if homework == "cs224n-w21-a5":
        pools.update({"2g.i": "files", "2g.ii": A5_TEXT["2g.ii"]})  # 2e (code) is left unanswered
    else:
        pools.update(MIMUW_TEXT)
    pools.update({"3a": A5_TEXT["3a"], "3b": A5_TEXT["3b"], "3c": A5_TEXT["3c"]})
    return pools


POOLS = {
    "cs224n-w21-a5": a5_pools("cs224n-w21-a5"),
    "mimuw-2022-p4": a5_pools("mimuw-2022-p4"),
    "eecs182-sp23-transformers": SP23,
    "eecs182-fa22-hw8": FA22,
    "nyu-dl-transformer": NYU,
}

# Which prediction files each file part names, and the part's accuracy fields.
FILE_PARTS = {
    "2d": ("vanilla.nopretrain.dev.predictions", "vanilla.nopretrain.test.predictions"),
    "2f": ("vanilla.pretrain.dev.predictions", "vanilla.pretrain.test.predictions"),
    "2g.i": ("synthesizer.pretrain.dev.predictions", "synthesizer.pretrain.test.predictions"),
}


# -- drawing -------------------------------------------------------------------------------
def pick(rng: random.Random, pool: Pool) -> tuple[str, Any]:
    weights = [w for w, _, _ in pool]
    _, label, value = rng.choices(pool, weights=weights)[0]
    return label, value


def draw_text(rng: random.Random, text: Text) -> str:
    base = rng.choice(text.base)
    if rng.random() < 0.15:  # copied from a friend or the slides, word for word
        return base
    opener = rng.choice(_OPENERS)
    body = base[0].lower() + base[1:] if opener else base
    return f"{opener}{body}{rng.choice(_CLOSERS)}".strip()


def materialize(rng: random.Random, value: Any) -> Any:
    """Resolve Text placeholders inside a pool value (per student)."""
    if isinstance(value, Text):
        return draw_text(rng, value)
    if isinstance(value, dict):
        return {k: materialize(rng, v) for k, v in value.items()}
    return value


def worst(*labels: str) -> str:
    return max(labels, key=lambda lab: LABEL_ORDER[lab])


# -- real prediction files -----------------------------------------------------------------
def dev_gold() -> list[str]:
    rows = DEV_GOLD.read_text(encoding="utf-8").lstrip("\ufeff").split("\n")
    while rows and not rows[-1].strip():
        rows.pop()
    return [r.split("\t")[1].strip() for r in rows]


def true_accuracy(path: Path, gold: list[str]) -> tuple[int, int] | None:
    """(correct, lines) of a dev prediction file as the course scores it, or None."""
    text = path.read_text(encoding="utf-8", errors="replace")
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    rows = [r[:-1] if r.endswith("\r") else r for r in rows]
    if len(rows) != len(gold):
        return None
    return sum(p == g for p, g in zip(rows, gold)), len(rows)


@dataclass
class Owner:
    name: str
    files: dict[str, Path]  # filename -> path
    accuracy: dict[str, tuple[int, int] | None]  # dev filename -> (k, n)


def owners() -> list[Owner]:
    gold = dev_gold() if DEV_GOLD.is_file() else []
    found = []
    for folder in sorted(EXAMPLES_A5.iterdir()) if EXAMPLES_A5.is_dir() else []:
        if not folder.is_dir():
            continue
        files = {p.name: p for p in sorted(folder.glob("*.predictions")) if p.is_file() and not p.is_symlink()}
        if not files:
            continue
        acc = {name: true_accuracy(p, gold) if gold else None for name, p in files.items() if ".dev." in name}
        found.append(Owner(folder.name, files, acc))
    return found


def write_distinct(source: Path, target: Path, gold: list[str], student: str) -> None:
    """A copy of a dev prediction file that no other student's equals, scoring the same: the
    first wrong prediction becomes another wrong one (the student id appended). A file the
    course would not score (not one row per gold line), or one with no wrong prediction, is
    copied as it is (a real file of the wrong length stays shared; none has no wrong prediction)."""
    rows = source.read_text(encoding="utf-8", errors="replace").split("\n")
    if len(rows) - (rows[-1] == "") == len(gold):
        wrong = next((i for i, (row, right) in enumerate(zip(rows, gold)) if row.rstrip("\r") != right), None)
        if wrong is not None:
            row = rows[wrong]
            rows[wrong] = row.rstrip("\r") + f" {student}" + ("\r" if row.endswith("\r") else "")
    target.write_text("\n".join(rows), encoding="utf-8", newline="")


def fmt_accuracy(rng: random.Random, k: int, n: int) -> Any:
    """A right reported accuracy k/n, written as students write it."""
    pct = 100 * k / n
    return rng.choice([f"{pct:.1f}%", f"{pct:g}%", Raw(f"{k / n:.3f}".rstrip("0").rstrip(".") or "0"), f"{k}/{n}",
                       f"{pct:.2f}%"])


def files_answer(rng: random.Random, part: str, owner: Owner | None) -> tuple[str, Any, dict[str, str]]:
    """(label, YAML answer, {filename: owner}) for a prediction-file part."""
    answer: dict[str, Any] = {}
    label = OK
    copied: dict[str, str] = {}
    dev, test = FILE_PARTS[part]
    if owner is not None and dev in owner.files:
        copied[dev] = owner.name
        if test in owner.files:
            copied[test] = owner.name
        acc = owner.accuracy.get(dev)
        r = rng.random()
        if acc is not None and r < 0.7:
            answer["accuracy"] = fmt_accuracy(rng, *acc)
        elif r < 0.8:
            lab, value = pick(rng, POOL_ACC_NOFILE)
            label, answer["accuracy"] = worst(label, lab if lab == INVALID else MISTAKE), value
        # else: no reported accuracy
    else:
        if rng.random() < 0.85:
            lab, answer["accuracy"] = pick(rng, POOL_ACC_NOFILE)
            label = worst(label, lab)
        label = worst(label, MISTAKE)  # no files: cannot earn the file share
    if part == "2d" and rng.random() < 0.9:
        lab, answer["london"] = pick(rng, POOL_LONDON)
        label = worst(label, lab)
    return label, answer, copied


# -- one submission ------------------------------------------------------------------------
# -- the worst case: every answer distinct ---------------------------------------------------
_PARTS: dict[str, Any] = {}  # homework -> part id -> bank.PartInfo, read once per process


def _part(homework: str, part_id: str) -> Any:
    if not _PARTS:
        import bank

        _PARTS.update(bank.bundled())
    return _PARTS.get(homework, {}).get(part_id)


def disguise(homework: str, part_id: str, value: Any, n: int) -> Any:
    """`value` written differently by student number `n`, as a real class does (a rescaled
    constant, an unexpanded equivalent form), so that no two students share a checked answer.

    The meaning stays: a right answer stays right, a wrong one wrong (except that a rescaled
    free constant is still a free constant)."""
    part = _part(homework, part_id)
    if part is None or not isinstance(value, (str, dict)):
        return value
    kinds = set(part.checks)
    k = n + 2
    if "attention_qkv" in kinds and isinstance(value, dict) and {"K", "Q"} <= set(value):
        return {**value, "K": f"{k} ({value['K']})", "Q": f"({value['Q']})/{k}"}
    fields = part.math_fields
    if not fields:
        return value
    scalar = part.positive_scalar

    def one(text: Any) -> Any:
        if not isinstance(text, str) or not text.strip():
            return text
        if "attention_query" in kinds:
            return f"{k} ({text})"
        inner = text.strip()
        if "bigO" in kinds and inner.startswith("O(") and inner.endswith(")"):
            return f"O({k} ({inner[2:-1]}))"
        if scalar and "equivalent" in kinds:  # equal to 1, but sympy does not cancel it by itself
            return f"({text}) (({scalar} + {k})^2/({scalar}^2 + {2 * k} {scalar} + {k * k}))"
        return text

    if isinstance(value, dict):
        return {name: one(v) if name in fields else v for name, v in value.items()}
    return one(value) if len(fields) == 1 or part.single_field else value


def submission(rng: random.Random, homework: str, student: str, owner_list: list[Owner], folder_share: float,
               missing: float, distinct: int | None = None) -> dict[str, Any]:
    pools = POOLS[homework]
    is_folder = homework in ("cs224n-w21-a5", "mimuw-2022-p4") and owner_list and rng.random() < folder_share
    owner = rng.choice(owner_list) if is_folder else None
    # A few students stop half way; everyone skips a part now and then.
    stop_at = rng.randrange(len(pools) // 2, len(pools)) if rng.random() < 0.06 else len(pools)
    answers: dict[str, Any] = {}
    labels: dict[str, str] = {}
    files: dict[str, str] = {}
    for index, (part, pool) in enumerate(pools.items()):
        if index >= stop_at or rng.random() < missing:
            labels[part] = "missing"
            continue
        if pool == "files":
            label, value, copied = files_answer(rng, part, owner)
            files.update(copied)
            if value:
                answers[part] = value
            labels[part] = label if (value or copied) else "missing"
            continue
        if pool == "1e.i":
            l1, c2 = pick(rng, POOL_1EI_C2)
            l2, possible = pick(rng, POOL_1EI_POSSIBLE)
            value = {"c2": c2, "possible": possible}
            if rng.random() < 0.8:
                value["why"] = draw_text(rng, A5_TEXT["why"])
            answers[part], labels[part] = value, worst(l1, l2)
            continue
        if isinstance(pool, Text):
            answers[part], labels[part] = draw_text(rng, pool), TEXT
            continue
        label, value = pick(rng, pool)
        value = materialize(rng, value)
        if distinct is not None and label != INVALID:
            value = disguise(homework, part, value, distinct)
        answers[part], labels[part] = value, label
    if homework == "mimuw-2022-p4":
        files = {f: o for f, o in files.items() if f.startswith("vanilla.")}
    return {"student": student, "homework": homework, "folder": bool(is_folder), "owner": owner.name if owner else None,
            "answers": answers, "labels": labels, "files": files}


# -- YAML ----------------------------------------------------------------------------------
def _scalar(value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def to_yaml(sub: dict[str, Any], comment: str = "") -> str:
    lines = [f"# {comment}"] if comment else []
    lines += [f"homework: {sub['homework']}", f"student: {sub['student']}"]
    if not sub["answers"]:
        lines.append("answers: {}")
    else:
        lines.append("answers:")
        for part, value in sub["answers"].items():
            if isinstance(value, dict):
                lines.append(f"  {part}:")
                for name, v in value.items():
                    lines.append(f"    {name}: {_scalar(v)}")
            else:
                lines.append(f"  {part}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


BROKEN_YAML = (
    "homework: cs224n-w21-a5\nanswers:\n  1b: 'C(k_a + k_b)\n  1c.i: C(mu_a + mu_b)\n",  # unclosed quote
    "homework: eecs182-sp23-transformers\nanswers:\n\tb:\n\t\tadded: x\n",  # tabs
    "homework: nyu-dl-transformer\nanswers: [1.1a, 1.1b]\n",  # answers not a mapping
)


# -- the class -----------------------------------------------------------------------------
def generate(n: int, seed: int, out: Path, folder_share: float = 0.5, missing: float = 0.06,
             broken: float = 0.005, distinct: bool = False, distinct_files: bool = False) -> dict[str, Any]:
    """Write N submissions into `out` (emptied first); return the manifest (also written next to it).

    `distinct`: the worst case, where every student writes every checked answer their own way.
    `distinct_files`: every dev prediction file differs from every other (as when each student
    trains a model), with the accuracy of the real file it is made from."""
    rng = random.Random(seed)
    if out.exists():
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise SystemExit(f"{out} exists and was not written by bench/generate.py; choose another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by bench/generate.py; emptied on the next run\n", encoding="utf-8")
    owner_list = owners()
    if distinct_files and not DEV_GOLD.is_file():
        raise SystemExit(f"--distinct-files needs the A5 dev gold; not found at {DEV_GOLD}")
    gold = dev_gold() if distinct_files else None
    homeworks = list(HOMEWORKS)
    shares = [HOMEWORKS[h] for h in homeworks]
    manifest: dict[str, Any] = {"n": n, "seed": seed, "folder_share": folder_share, "missing": missing,
                                "distinct": distinct, "distinct_files": distinct_files,
                                "owners": [o.name for o in owner_list], "submissions": []}
    for i in range(n):
        student = f"s{i:05d}"
        if rng.random() < broken:
            text = rng.choice(BROKEN_YAML)
            (out / f"{student}.yaml").write_text(text, encoding="utf-8")
            manifest["submissions"].append({"student": student, "homework": None, "broken": True, "labels": {},
                                            "answers": {}, "files": {}, "folder": False, "owner": None})
            continue
        homework = rng.choices(homeworks, weights=shares)[0]
        sub = submission(rng, homework, student, owner_list, folder_share, missing, i if distinct else None)
        comment = f"synthetic submission (bench/generate.py, seed {seed})"
        if sub["folder"]:
            folder = out / student
            folder.mkdir()
            (folder / "answers.yaml").write_text(to_yaml(sub, comment), encoding="utf-8")
            owner = next(o for o in owner_list if o.name == sub["owner"])
            for filename in sub["files"]:
                if gold is not None and ".dev." in filename:
                    write_distinct(owner.files[filename], folder / filename, gold, student)
                else:
                    shutil.copyfile(owner.files[filename], folder / filename)  # a copy: symlinks are refused
        else:
            (out / f"{student}.yaml").write_text(to_yaml(sub, comment), encoding="utf-8")
        manifest["submissions"].append(sub)
    (out.parent / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False, default=str) + "\n",
                                              encoding="utf-8")
    return manifest


def distinct_answers(manifest: dict[str, Any]) -> dict[tuple[str, str], dict[str, int]]:
    """Per (homework, part): submissions answering it and distinct answers.

    `distinct` counts the raw answers (all fields, text included, plus which real
    prediction files came with it); `distinct_math` leaves out free-text fields, which
    is what the machine checks see.
    """
    raw: dict[tuple[str, str], set[str]] = defaultdict(set)
    math: dict[tuple[str, str], set[str]] = defaultdict(set)
    count: Counter[tuple[str, str]] = Counter()
    text_fields = {"why"}
    for sub in manifest["submissions"]:
        if sub.get("broken"):
            continue
        hw = sub["homework"]
        for part, label in sub["labels"].items():
            if label == "missing":
                continue
            value = sub["answers"].get(part)
            files = sorted((f, o) for f, o in sub["files"].items() if f in FILE_PARTS.get(part, ()))
            key = (hw, part)
            count[key] += 1
            raw[key].add(json.dumps([value, files], sort_keys=True, ensure_ascii=False, default=str))
            if label == TEXT:
                continue
            stripped = {k: v for k, v in value.items() if k not in text_fields} if isinstance(value, dict) else value
            math[key].add(json.dumps([stripped, files], sort_keys=True, ensure_ascii=False, default=str))
    return {key: {"answered": count[key], "distinct": len(raw[key]), "distinct_math": len(math.get(key, ()))}
            for key in count}


# -- validation of the pools -----------------------------------------------------------------
EXPECTED = {OK: {"correct", "manual"}, MISTAKE: {"partial", "incorrect", "manual"}, INVALID: {"invalid"}}

# Right answers in a notation attngrade does not read yet (found by this benchmark; kept in
# the pools because students write them). --validate lists them apart from real mismatches.
KNOWN_GAPS = {
    ("eecs182-sp23-transformers", "c.i", r"q_i^{(pos)} \cdot k_j^{(pos)}"),
    ("nyu-dl-transformer", "1.1a", "V softargmax_β(K^T Q)"),
}


def _fits(label: str, part: dict[str, Any]) -> bool:
    if part["status"] in EXPECTED[label]:
        return True
    # A right choice or formula whose `why` text was left out is partial, as it should be.
    return label == OK and part["status"] == "partial" and all(f.endswith(": no answer") for f in part["feedback"])


def _gap(homework: str, part: str, value: Any) -> bool:
    fields = value.values() if isinstance(value, dict) else [value]
    return any((homework, part, f) in KNOWN_GAPS for f in fields)


def validation_class(folder: Path) -> dict[str, tuple[str, str, str, Any]]:
    """One submission per pool entry, answering that part only; student -> (homework, part, label, value)."""
    rng = random.Random(0)
    entries: dict[str, tuple[str, str, str, Any]] = {}
    folder.mkdir(parents=True)
    for homework, pools in POOLS.items():
        for part_id, pool in pools.items():
            if not isinstance(pool, list):
                continue
            for _, label, value in pool:
                student = f"v{len(entries):04d}"
                answer = materialize(rng, value)
                sub = {"homework": homework, "student": student, "answers": {part_id: answer}}
                (folder / f"{student}.yaml").write_text(to_yaml(sub), encoding="utf-8")
                entries[student] = (homework, part_id, label, value)
    return entries


def validate(solutions: Path) -> int:
    """Grade every pool entry alone with `grade run`; print the entries whose status does not fit the label."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        entries = validation_class(Path(tmp) / "class")
        done = subprocess.run([sys.executable, "-m", "attngrade", "run", str(Path(tmp) / "class"), "-o",
                               str(Path(tmp) / "out"), "--solutions", str(solutions)],
                              capture_output=True, text=True, cwd=tmp)
        results = Path(tmp) / "out" / "results.json"
        if not results.is_file():
            raise SystemExit(f"grade run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        rows = {row["student"]: row for row in json.loads(results.read_text(encoding="utf-8"))}
    mismatches, gaps = 0, []
    for student, (homework, part_id, label, value) in entries.items():
        row = rows.get(student, {})
        part = next((p for p in row.get("parts", []) if p["id"] == part_id),
                    {"status": "not graded", "feedback": [str(row.get("error", "no row in results.json"))]})
        if _fits(label, part):
            continue
        if _gap(homework, part_id, value):
            gaps.append(f"{homework} {part_id}: {value!r} graded {part['status']}")
            continue
        mismatches += 1
        why = part["feedback"][0].splitlines()[0] if part["feedback"] else ""
        print(f"{homework} {part_id}: labelled {label}, graded {part['status']}: {value!r}\n    {why}")
    for gap in gaps:
        print(f"known notation gap: {gap}")
    print(f"{len(entries)} pool entries graded, {mismatches} whose status does not fit their label, "
          f"{len(gaps)} known notation gaps")
    return 1 if mismatches else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="number of submissions (default 1000)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/attngrade-bench/class"),
                        help="class folder to write (emptied first); manifest.json goes next to it")
    parser.add_argument("--folder-share", type=float, default=0.5,
                        help="share of A5/MIMUW submissions that are folders with real prediction files (default 0.5)")
    parser.add_argument("--missing", type=float, default=0.06, help="chance that a part is left out (default 0.06)")
    parser.add_argument("--distinct", action="store_true",
                        help="the worst case: every student writes every checked answer differently")
    parser.add_argument("--distinct-files", action="store_true",
                        help="every dev prediction file distinct (same accuracy as the real file it is made from)")
    parser.add_argument("--validate", action="store_true", help="grade each pool entry once and report mismatches")
    parser.add_argument("--solutions", type=Path, default=ROOT / "solutions", help="keys for --validate")
    args = parser.parse_args(argv)
    if args.validate:
        return validate(args.solutions)
    if args.n < 1:
        parser.error("--n must be at least 1")
    manifest = generate(args.n, args.seed, args.out, args.folder_share, args.missing, distinct=args.distinct,
                        distinct_files=args.distinct_files)
    subs = manifest["submissions"]
    print(f"wrote {len(subs)} submissions to {args.out} "
          f"({sum(s['folder'] for s in subs)} folders with prediction files, "
          f"{sum(bool(s.get('broken')) for s in subs)} broken YAML files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
