"""Free-text answers grouped for people: by normalized text always, by meaning where members are
near-duplicates, ordered so similar answers come one after another.

Meaning groups use complete linkage: two answers share a group only if *every* pair of its members
is at least `threshold` similar, so a chain of small steps never joins answers that differ. This is
an aid to the people who grade, never a grader: nothing here gives or changes a score.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..outputs.staff import normalized

# What an answer says does not change with how it is framed: these words open or close many
# answers and are dropped before grouping (never from the stored answer). Only whole words at
# the start, or a last sentence made of nothing else, are dropped: "yes", "no", "not" and
# every word that carries content stay.
OPENERS = [tuple(p.split()) for p in (
    "answer", "my answer", "final answer", "short answer", "the answer is", "my answer is",
    "the final answer is", "the short answer is", "answer is", "in short", "in summary",
    "to summarize", "to sum up", "in conclusion", "in brief", "briefly", "i think", "i think that",
    "i believe", "i believe that", "i guess", "i would say", "i would say that", "we can say",
    "we can say that", "we see that", "it is clear that", "so", "thus", "hence", "therefore",
    "basically", "essentially", "overall", "well", "ok", "okay", "simply put", "put simply",
    "in other words", "note that")]
OPENERS.sort(key=len, reverse=True)  # the longest phrase that fits is dropped first
CLOSING = frozenset("""thus hence therefore so this that is was it the answer our final as required
    desired shown proved proven done qed all above stated claimed thats which what we wanted
    to show be""".split())
# LaTeX braces of a subscript or superscript go (k_{j}^{T} is k_j^T); text wrappers and math
# delimiters become spaces. (Spelling relations one way and dropping list markup were tried on
# the labelled answers of tests/data/review: they merged answers of different grades sooner.)
LATEX = (("_{", "_"), ("^{", "^"), ("}_", "_"), ("}^", "^"), ("\\textbf", " "), ("\\textit", " "),
         ("\\emph", " "), ("\\mathrm", " "), ("\\mathbf", " "), ("\\underline", " "), ("\\boxed", " "),
         ("\\text", " "), ("\\(", " "), ("\\)", " "), ("\\[", " "), ("\\]", " "))
MARKUP = str.maketrans({c: " " for c in "*`#{}$~"})
MAX_CHARS = 20_000  # an answer is read this far for grouping; longer ones group by their start


def core(text: str) -> str:
    """An answer as grouping sees it: normalized (case, spacing, punctuation, LaTeX spacing), with
    markdown emphasis, block quotes, LaTeX delimiters and text wrappers, opening phrases ("In
    short,", "The answer is", "I think", "So,", "Answer:") and closing sentences of filler alone
    ("Thus this is the answer.") or repeating an earlier one left out. Each step is one pass over
    the text; no pattern that can backtrack."""
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS])
    text = "\n".join(line.lstrip().lstrip(">") for line in text.split("\n"))
    for old, new in LATEX:
        text = text.replace(old, new)
    text = text.translate(MARKUP)
    sentences = [" ".join(w.strip("_") for w in normalized(s).split()) for s in _sentences(text)]
    return " ".join(_without_tail(_without_openers(" ".join(_without_closing(sentences)).split())))


def _sentences(text: str) -> list[str]:
    """`text` cut after each '.', '!' or '?' that a space or the end follows (a decimal point or
    'e.g.' inside a word stays)."""
    out, start = [], 0
    for i, ch in enumerate(text):
        if ch in ".!?" and (i + 1 == len(text) or text[i + 1].isspace()):
            out.append(text[start:i + 1])
            start = i + 1
    out.append(text[start:])
    return out


def _without_closing(sentences: list[str]) -> list[str]:
    """Drop trailing sentences made only of filler words, or saying again, after a connective,
    what an earlier sentence said ("... Thus c swings between v_a and v_b.")."""
    kept = [s for s in sentences if s.strip()]
    bodies = [" ".join(_without_openers(s.split())) for s in kept]
    seen: dict[str, int] = defaultdict(int)
    for body in bodies:
        seen[body] += 1
    while len(kept) > 1:
        last, body = kept[-1].split(), bodies[-1]
        if not (all(w in CLOSING for w in last) or seen[body] > 1):
            break
        seen[body] -= 1
        kept.pop()
        bodies.pop()
    return kept


CONNECTIVES = frozenset({"thus", "hence", "therefore"})
REPEAT_OPENERS = 12  # the most opening words a repeated clause may carry and still count as a repeat


def _without_tail(words: list[str]) -> list[str]:
    """Drop a closing clause that a connective opens when it is filler alone or says again all
    that came before ("... \\alpha_j = 1 thus this is the answer", "x thus x"): the same as
    `_without_closing` for an answer whose last sentence has no full stop before the connective."""
    # "x thus (so) x": the connective stands in the middle, give or take the openers of the repeat
    for k in range(max(1, (len(words) - 1 - REPEAT_OPENERS) // 2), (len(words) - 1) // 2 + 1):
        if words[k] in CONNECTIVES and _without_openers(words[k + 1:]) == words[:k]:
            return words[:k]
    for k in range(len(words) - 1, 0, -1):
        if words[k] in CONNECTIVES:
            return words[:k] if all(w in CLOSING for w in words[k + 1:]) else words
    return words


def _without_openers(words: list[str]) -> list[str]:
    """`words` without the opening phrases at their start (never every word)."""
    start = 0
    while start < len(words):
        for phrase in OPENERS:
            if start + len(phrase) < len(words) and tuple(words[start:start + len(phrase)]) == phrase:
                start += len(phrase)
                break
        else:
            break
    return words[start:]


def exact(texts: Sequence[str]) -> list[list[int]]:
    """Indices of `texts` grouped by their `core` (normalized text without filler), in order of
    first appearance."""
    seen: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        seen.setdefault(core(text), []).append(i)
    return list(seen.values())


def by_meaning(vectors: np.ndarray, threshold: float, apart: Sequence[int] | None = None) -> list[list[int]]:
    """Rows of `vectors` (unit length) grouped by complete linkage at `threshold` (cosine similarity).

    `apart`: a label per row (`nearest_items`); rows with different labels never share a group."""
    n = len(vectors)
    if n == 0:
        return []
    sims = vectors @ vectors.T
    if apart is not None:
        labels = np.asarray(apart)
        sims = np.where(labels[:, None] == labels[None, :], sims, -np.inf)
    upper = np.triu(sims >= threshold, 1)
    pairs = np.argwhere(upper)
    order = np.argsort(-sims[pairs[:, 0], pairs[:, 1]], kind="stable") if len(pairs) else []
    owner = list(range(n))
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    for k in order:
        a, b = owner[pairs[k, 0]], owner[pairs[k, 1]]
        if a == b:
            continue
        if sims[np.ix_(members[a], members[b])].min() < threshold:
            continue
        if len(members[a]) < len(members[b]):
            a, b = b, a
        for i in members[b]:
            owner[i] = a
        members[a].extend(members.pop(b))
    return [sorted(m) for m in members.values()]


def nearest_items(vectors: np.ndarray, item_vectors: np.ndarray) -> list[int] | None:
    """The rubric item each row is most similar to, or None without items.

    Raw similarity merges answers that share the question's words but not its verdict; two answers
    nearest to different rubric items are kept apart however alike they read (`by_meaning(apart=)`),
    which lets answers merge further at the same purity."""
    if not len(item_vectors) or not len(vectors):
        return None
    return [int(i) for i in np.argmax(vectors @ item_vectors.T, axis=1)]


def centroids(vectors: np.ndarray, groups: Sequence[Sequence[int]], weights: Sequence[float] | None = None) -> np.ndarray:
    """Each group's mean direction (rows weighted by `weights`, e.g. how many students wrote each)."""
    if not groups:
        return np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 1), dtype=np.float32)
    w = np.ones(len(vectors), dtype=np.float32) if weights is None else np.asarray(weights, dtype=np.float32)
    out = np.stack([(vectors[list(g)] * w[list(g), None]).sum(axis=0) for g in groups])
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms


