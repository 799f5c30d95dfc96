"""Analogies: a - b + c, and the nearest words to it by cosine.

Whether the three input words are excluded from the answers changes the result (often the
nearest word to king - man + woman is king itself), so the result always says which it did.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lib.errors import require


@dataclass(frozen=True)
class Analogy:
    a: str
    b: str
    c: str
    ranked: list[tuple[str, float]]   # (word, cosine), best first
    excluded: tuple[str, ...]         # the input words left out of the ranking (empty if none)

    @property
    def best(self) -> str:
        return self.ranked[0][0]

    def rank_of(self, word: str) -> int | None:
        """1-based rank of `word`, or None if it was not ranked."""
        for i, (w, _) in enumerate(self.ranked, 1):
            if w == word:
                return i
        return None

    def describe(self) -> str:
        excl = f" (inputs {', '.join(self.excluded)} excluded)" if self.excluded else " (inputs not excluded)"
        top = ", ".join(f"{w} {c:.2f}" for w, c in self.ranked[:5])
        return f"{self.a} - {self.b} + {self.c} -> {top}{excl}"


def analogy(vectors: dict[str, np.ndarray], a: str, b: str, c: str, exclude_inputs: bool = True,
            candidates: Sequence[str] | None = None) -> Analogy:
    for w in (a, b, c):
        require(w in vectors, f"no vector for {w!r}")
    target = np.asarray(vectors[a], float) - vectors[b] + vectors[c]
    pool = list(candidates) if candidates is not None else list(vectors)
    excluded = tuple(w for w in (a, b, c) if exclude_inputs)
    pool = [w for w in pool if w not in excluded]
    tn = np.linalg.norm(target)
    ranked = []
    for w in pool:
        v = np.asarray(vectors[w], float)
        denom = tn * np.linalg.norm(v)
        ranked.append((w, float(target @ v / denom) if denom > 0 else 0.0))
    ranked.sort(key=lambda wc: (-wc[1], pool.index(wc[0])))
    return Analogy(a, b, c, ranked, excluded)
