"""PCA: the data's own directions of greatest spread, with the share of variance each explains.

The components are scikit-learn's `PCA` (a singular value decomposition of the centred rows:
X - mean = U S V^T, where the rows of V^T are the directions and S^2 their variances, up to a
constant), with each component's sign fixed so that figures do not flip between runs.
"""
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
    require(np.isfinite(x).all(), "PCA needs finite coordinates")
    return x


def pca(x, k: int | None = None) -> PCA:
    """Principal components of the rows of `x` (centred, not scaled); all of them unless `k`."""
    from sklearn.decomposition import PCA as SkPCA

    x = _as_points(x)
    n = min(x.shape)
    k = n if k is None else max(1, min(int(k), n))
    # Identical points have no direction of spread: scikit-learn would divide by a zero variance.
    require(float(np.ptp(x, axis=0).max()) > 0, f"all {len(x)} points are the same, so there is no spread for "
                                                "PCA to find; give at least two different points")
    model = SkPCA(n_components=n, svd_solver="full").fit(x)
    vt = model.components_
    # Fix each component's sign (largest coordinate positive) so figures do not flip between runs.
    signs = np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(1)])
    signs[signs == 0] = 1
    vt = vt * signs[:, None]
    ratio = model.explained_variance_ratio_
    return PCA(model.mean_, vt[:k], np.asarray(ratio[:k]), (x - model.mean_) @ vt[:k].T)


def unit_sphere(x) -> np.ndarray:
    """Every row scaled to length 1: the 'cosine view', where only direction counts."""
    x = _as_points(x)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    require(bool((norms > 0).all()), "a zero vector has no direction and cannot be put on the unit sphere")
    return x / norms