def chain(points: np.ndarray, start: int = 0) -> list[int]:
    """An order of the rows in which each comes after its nearest not-yet-placed neighbour (greedy)."""
    n = len(points)
    if n == 0:
        return []
    sims = points @ points.T
    placed = np.zeros(n, dtype=bool)
    order = [start]
    placed[start] = True
    for _ in range(n - 1):
        row = np.where(placed, -np.inf, sims[order[-1]])
        nxt = int(np.argmax(row))
        order.append(nxt)
        placed[nxt] = True
    return order


def typical(vectors: np.ndarray, group: Sequence[int], center: np.ndarray) -> list[int]:
    """A group's members, the most typical (nearest its centre) first."""
    members = list(group)
    return sorted(members, key=lambda i: (-float(vectors[i] @ center), i))


@dataclass(frozen=True)
class Neighbour:
    index: int  # the graded group
    similarity: float


def nearest(centers: np.ndarray, graded: Sequence[int]) -> dict[int, Neighbour]:
    """For each group not in `graded`, its most similar graded group."""
    if not len(graded) or not len(centers):
        return {}
    graded_set = set(graded)
    sims = centers @ centers[list(graded)].T
    found = {}
    for i in range(len(centers)):
        if i in graded_set:
            continue
        j = int(np.argmax(sims[i]))
        found[i] = Neighbour(graded[j], float(sims[i, j]))
    return found


