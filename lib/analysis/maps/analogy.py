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


# ----------------------------------------------------------------------------- scoring a set
# An analogy solved by a - b + c can look right for the wrong reason: if d is already the nearest
# word to a, the offset (c - b) did nothing (Linzen 2016, the "only-b" baseline in his notation).
# So each analogy is scored three ways: the offset method, that baseline, and how parallel the two
# sides of the would-be parallelogram are.

@dataclass(frozen=True)
class AnalogyScore:
    a: str
    b: str
    c: str
    expected: str
    kind: str
    offset_best: str          # nearest word to a - b + c, inputs excluded
    offset_rank: int | None   # rank of the expected word under the offset method
    baseline_best: str        # nearest word to a alone, the other inputs excluded too
    parallel: float           # cos(a - d, b - c): 1 for a perfect parallelogram, 0 for unrelated sides

    @property
    def offset_right(self) -> bool:
        return self.offset_best == self.expected

    @property
    def baseline_right(self) -> bool:
        return self.baseline_best == self.expected


def _cos(u: np.ndarray, v: np.ndarray) -> float:
    d = float(np.linalg.norm(u) * np.linalg.norm(v))
    return float(u @ v / d) if d > 0 else 0.0


def score_analogy(vectors: dict[str, np.ndarray], a: str, b: str, c: str, expected: str, kind: str = "",
                  candidates: Sequence[str] | None = None) -> AnalogyScore:
    """The offset method against the nearest-neighbour-of-a baseline, on one analogy."""
    require(expected in vectors, f"no vector for {expected!r}")
    offset = analogy(vectors, a, b, c, candidates=candidates)
    pool = [w for w in (candidates if candidates is not None else vectors) if w not in (a, b, c)]
    va = np.asarray(vectors[a], float)
    baseline = max(pool, key=lambda w: (_cos(va, np.asarray(vectors[w], float)), -pool.index(w)))
    side_1 = va - np.asarray(vectors[expected], float)
    side_2 = np.asarray(vectors[b], float) - np.asarray(vectors[c], float)
    return AnalogyScore(a, b, c, expected, kind, offset.best, offset.rank_of(expected), baseline, _cos(side_1, side_2))


def score_analogies(vectors: dict[str, np.ndarray], sets: dict[str, Sequence[tuple[str, str, str, str]]],
                    candidates: Sequence[str] | None = None) -> list[AnalogyScore]:
    """Every analogy of every kind, scored over the same pool of candidate words."""
    return [score_analogy(vectors, a, b, c, d, kind, candidates) for kind, quads in sets.items() for a, b, c, d in quads]


# ----------------------------------------------------------------------------- Linzen's baselines
# Linzen (2016) scores the offset method against baselines that leave out part of the arithmetic.
# In the course's notation a - b + c -> d (king - man + woman -> queen):
ANALOGY_METHODS = {
    "offset": lambda a, b, c: a - b + c,          # the arithmetic itself
    "nearest to a": lambda a, b, c: a,              # no arithmetic: a's nearest word
    "nearest to c": lambda a, b, c: c,              # the word the answer should resemble (woman)
    "nearest to b": lambda a, b, c: b,
    "a + c": lambda a, b, c: a + c,                 # no subtraction (Linzen's ignore-a, in his letters)
    "add-opposite": lambda a, b, c: a + b - c,      # the offset turned round (Linzen's ADD-OPPOSITE)
}


def _nearest(vectors: dict[str, np.ndarray], target: np.ndarray, exclude) -> str:
    pool = [w for w in vectors if w not in exclude]
    return max(pool, key=lambda w: (_cos(target, vectors[w]), -pool.index(w)))


def methods_right(vectors: dict[str, np.ndarray], quads) -> dict[str, int]:
    """How many of the analogies (a, b, c, d) each of `ANALOGY_METHODS` lands on d, the inputs
    excluded, over the same pool (every word of `vectors`)."""
    right = {name: 0 for name in ANALOGY_METHODS}
    for a, b, c, d in quads:
        for name, f in ANALOGY_METHODS.items():
            right[name] += _nearest(vectors, f(vectors[a], vectors[b], vectors[c]), (a, b, c)) == d
    return right


