"""Support file bundled into the Otter autograder zip (bench/otter/tests/q1e_ii.py uses it).

CS224N A5 1e.ii as a numeric check: with orthogonal u_a..u_d of norm beta in R^d,
x1 = u_d + u_b, x2 = u_a, x3 = u_c + u_b; v_j = V x_j, k_j = K x_j, q_i = Q x_i,
alpha_ij = softmax_j(k_j . q_i) (stable), c_i = sum_j alpha_ij v_j.
The construction is right when c1 -> u_b - u_c and c2 -> u_b as beta grows.
"""

import numpy as np

D = 6


def vectors(beta, seed=0, d=D):
    """Orthogonal u_a..u_d of norm beta (a random rotation of the first four unit vectors)."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return {name: beta * basis[:, i] for i, name in enumerate("abcd")}


def outputs(V, K, Q, beta, seed=0):
    """(c1, c2, u) for the student's functions V, K, Q of (u, beta)."""
    u = vectors(beta, seed)
    x = [u["d"] + u["b"], u["a"], u["c"] + u["b"]]
    Vm, Km, Qm = (np.asarray(f(u, beta), dtype=float) for f in (V, K, Q))
    v = [Vm @ xj for xj in x]
    k = [Km @ xj for xj in x]
    c = []
    for xi in x[:2]:
        q = Qm @ xi
        scores = np.array([kj @ q for kj in k])
        w = np.exp(scores - scores.max())
        w /= w.sum()
        c.append(sum(wj * vj for wj, vj in zip(w, v)))
    return c[0], c[1], u


def rel_err(got, want):
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def c1_ok(V, K, Q, beta=20.0, tol=1e-2):
    c1, _, u = outputs(V, K, Q, beta)
    return rel_err(c1, u["b"] - u["c"]) < tol


def c2_ok(V, K, Q, beta=20.0, tol=1e-2):
    _, c2, u = outputs(V, K, Q, beta)
    return rel_err(c2, u["b"]) < tol
