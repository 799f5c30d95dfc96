"""t-SNE: a 2-D layout that keeps each point's near neighbours, with perplexity and seed exposed.

Perplexity is roughly how many neighbours each point tries to keep; it must stay below the
number of points. Different seeds give different, equally valid layouts: neither axes nor the
distances between clusters mean anything, which is why the chapters show two seeds side by side.
"""
from __future__ import annotations

import numpy as np

from ..errors import CourseError, require


def check_perplexity(perplexity, n_points: int) -> float:
    try:
        p = float(perplexity)
    except (TypeError, ValueError):
        raise CourseError(f"perplexity must be a number, got {perplexity!r}") from None
    require(np.isfinite(p) and 1 <= p < n_points,
            f"perplexity must lie in [1, {n_points}) for {n_points} points, got {perplexity}")
    return p


def tsne(x, perplexity: float = 5.0, seed: int = 0, max_iter: int = 500) -> np.ndarray:
    """2-D t-SNE coordinates [point, 2] (exact method, random start from `seed`)."""
    from sklearn.manifold import TSNE  # imported here: it costs a second at import time

    x = np.asarray(x, dtype=float)
    require(x.ndim == 2 and len(x) >= 3, f"t-SNE needs at least 3 points as [point, dim], got shape {x.shape}")
    p = check_perplexity(perplexity, len(x))
    model = TSNE(n_components=2, perplexity=p, random_state=int(seed), init="random",
                 method="exact", max_iter=max_iter, learning_rate="auto")
    return model.fit_transform(x)
