"""Similarity inside an embedding table: cosines, nearest neighbours, and how well roles cluster."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from lib.errors import require


def cosine_matrix(x) -> np.ndarray:
    """[point, point] cosine similarity of the rows of `x` (zero rows count as similar to nothing)."""
    x = np.asarray(x, dtype=float)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    u = np.divide(x, n, out=np.zeros_like(x), where=n > 0)
    return u @ u.T


def nearest(x, names: Sequence[str], word: str, k: int = 3) -> list[tuple[str, float]]:
    """The `k` rows most similar to `word`'s row by cosine, the word itself left out."""
    names = list(names)
    require(word in names, f"{word!r} is not one of the rows; known: {' '.join(names)}")
    require(isinstance(k, int) and 1 <= k < len(names), f"k must be a whole number from 1 to {len(names) - 1}, got {k!r}")
    row = cosine_matrix(x)[names.index(word)]
    order = [j for j in np.argsort(-row, kind="stable") if names[j] != word][:k]
    return [(names[j], float(row[j])) for j in order]


def role_cohesion(x, roles: Sequence[str], skip: Sequence[str] = ()) -> tuple[float, float]:
    """(mean cosine between rows of the same role, mean cosine between rows of different roles),
    over every pair of rows whose roles are not in `skip`."""
    c = cosine_matrix(x)
    same, other = [], []
    for i in range(len(roles)):
        for j in range(i + 1, len(roles)):
            if roles[i] in skip or roles[j] in skip:
                continue
            (same if roles[i] == roles[j] else other).append(c[i, j])
    return float(np.mean(same)), float(np.mean(other))


def nearest_indices(x, k: int, cosine: bool = False) -> np.ndarray:
    """[point, k]: each row's k nearest other rows, by straight-line distance or by cosine."""
    x = np.asarray(x, dtype=float)
    if cosine:
        d = -cosine_matrix(x)
    else:
        sq = (x * x).sum(1)
        d = sq[:, None] + sq[None, :] - 2 * x @ x.T      # squared distances, without a [n, n, dim] array
    np.fill_diagonal(d, np.inf)
    return np.argsort(d, axis=1, kind="stable")[:, :k]


def same_group_share(x, groups: Sequence[str], k: int = 5, cosine: bool = False) -> float:
    """Share of each row's k nearest rows that belong to its own group."""
    g = np.asarray(groups)
    return float((g[nearest_indices(x, k, cosine)] == g[:, None]).mean())


def knn_accuracy(x, groups: Sequence[str], k: int = 5, cosine: bool = False) -> float:
    """Leave-one-out accuracy of a k-nearest-neighbour classifier: the share of rows whose group is the
    majority group of their k nearest other rows (by cosine, or by straight-line distance); a tie goes to
    the group that sorts first, as in scikit-learn's `KNeighborsClassifier` (the tests check they agree)."""
    x = np.asarray(x, dtype=float)
    g = np.asarray(groups)
    require(x.ndim == 2 and len(g) == len(x), f"one group per row: {len(g)} groups for {len(x)} rows")
    require(isinstance(k, int) and 1 <= k < len(x), f"k must be a whole number from 1 to {len(x) - 1}, got {k!r}")
    classes, codes = np.unique(g, return_inverse=True)
    votes = np.zeros((len(x), len(classes)), int)
    np.add.at(votes, (np.repeat(np.arange(len(x)), k), codes[nearest_indices(x, k, cosine)].ravel()), 1)
    return float((votes.argmax(1) == codes).mean())
