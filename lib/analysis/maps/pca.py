"""PCA: the data's own directions of greatest spread, with the share of variance each explains."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.errors import require


@dataclass(frozen=True)
class PCA:
    mean: np.ndarray          # [dim]
    components: np.ndarray    # [k, dim], orthonormal rows, largest variance first
    explained_ratio: np.ndarray  # [k], each component's share of the total variance
    coords: np.ndarray        # [point, k]

    def project(self, x) -> np.ndarray:
        return (np.asarray(x, float) - self.mean) @ self.components.T

    def cumulative(self, k: int) -> float:
        return float(self.explained_ratio[:k].sum())


def _as_points(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    require(x.ndim == 2 and x.shape[0] >= 2, f"PCA needs a [point, dimension] array of at least 2 points, got shape {x.shape}")
    return x


def pca(x, k: int | None = None) -> PCA:
    """Principal components of the rows of `x` (centred, not scaled); all of them unless `k`."""
    x = _as_points(x)
    mean = x.mean(0)
    u, s, vt = np.linalg.svd(x - mean, full_matrices=False)
    var = s ** 2
    total = var.sum()
    ratio = var / total if total > 0 else np.zeros_like(var)
    # Fix each component's sign (largest coordinate positive) so figures do not flip between runs.
    signs = np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(1)])
    signs[signs == 0] = 1
    vt = vt * signs[:, None]
    k = len(s) if k is None else min(k, len(s))
    return PCA(mean, vt[:k], ratio[:k], (x - mean) @ vt[:k].T)


def unit_sphere(x) -> np.ndarray:
    """Every row scaled to length 1: the 'cosine view', where only direction counts."""
    x = _as_points(x)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    require(bool((norms > 0).all()), "a zero vector has no direction and cannot be put on the unit sphere")
    return x / norms
