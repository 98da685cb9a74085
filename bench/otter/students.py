"""The 20 students of the Otter comparison: CS224N A5 1e.ii, answered twice.

Each student is one construction (V, K, Q) written two ways:

* for Otter, numpy functions V(u, beta), K(u, beta), Q(u, beta) in a copy of
  `assignment.ipynb` (u is a dict of the orthogonal vectors u_a..u_d, each of norm beta);
* for attngrade, the same matrices as a 1e.ii answer in a YAML submission, in the
  notation a student would type (LaTeX, ASCII, unicode beta).

Some are right (three different constructions, several notations), some carry the
seeds' real mistakes (seed 000's Q, seed 001's Q), some are partly right, one uses the
shape error that numpy silently broadcasts but attngrade reports.

This module only uses the standard library plus nbformat (which attngrade depends on).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# numpy bodies: the helper names ua..ud, beta, d and o (np.outer) are set up in the cell.
_V_OK = "(o(ub, ub) - o(uc, uc)) / beta**2"
_Q_OK = "(o(ud, ua) + o(uc, ud)) / beta**2"

# (student, label, numpy V/K/Q, attngrade V/K/Q)
STUDENTS: list[tuple[str, str, tuple[str, str, str], tuple[str, str, str]]] = [
    ("stu01", "right: K = I, Q / beta^2 (LaTeX)", (_V_OK, "np.eye(d)", _Q_OK),
     (r"\frac{1}{\beta^2}(u_b u_b^\top - u_c u_c^\top)", "I", r"\frac{1}{\beta^2}(u_d u_a^\top + u_c u_d^\top)")),
    ("stu02", "right: K = I, Q / beta^2 (ASCII)", (_V_OK, "np.identity(d)", _Q_OK),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "I", "(u_d u_a^T + u_c u_d^T)/beta^2")),
    ("stu03", "right: K = I, Q / beta^2 (unicode, primes)", (_V_OK, "np.eye(d)", "(np.outer(ud, ua) + np.outer(uc, ud)) / beta**2"),
     ("(u_b u_b' - u_c u_c')/β^2", "I", "(u_d u_a' + u_c u_d')/β^2")),
    ("stu04", "right: K = I, Q / beta^2 (\\frac over the sum)", ("o(ub, ub) / beta**2 - o(uc, uc) / beta**2", "np.eye(d)", _Q_OK),
     (r"\frac{u_b u_b^T - u_c u_c^T}{\beta^2}", "I", r"\frac{u_d u_a^T + u_c u_d^T}{\beta^2}")),
    ("stu05", "right: K projects on u_d, u_c (ASCII)", (_V_OK, "o(ud, ud) + o(uc, uc)", "o(ud, ua) + o(uc, ud)"),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "u_d u_d^T + u_c u_c^T", "u_d u_a^T + u_c u_d^T")),
    ("stu06", "right: K projects on u_c, u_d (LaTeX)", (_V_OK, "o(uc, uc) + o(ud, ud)", "o(ud, ua) + o(uc, ud)"),
     (r"\frac{1}{\beta^2}(u_b u_b^\top - u_c u_c^\top)", r"u_c u_c^\top + u_d u_d^\top", r"u_d u_a^\top + u_c u_d^\top")),
    ("stu07", "right: K projects on u_d, u_c (primes)", (_V_OK, "o(ud, ud) + o(uc, uc)", "o(ud, ua) + o(uc, ud)"),
     ("(u_b u_b' - u_c u_c')/beta^2", "u_d u_d' + u_c u_c'", "u_d u_a' + u_c u_d'")),
    ("stu08", "right: K = I, Q unscaled", (_V_OK, "np.eye(d)", "o(ud, ua) + o(uc, ud)"),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "I", "u_d u_a^T + u_c u_d^T")),
    ("stu09", "right: K = I, Q with a large constant", (_V_OK, "np.eye(d)", "100 * (o(ud, ua) + o(uc, ud)) / beta**2"),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "I", "C(u_d u_a^T + u_c u_d^T)/beta^2")),
    ("stu10", "wrong Q of seed 000 (LaTeX)", (_V_OK, "np.eye(d)", "(o(uc, uc) + o(ud, ud)) / beta**2"),
     (r"\frac{u_b u_b^T - u_c u_c^T}{\beta^2}", "I", r"\frac{u_c u_c^T + u_d u_d^T}{\beta^2}")),
    ("stu11", "wrong Q of seed 000 (ASCII)", (_V_OK, "np.eye(d)", "(o(uc, uc) + o(ud, ud)) / beta**2"),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "I", "(u_c u_c^T + u_d u_d^T)/beta^2")),
    ("stu12", "wrong Q of seed 000 (unicode)", (_V_OK, "np.eye(d)", "(o(uc, uc) + o(ud, ud)) / beta**2"),
     ("(u_b u_b' - u_c u_c')/β^2", "I", "(u_c u_c' + u_d u_d')/β^2")),
    ("stu13", "wrong Q of seed 001 (LaTeX)", (_V_OK, "np.eye(d)", "o(ua, ua) + o(uc, uc)"),
     (r"\frac{1}{\beta^2} u_b u_b^T - \frac{1}{\beta^2} u_c u_c^T", "I", "u_a u_a^T + u_c u_c^T")),
    ("stu14", "wrong Q of seed 001 (ASCII)", (_V_OK, "np.eye(d)", "o(ua, ua) + o(uc, uc)"),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "I", "u_a u_a^T + u_c u_c^T")),
    ("stu15", "partial: query 2 goes nowhere", (_V_OK, "np.eye(d)", "o(uc, ud)"),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "I", "u_c u_d^T")),
    ("stu16", "partial: V not scaled by 1/beta^2", ("o(ub, ub) - o(uc, uc)", "np.eye(d)", _Q_OK),
     ("u_b u_b^T - u_c u_c^T", "I", "(u_d u_a^T + u_c u_d^T)/beta^2")),
    ("stu17", "partial: V not scaled, LaTeX", ("o(ub, ub) - o(uc, uc)", "np.eye(d)", _Q_OK),
     (r"u_b u_b^\top - u_c u_c^\top", "I", r"\frac{1}{\beta^2}(u_d u_a^\top + u_c u_d^\top)")),
    ("stu18", "partial: Q transposed", (_V_OK, "np.eye(d)", "(o(ua, ud) + o(ud, uc)) / beta**2"),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "I", "(u_a u_d^T + u_d u_c^T)/beta^2")),
    ("stu19", "wrong: V = K = Q = I", ("np.eye(d)", "np.eye(d)", "np.eye(d)"),
     ("I", "I", "I")),
    ("stu20", "shape error: u_c u_d (numpy broadcasts the inner product)", (_V_OK, "np.eye(d)", "(uc @ ud + o(ud, ua)) / beta**2"),
     ("(u_b u_b^T - u_c u_c^T)/beta^2", "I", "u_c u_d + u_d u_a^T")),
]

_INTRO = """# CS224N A5, question 1(e)(ii)