# ----------------------------------------------------------------------------- the whole vocabulary
# A pool built from the analogy words themselves hands every baseline its answer (the answer is one of
# few candidates). Ranked over a whole vocabulary, the baselines meet every word the model knows. Two
# more baselines join Linzen's: ADD-OPPOSITE (the offset subtracted instead of added, a + b - c: if it
# does as well, the answer was found by being near a, not by the offset's direction), and 3CosMul (Levy
# and Goldberg 2014: cos(d, a) cos(d, c) / cos(d, b), cosines moved to [0, 1]; the offset's usual rival).
VOCABULARY_METHODS = ("offset", "nearest to a", "nearest to b", "nearest to c", "a + c", "add-opposite", "3CosMul")
COSMUL_EPS = 1e-3   # Levy and Goldberg's epsilon: keeps the division finite when cos(d, b) is -1


def _unit_rows(matrix) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, n, out=np.zeros_like(m), where=n > 0)


def method_scores(cosines: tuple[np.ndarray, np.ndarray, np.ndarray], a: int, b: int, c: int, method: str) -> np.ndarray:
    """Every row's score under `method` for the analogy (rows a, b, c) -> ?, from each row's cosines with
    a, b and c (a row's cosine with a - b + c is cos_a - cos_b + cos_c over a length that is the same for
    every row, so the order is the same); the inputs get -inf."""
    ca, cb, cc = cosines
    if method == "3CosMul":
        scores = (ca + 1) / 2 * (cc + 1) / 2 / ((cb + 1) / 2 + COSMUL_EPS)
    else:
        pick = {"offset": (1, -1, 1), "nearest to a": (1, 0, 0), "nearest to b": (0, 1, 0), "nearest to c": (0, 0, 1),
                "a + c": (1, 0, 1), "add-opposite": (1, 1, -1)}.get(method)
        require(pick is not None, f"unknown analogy method {method!r}; known: {', '.join(VOCABULARY_METHODS)}")
        scores = pick[0] * ca + pick[1] * cb + pick[2] * cc
    scores = np.array(scores, dtype=float)
    scores[[a, b, c]] = -np.inf
    return scores


@dataclass(frozen=True)
class VocabularyRanking:
    methods: tuple[str, ...]
    quads: tuple[tuple[str, str, str, str], ...]
    ranks: dict[str, list[int]]       # method -> the expected word's rank (1 = best) for each analogy
    best: dict[str, list[str]]        # method -> the top word for each analogy
    pool: int                         # how many words were ranked (the inputs excluded from each)

    def right(self, method: str) -> int:
        return sum(r == 1 for r in self.ranks[method])


def rank_methods(words: Sequence[str], matrix, quads, methods: Sequence[str] = VOCABULARY_METHODS) -> VocabularyRanking:
    """Each analogy (a, b, c, d) ranked over every row of `matrix` (one per word of `words`) by every method,
    by cosine (vectorised: the whole vocabulary of a real model in a fraction of a second)."""
    words = list(words)
    index = {w: i for i, w in enumerate(words)}
    require(len(index) == len(words) == len(matrix), "one distinct word per row of the matrix")
    quads = tuple(tuple(q) for q in quads)
    missing = sorted({w for q in quads for w in q if w not in index})
    require(not missing, f"not in the vocabulary: {' '.join(missing)}")
    units = _unit_rows(matrix)
    ranks = {m: [] for m in methods}
    best = {m: [] for m in methods}
    for a, b, c, d in quads:
        ia, ib, ic = index[a], index[b], index[c]
        cosines = tuple(units @ units[i] for i in (ia, ib, ic))
        for m in methods:
            s = method_scores(cosines, ia, ib, ic, m)
            ranks[m].append(int((s > s[index[d]]).sum()) + 1)
            best[m].append(words[int(np.argmax(s))])
    return VocabularyRanking(tuple(methods), quads, ranks, best, len(words) - 3)
