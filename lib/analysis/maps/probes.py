"""Linear probes: can a straight line read a designed property back out of the embedding?

A ridge regression from vectors to one property, scored only on words it never saw (leave one
out), so a probe that memorises cannot look good. Reported as held-out R^2 and as held-out
accuracy after rounding each prediction to the nearest allowed value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.errors import require


# Ridge strengths tried by `best_probe`: the right one depends on the vectors' scale (the
# hand-wired model's rows have length about 0.65, where a strength of 1 flattens every probe).
PROBE_ALPHAS = (1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)


@dataclass(frozen=True)
class ProbeResult:
    r2: float                  # held-out R^2 (1 is perfect, 0 is no better than the mean)
    accuracy: float            # held-out share of exactly right values after rounding
    predictions: np.ndarray    # held-out prediction for each point
    alpha: float = 1.0         # the ridge strength used


def linear_probe(x, y, alpha: float = 1.0, levels=(-1.0, 0.0, 1.0)) -> ProbeResult:
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    require(x.ndim == 2 and len(x) == len(y) and len(x) >= 3,
            "a probe needs vectors [point, dim] and one target value per point (at least 3)")
    n = len(x)
    xa = np.hstack([x, np.ones((n, 1))])
    reg = alpha * np.eye(xa.shape[1])
    reg[-1, -1] = 0.0  # the intercept is not shrunk
    preds = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        w = np.linalg.solve(xa[keep].T @ xa[keep] + reg, xa[keep].T @ y[keep])
        preds[i] = xa[i] @ w
    ss_res = float(((y - preds) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else 0.0
    lv = np.asarray(levels, float)
    rounded = lv[np.abs(preds[:, None] - lv[None, :]).argmin(1)]
    return ProbeResult(r2, float((rounded == y).mean()), preds, float(alpha))


def best_probe(x, y, alphas=PROBE_ALPHAS, levels=(-1.0, 0.0, 1.0)) -> ProbeResult:
    """The probe with the best held-out R^2 over a grid of ridge strengths.

    The strength is chosen on the same held-out score it reports, so the figure is optimistic: a
    probe that fails even so has really failed."""
    return max((linear_probe(x, y, a, levels) for a in alphas), key=lambda r: r.r2)