The inputs are x1 = u_d + u_b, x2 = u_a, x3 = u_c + u_b, where u_a, u_b, u_c, u_d are
mutually orthogonal vectors of norm beta in R^d. Self-attention uses v_j = V x_j,
k_j = K x_j, q_i = Q x_i and alpha_ij = softmax_j(k_j . q_i).

Define the d×d matrices V, K and Q, as functions of the vectors `u` (a dict with keys
`"a"`, `"b"`, `"c"`, `"d"`) and of `beta`, so that c2 ≈ u_b and c1 ≈ u_b − u_c as beta grows.
"""

_PRELUDE = """import numpy as np

o = np.outer
"""

_BODY = """def V(u, beta):
    ua, ub, uc, ud = u["a"], u["b"], u["c"], u["d"]
    d = len(ua)
    return {V}


def K(u, beta):
    ua, ub, uc, ud = u["a"], u["b"], u["c"], u["d"]
    d = len(ua)
    return {K}


def Q(u, beta):
    ua, ub, uc, ud = u["a"], u["b"], u["c"], u["d"]
    d = len(ua)
    return {Q}
"""

_TEMPLATE_BODY = _BODY.format(V="...", K="...", Q="...")


def notebook(body: str) -> dict:
    """An nbformat-4 notebook (as a dict) with the question and one answer cell."""

    def cell(kind: str, source: str, idx: int) -> dict:
        c = {"cell_type": kind, "id": f"cell-{idx}", "metadata": {}, "source": source}
        if kind == "code":
            c.update({"execution_count": None, "outputs": []})
        return c

    return {
        "cells": [cell("markdown", _INTRO, 0), cell("code", _PRELUDE, 1), cell("code", body, 2)],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_template(path: Path = HERE / "assignment.ipynb") -> Path:
    path.write_text(json.dumps(notebook(_TEMPLATE_BODY), indent=1) + "\n", encoding="utf-8")
    return path


def write_notebooks(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for student, _label, (v, k, q), _ in STUDENTS:
        path = folder / f"{student}.ipynb"
        path.write_text(json.dumps(notebook(_BODY.format(V=v, K=k, Q=q)), indent=1) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def _yaml_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def write_yamls(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for student, label, _, (v, k, q) in STUDENTS:
        path = folder / f"{student}.yaml"
        path.write_text(
            f"# {label}\nhomework: cs224n-w21-a5\nstudent: {student}\nanswers:\n  1e.ii:\n"
            f"    V: {_yaml_str(v)}\n    K: {_yaml_str(k)}\n    Q: {_yaml_str(q)}\n",
            encoding="utf-8",
        )
        paths.append(path)
    return paths


if __name__ == "__main__":
    print(write_template())
