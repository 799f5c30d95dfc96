"""The named point sets the maps of Part 2 lay out, one home for the chapters, explorers, store and site.

`point_set(name)`: the calling-game model's 28 embedding rows, or the 84 real-language rows of
all-MiniLM-L6-v2 (`lib.content.real_words`). Both are tokens, so a concept plane's axes are written with
them, and the website serves both. The three-ways chapter adds a set of its own, 80 synthetic points in
four clusters of known size and distance (`lib/chapters/part2/three_ways/clusters.py`, offered by its
t-SNE explorer through `views.point_set`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib.errors import CourseError
from lib import load
from lib.content import real_words
from lib.content.corpora.calling_game import ROLES

POINT_SETS = {"calling-game": "the calling-game model's 28 embedding rows",
              "real-language": "84 token embeddings of all-MiniLM-L6-v2"}
# The sets whose points are tokens: a concept plane's axes are written with them.
WORD_SETS = ("calling-game", "real-language")


@dataclass(frozen=True)
class PointSet:
    name: str
    labels: tuple[str, ...]
    groups: tuple[str, ...]
    vectors: np.ndarray        # [point, dim]


@lru_cache(maxsize=None)
def point_set(name: str) -> PointSet:
    if name == "calling-game":
        lm = load("calling-game")
        tokens = tuple(lm.vocab.tokens)
        return PointSet(name, tokens, tuple(ROLES[t] for t in tokens), lm.model.W_E.detach().double().numpy())
    if name == "real-language":
        rows = real_words.load()
        return PointSet(name, tuple(rows.words), tuple(rows.groups), rows.vectors.astype(float))
    raise CourseError(f"no point set {name!r}; choose one of: {', '.join(POINT_SETS)}")