def closest_items(centers: np.ndarray, item_vectors: np.ndarray, top: int = 2) -> list[list[tuple[int, float]]]:
    """For each centre, the indices of the `top` most similar rubric items with their similarity."""
    if not len(item_vectors) or not len(centers):
        return [[] for _ in range(len(centers))]
    sims = centers @ item_vectors.T
    best = np.argsort(-sims, axis=1)[:, :top]
    return [[(int(j), float(sims[i, j])) for j in best[i]] for i in range(len(centers))]


MIN_WORDS = 12  # shorter answers repeat by themselves ("the weights sum to one")
SHINGLE = 4
OVERLAP = 0.8


def near_identical(texts: Sequence[str], owners: Sequence[str]) -> list[tuple[list[str], float]]:
    """Sets of different owners (students) whose answers are long and near-identical word for word
    (word 4-grams overlapping at least 80%): for staff to look at, never a verdict."""
    shingles = []
    index: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, text in enumerate(texts):
        words = normalized(text).split()
        grams = {tuple(words[k:k + SHINGLE]) for k in range(len(words) - SHINGLE + 1)} if len(words) >= MIN_WORDS else set()
        shingles.append(grams)
        for gram in grams:
            index[gram].append(i)
    shared: dict[tuple[int, int], int] = defaultdict(int)
    for holders in index.values():
        if len(holders) > 50:  # a stock phrase of the question itself, not a copy
            continue
        for x in range(len(holders)):
            for y in range(x + 1, len(holders)):
                shared[(holders[x], holders[y])] += 1
    owner_of = list(owners)
    linked: dict[int, set[int]] = defaultdict(set)
    best: dict[int, float] = defaultdict(float)
    for (a, b), count in shared.items():
        overlap = count / max(1, min(len(shingles[a]), len(shingles[b])))
        if overlap >= OVERLAP and owner_of[a] != owner_of[b]:
            linked[a].add(b)
            linked[b].add(a)
            best[a] = max(best[a], overlap)
            best[b] = max(best[b], overlap)
    return _components(linked, owner_of, best)


def _components(linked: dict[int, set[int]], owners: list[str], best: dict[int, float]) -> list[tuple[list[str], float]]:
    seen: set[int] = set()
    found = []
    for start in sorted(linked):
        if start in seen:
            continue
        stack, part = [start], set()
        while stack:
            i = stack.pop()
            if i in part:
                continue
            part.add(i)
            stack.extend(linked[i] - part)
        seen |= part
        students = sorted({owners[i] for i in part})
        if len(students) > 1:
            found.append((students, round(max(best[i] for i in part), 3)))
    return sorted(found, key=lambda f: (-len(f[0]), f[0]))
