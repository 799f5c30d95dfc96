"""t-SNE: a 2-D layout that keeps each point's near neighbours, with perplexity and seed exposed.

Perplexity is roughly how many neighbours each point tries to keep; it must stay below the
number of points. Different seeds give different, equally valid layouts: neither the axes nor
the distances between clusters mean anything, which is why the chapters show two seeds side by
side.

This is the exact algorithm of van der Maaten and Hinton (2008), written out in NumPy because
the course maps at most a few hundred points: every iteration is a handful of N x N array
operations, fast enough for a slider. The schedule follows the usual defaults (early
exaggeration 12 for the first 250 iterations, momentum 0.5 then 0.8, adaptive gains, learning
rate max(N / 12 / 4, 50)).
"""
from __future__ import annotations

import numpy as np

from lib.errors import CourseError, require

EARLY_EXAGGERATION = 12.0
EXAGGERATION_ITERS = 250


def check_perplexity(perplexity, n_points: int) -> float:
    try:
        p = float(perplexity)
    except (TypeError, ValueError):
        raise CourseError(f"perplexity must be a number, got {perplexity!r}") from None
    require(np.isfinite(p) and 1 <= p < n_points,
            f"perplexity must be at least 1 and below the number of points ({n_points}), got {perplexity}")
    return p


def _squared_distances(x: np.ndarray) -> np.ndarray:
    sq = (x * x).sum(1)
    d = sq[:, None] + sq[None, :] - 2 * x @ x.T
    np.fill_diagonal(d, 0.0)
    return np.maximum(d, 0.0)


def conditional_probabilities(x: np.ndarray, perplexity: float, steps: int = 64) -> np.ndarray:
    """Row i: point i's Gaussian neighbourhood p(j | i), its width set by bisection (all points at
    once) so that the neighbourhood's perplexity, e to its entropy, equals `perplexity`."""
    d = _squared_distances(x)
    n = len(x)
    off = ~np.eye(n, dtype=bool)
    # Distances relative to each point's nearest neighbour, so exp() never underflows to zero.
    rel = np.where(off, d - np.where(off, d, np.inf).min(1, keepdims=True), 0.0)
    target = np.log(perplexity)
    lo, hi = np.zeros(n), np.full(n, np.inf)
    beta = np.ones(n)
    for _ in range(steps):
        w = np.exp(-rel * beta[:, None]) * off
        s = w.sum(1)
        entropy = np.log(s) + beta * (rel * w).sum(1) / s
        too_wide = entropy > target
        lo = np.where(too_wide, beta, lo)
        hi = np.where(too_wide, hi, beta)
        beta = np.where(np.isinf(hi), beta * 2, (lo + hi) / 2)
    return w / s[:, None]


def neighbour_probabilities(x: np.ndarray, perplexity: float) -> np.ndarray:
    """The symmetric joint P [n, n] that t-SNE tries to reproduce in 2-D."""
    P = conditional_probabilities(x, perplexity)
    P = (P + P.T) / (2 * len(P))
    return np.maximum(P, 1e-12)


def tsne(x, perplexity: float = 5.0, seed: int = 0, n_iter: int = 600) -> np.ndarray:
    """2-D t-SNE coordinates [point, 2], from a random start drawn with `seed`."""
    return tsne_seeds(x, perplexity, [seed], n_iter)[0]


def tsne_seeds(x, perplexity: float = 5.0, seeds=(0, 1), n_iter: int = 600) -> np.ndarray:
    """One t-SNE layout per seed, [seed, point, 2], all run together.

    The layouts are independent (each seed's start and descent are its own); running them as one
    stack of arrays costs little more than running one, which keeps the seed explorer quick.
    """
    x = np.asarray(x, dtype=float)
    require(x.ndim == 2 and len(x) >= 3, f"t-SNE needs at least 3 points as [point, dim], got shape {x.shape}")
    require(np.isfinite(x).all(), "t-SNE needs finite coordinates")
    p = check_perplexity(perplexity, len(x))
    seeds = [int(s) for s in seeds]
    require(len(seeds) >= 1, "give at least one seed")
    n = len(x)
    P = neighbour_probabilities(x, p)
    y = np.stack([np.random.default_rng(s).normal(0, 1e-4, size=(n, 2)) for s in seeds])
    velocity = np.zeros_like(y)
    gains = np.ones_like(y)
    lr = max(n / EARLY_EXAGGERATION / 4, 50.0)
    off = ~np.eye(n, dtype=bool)
    for it in range(n_iter):
        exaggeration = EARLY_EXAGGERATION if it < EXAGGERATION_ITERS else 1.0
        momentum = 0.5 if it < EXAGGERATION_ITERS else 0.8
        sq = (y * y).sum(2)
        d = np.maximum(sq[:, :, None] + sq[:, None, :] - 2 * y @ y.transpose(0, 2, 1), 0.0)
        num = off / (1.0 + d)                                  # Student-t kernel, zero on the diagonal
        Q = np.maximum(num / num.sum((1, 2), keepdims=True), 1e-12)
        W = (exaggeration * P - Q) * num
        grad = 4.0 * (W.sum(2)[:, :, None] * y - W @ y)
        same = np.sign(grad) == np.sign(velocity)
        gains = np.where(same, gains * 0.8, gains + 0.2).clip(0.01)
        velocity = momentum * velocity - lr * gains * grad
        y = y + velocity
        y -= y.mean(1, keepdims=True)
    return y


def kl_divergence(x, y, perplexity: float) -> float:
    """How much neighbourhood structure a layout `y` loses (lower is better): KL(P || Q)."""
    P = neighbour_probabilities(np.asarray(x, float), perplexity)
    num = 1.0 / (1.0 + _squared_distances(np.asarray(y, float)))
    np.fill_diagonal(num, 0.0)
    Q = np.maximum(num / num.sum(), 1e-12)
    return float((P * np.log(P / Q)).sum())
