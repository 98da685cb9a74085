"""Free text to vectors, offline: the small wordllama model (the `embed` extra) or hashed n-grams.

Vectors only order answers by meaning, find near neighbours and suggest; they never grade. The
wordllama package ships its 256-dimension weights and tokenizer in its wheel; its loader looks for
the tokenizer under a folder name the wheel does not use and would then download it, so it is
pointed at the package's own files with downloads off (nothing is fetched, ever).
"""

from __future__ import annotations

import logging
import threading
import unicodedata
import zlib
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .grouping import core

_DIMENSIONS = 2048


class Embedder(Protocol):
    name: str
    # The similarity above which answers are merged by default: `threshold` where the part's rubric
    # items keep answers of different verdicts apart (grouping.nearest_items), `threshold_alone`
    # where a part has none. Chosen on the labelled real answers of tests/data/review (see its test,
    # `-k target`), with room for one more wrong merge before purity falls below its target.
    threshold: float
    threshold_alone: float

    def vectors(self, texts: list[str]) -> np.ndarray: ...


class Ngrams:
    """Hashed words and character trigrams of the answer's `core`: no model, merges only the nearly equal."""

    name = "ngrams"
    threshold = threshold_alone = 0.97

    def vectors(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), _DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            norm = core(text)
            grams = norm.split() + [norm[i:i + 3] for i in range(max(len(norm) - 2, 0))]
            for gram in grams:
                out[row, zlib.crc32(gram.encode()) % _DIMENSIONS] += 1.0
        np.sqrt(out, out=out)  # sublinear counts: a repeated word is not the whole answer
        return _unit_rows(out)


class WordLlama:
    """The wordllama model bundled in its wheel (256 dimensions), loaded once per process."""

    name = "wordllama"
    threshold = 0.64
    threshold_alone = 0.66

    def __init__(self, model: Any):
        self.model = model
        self.lock = threading.Lock()

    def vectors(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 256), dtype=np.float32)
        with self.lock:  # the tokenizer's padding state is shared
            found = self.model.embed([core(t) or "-" for t in texts], norm=True)
        out = _unit_rows(np.asarray(found, dtype=np.float32))
        for row, text in enumerate(texts):
            if not readable(text):
                out[row] = _own_direction(core(text), out.shape[1])
        return out


def readable(text: str) -> bool:
    """Whether the English model can read `text`: most of its letters are Latin. It sees little of other
    scripts beyond their formulas, so answers in them would look alike whatever they say; such an answer
    gets a direction of its own and groups only with the same text (`_own_direction`)."""
    latin = other = 0
    for char in text[:20_000]:
        if char.isalpha():
            if char.isascii() or unicodedata.name(char, "").startswith("LATIN"):
                latin += 1
            else:
                other += 1
    return other <= latin


def _own_direction(text: str, dimensions: int) -> np.ndarray:
    """A unit vector drawn from the text alone: the same text gets the same one, any other is nearly
    orthogonal to it (and to every model vector)."""
    rng = np.random.default_rng(zlib.crc32(text.encode("utf-8", "backslashreplace")))
    vector = rng.normal(size=dimensions).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def available() -> bool:
    """Whether the `embed` extra (wordllama) is installed."""
    return find_spec("wordllama") is not None


@lru_cache(maxsize=1)
def default() -> Embedder:
    """wordllama if installed, else hashed n-grams."""
    if not available():
        return Ngrams()
    return WordLlama(_load_wordllama())


def _load_wordllama() -> Any:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        # wordllama: the embed extra, imported only when free text is grouped by meaning
        from wordllama import WordLlama as Loader  # noqa: PLC0415
    finally:
        # its inference module configures the root logger on import; the app's logging is its own
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    package = Path(find_spec("wordllama").origin).parent  # type: ignore[union-attr, arg-type]
    return Loader.load("l2_supercat", dim=256, cache_dir=package, disable_download=True)
