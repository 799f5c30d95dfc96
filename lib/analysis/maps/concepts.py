"""Concept planes: axes you choose by meaning, made orthonormal by Gram-Schmidt."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from lib.messages import say
from lib.errors import require


def direction(vectors: dict[str, np.ndarray], plus: Sequence[str], minus: Sequence[str] = ()) -> np.ndarray:
    """mean(plus) - mean(minus): a direction named by words, e.g. Paolo - Pietro."""
    require(len(plus) > 0, "a direction needs at least one word on its plus side")
    for w in list(plus) + list(minus):
        require(w in vectors, f"no vector for {w!r}")
    v = np.mean([vectors[w] for w in plus], axis=0)
    if minus:
        v = v - np.mean([vectors[w] for w in minus], axis=0)
    return np.asarray(v, dtype=float)


def gram_schmidt(directions: Sequence[np.ndarray], tol: float = 1e-10) -> np.ndarray:
    """Orthonormal axes [k, dim]: each direction minus its parts along the earlier axes, unit length."""
    axes: list[np.ndarray] = []
    for i, d in enumerate(directions):
        v = np.asarray(d, dtype=float).copy()
        for e in axes:
            v -= (v @ e) * e
        n = np.linalg.norm(v)
        require(n > tol, say("direction_in_span", i=i + 1))
        axes.append(v / n)
    return np.array(axes)


def spread_captured(x, axes: np.ndarray) -> float:
    """Share of the total variance of the rows of `x` that lies in the span of `axes`."""
    x = np.asarray(x, float)
    c = x - x.mean(0)
    total = float((c ** 2).sum())
    return float(((c @ axes.T) ** 2).sum() / total) if total > 0 else 0.0


@dataclass(frozen=True)
class ConceptPlane:
    axes: np.ndarray        # [2, dim] orthonormal
    coords: np.ndarray      # [point, 2]
    raw_overlap: float      # cosine between the two directions before orthogonalising
    spread: float           # share of the points' variance the plane captures


def concept_plane(x, d1: np.ndarray, d2: np.ndarray) -> ConceptPlane:
    """Project the rows of `x` on the plane of d1 and (d2 made orthogonal to d1)."""
    axes = gram_schmidt([d1, d2])
    overlap = float(d1 @ d2 / (np.linalg.norm(d1) * np.linalg.norm(d2)))
    x = np.asarray(x, float)
    return ConceptPlane(axes, x @ axes.T, overlap, spread_captured(x, axes))


def random_plane_spread(x, n_planes: int = 1000, seed: int = 0) -> np.ndarray:
    """The share of spread captured by `n_planes` random planes (uniform over orientations): the
    baseline a chosen plane's share should be read against. A plane's expected share is about
    2 / dim when the spread is even, more when a few directions dominate."""
    x = np.asarray(x, float)
    require(x.ndim == 2 and x.shape[1] >= 2, f"a plane needs points of at least 2 dimensions, got shape {x.shape}")
    rng = np.random.default_rng(seed)
    shares = np.empty(n_planes)
    for i in range(n_planes):
        q, _ = np.linalg.qr(rng.normal(size=(x.shape[1], 2)))
        shares[i] = spread_captured(x, q.T)
    return shares
