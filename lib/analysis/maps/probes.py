"""Linear probes: can a straight line read a designed property back out of the embedding?

A probe is a ridge regression (scikit-learn's `Ridge`): least squares from the vectors to one
property, with a penalty `alpha` on the size of the weights so that 40 words in 32 dimensions
cannot be fitted exactly by accident. It is scored only on words it never saw: leave one out
(fit on all words but one, predict that one, repeat for every word), then R^2 of those held-out
predictions, 1 - (squared error) / (spread of the property): 1 is perfect, 0 is no better than
always guessing the mean, below 0 is worse. Reported also as held-out accuracy after rounding each
prediction to the nearest allowed value.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from lib.errors import require

# Ridge strengths `best_probe` chooses among: the right one depends on the vectors' scale (the
# hand-wired model's rows have length about 0.65, where a strength of 1 flattens every probe).
PROBE_ALPHAS = (1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)


@dataclass(frozen=True)
class ProbeResult:
    r2: float                  # held-out R^2 (1 is perfect, 0 is no better than the mean)
    accuracy: float            # held-out share of exactly right values after rounding
    predictions: np.ndarray    # held-out prediction for each point
    alpha: float = 1.0         # the ridge strength (for best_probe: the one chosen on all the points)


def _checked(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    require(x.ndim == 2 and len(x) == len(y) and len(x) >= 3,
            "a probe needs vectors [point, dim] and one target value per point (at least 3)")
    return x, y


def _score(y: np.ndarray, preds: np.ndarray, alpha: float, levels) -> ProbeResult:
    ss_res = float(((y - preds) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else 0.0
    lv = np.asarray(levels, float)
    rounded = lv[np.abs(preds[:, None] - lv[None, :]).argmin(1)]
    return ProbeResult(r2, float((rounded == y).mean()), preds, float(alpha))


def _held_out(estimator, x, y) -> np.ndarray:
    from sklearn.model_selection import LeaveOneOut, cross_val_predict

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # an ill-conditioned fold is expected, not news
        return cross_val_predict(estimator, x, y, cv=LeaveOneOut())


def linear_probe(x, y, alpha: float = 1.0, levels=(-1.0, 0.0, 1.0)) -> ProbeResult:
    """A ridge probe of fixed strength, scored by leave-one-out."""
    from sklearn.linear_model import Ridge

    x, y = _checked(x, y)
    return _score(y, _held_out(Ridge(alpha=alpha), x, y), alpha, levels)


def best_probe(x, y, alphas=PROBE_ALPHAS, levels=(-1.0, 0.0, 1.0)) -> ProbeResult:
    """A ridge probe whose strength is chosen among `alphas` without seeing the held-out word.

    Inside each leave-one-out fold, `RidgeCV` picks the strength by its own leave-one-out over the
    remaining words; the word left out never takes part in the choice, so the R^2 is honest."""
    from sklearn.linear_model import RidgeCV

    x, y = _checked(x, y)
    preds = _held_out(RidgeCV(alphas=alphas), x, y)
    chosen = float(RidgeCV(alphas=alphas).fit(x, y).alpha_)
    return _score(y, preds, chosen, levels)


def loo_r2(x, y, alphas=PROBE_ALPHAS) -> float:
    """The held-out (leave-one-out) R^2 of a ridge probe with an unpenalised intercept, at the best of
    `alphas` for these points, in closed form: for a fixed penalty, each word's held-out residual is its
    residual on all the words divided by 1 - its leverage, exactly. Thousands of probes cost what a few
    `best_probe` calls do, so a null of shuffled targets can be measured with the same probe as the real one
    (both choosing their strength on their own points)."""
    x, y = _checked(x, y)
    n, d = x.shape
    z = np.hstack([x, np.ones((n, 1))])
    ss_tot = float(((y - y.mean()) ** 2).sum())
    if ss_tot == 0:
        return 0.0
    best = -np.inf
    for alpha in alphas:
        penalty = np.diag([alpha] * d + [0.0])
        h = z @ np.linalg.solve(z.T @ z + penalty, z.T)
        resid = (y - h @ y) / (1 - np.diag(h))
        best = max(best, 1 - float((resid ** 2).sum()) / ss_tot)
    return float(best)
