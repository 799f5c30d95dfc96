"""t-SNE: a 2-D layout that keeps each point's near neighbours, with perplexity and seed exposed.

Perplexity is roughly how many neighbours each point tries to keep; it must stay below the number
of points. Different seeds give different, equally valid layouts: neither the axes nor the
distances between clusters mean anything, which is why the chapters show two seeds side by side.

The layouts are scikit-learn's `TSNE`, the tool a learner will meet elsewhere, with its exact
gradient (the course maps at most a few hundred points, where the Barnes-Hut approximation saves
nothing and its KL is worse) and a random start drawn from the seed. A layout is only evidence once
the optimiser has finished, so every run reports its iterations and its final KL divergence, and
whether it stopped because the gradient became small (converged) or because it ran out of
iterations (not converged).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from lib.analysis.maps import tsne_store
from lib.analysis.maps.tsne_store import MIN_GRAD_NORM  # the optimiser's stop, one of the store's settings
from lib.errors import CourseError, require


def check_seed(seed) -> int:
    """A t-SNE seed: a whole number scikit-learn accepts as a random state (0 to 2**32 - 1)."""
    try:
        s = int(seed)
    except (TypeError, ValueError):
        raise CourseError(f"a seed is a whole number, got {seed!r}") from None
    require(not isinstance(seed, bool) and s == seed and 0 <= s < 2 ** 32,
            f"a seed is a whole number from 0 to 4294967295, got {seed!r}")
    return s


# Low perplexities (2 and 3 on 28 points; 2 to 5 on 84) need up to about 24,000 iterations to get
# there (5,000 left 24 of the course's 103 runs unfinished, KL up to 2.5% higher). Finished runs
# are stored (tsne_store), so the build does not pay for them again.
MAX_ITER = 30000
# scikit-learn's first phase: 250 iterations with every attraction between neighbours multiplied by 12
# ("early exaggeration"), so clusters form as tight, well separated clumps before the real objective
# takes over. It refuses a max_iter below this (the phase is never cut short), and a run stopped
# there is the layout at the end of that phase, before any iteration on the real objective.
EXAGGERATION_ITER = 250


def check_perplexity(perplexity, n_points: int) -> float:
    try:
        p = float(perplexity)
    except (TypeError, ValueError):
        raise CourseError(f"perplexity must be a number, got {perplexity!r}") from None
    require(np.isfinite(p) and 1 <= p < n_points,
            f"perplexity must be at least 1 and below the number of points ({n_points}), got {perplexity}")
    return p


def degenerate_perplexity(perplexity: float, n_points: int) -> bool:
    """Whether the perplexity asks each point to keep (nearly) every other point as a neighbour.

    Then every neighbourhood is almost the same flat distribution, the layout has almost nothing to
    reproduce, and what comes out is an artefact of the start, not a view of the data."""
    return perplexity >= (n_points - 1) * 0.8


@dataclass(frozen=True)
class TsneRun:
    layout: np.ndarray      # [point, 2]
    n_iter: int             # iterations the optimiser ran
    kl: float               # final KL divergence between the neighbourhoods in the data and on the page
    converged: bool         # stopped because the gradient became small, not because it ran out
    perplexity: float
    seed: int

    def describe(self) -> str:
        state = "converged" if self.converged else "NOT converged"
        return f"perplexity {self.perplexity:g}, seed {self.seed}: {state} after {self.n_iter} iterations, KL {self.kl:.3f}"


def _checked_points(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    require(x.ndim == 2 and len(x) >= 3, f"t-SNE needs at least 3 points as [point, dim], got shape {x.shape}")
    require(np.isfinite(x).all(), "t-SNE needs finite coordinates")
    return x


def tsne_run(x, perplexity: float = 5.0, seed: int = 0, max_iter: int = MAX_ITER) -> TsneRun:
    """One scikit-learn t-SNE layout, from a random start drawn with `seed`, with its diagnostics.

    A run the course has finished before is read from the store (`tsne_store`: keyed by the points'
    bytes, the perplexity, the seed and the settings), so the same call returns the same layout."""
    x = _checked_points(x)
    p = check_perplexity(perplexity, len(x))
    require(isinstance(max_iter, int) and not isinstance(max_iter, bool) and max_iter >= EXAGGERATION_ITER,
            f"max_iter must be a whole number of at least {EXAGGERATION_ITER} (the early-exaggeration phase), "
            f"got {max_iter!r}")
    seed = check_seed(seed)
    stored = tsne_store.lookup(tsne_store.run_key(x, p, seed, max_iter))
    if stored is not None:
        layout, n_iter, kl, converged = stored
        return TsneRun(layout, n_iter, kl, converged, p, seed)
    from sklearn.manifold import TSNE

    model = TSNE(n_components=2, perplexity=p, init="random", random_state=int(seed), method="exact",
                 learning_rate="auto", max_iter=max_iter, min_grad_norm=MIN_GRAD_NORM,
                 n_iter_without_progress=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        layout = model.fit_transform(x)
    # scikit-learn reports the last iteration's index; a run stopped at the end of early exaggeration
    # reports one more (the second phase's empty loop) and no KL (the largest float): the KL of its
    # layout is then computed here, against the real (unexaggerated) neighbourhoods.
    n_iter = min(int(model.n_iter_) + 1, max_iter)
    kl = float(model.kl_divergence_)
    if not kl < 1e300:
        kl = kl_divergence(x, layout, p)
    return TsneRun(layout, n_iter, kl, n_iter < max_iter, p, int(seed))


def tsne(x, perplexity: float = 5.0, seed: int = 0, max_iter: int = MAX_ITER) -> np.ndarray:
    """2-D t-SNE coordinates [point, 2], from a random start drawn with `seed`."""
    return tsne_run(x, perplexity, seed, max_iter).layout


def tsne_seeds(x, perplexity: float = 5.0, seeds=(0, 1), max_iter: int = MAX_ITER) -> np.ndarray:
    """One t-SNE layout per seed, [seed, point, 2]."""
    seeds = [int(s) for s in seeds]
    require(len(seeds) >= 1, "give at least one seed")
    return np.stack([tsne(x, perplexity, s, max_iter) for s in seeds])


def neighbour_probabilities(x, perplexity: float) -> np.ndarray:
    """The symmetric joint P [n, n] that t-SNE tries to reproduce in 2-D (scikit-learn's own)."""
    from sklearn.manifold._t_sne import _joint_probabilities
    from scipy.spatial.distance import squareform

    x = _checked_points(x)
    p = check_perplexity(perplexity, len(x))
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return squareform(_joint_probabilities(d, p, 0))


def kl_divergence(x, y, perplexity: float) -> float:
    """How much neighbourhood structure a layout `y` loses (lower is better): KL(P || Q), the
    quantity t-SNE minimises."""
    P = np.maximum(neighbour_probabilities(x, perplexity), 1e-12)
    y = np.asarray(y, float)
    num = 1.0 / (1.0 + ((y[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(num, 0.0)
    Q = np.maximum(num / num.sum(), 1e-12)
    off = ~np.eye(len(P), dtype=bool)
    return float((P[off] * np.log(P[off] / Q[off])).sum())
