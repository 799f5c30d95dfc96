"""Ridge probes (lib.analysis.maps.probes): a leave-one-out ridge against its closed form, a linear property
read and noise not, and the strength chosen without the held-out word."""
import numpy as np
import pytest

from lib.analysis.maps import linear_probe


def _loo_ridge(x, y, alpha):
    """Leave-one-out ridge predictions, in closed form (intercept not penalised)."""
    n = len(x)
    xa = np.hstack([x, np.ones((n, 1))])
    reg = alpha * np.eye(xa.shape[1])
    reg[-1, -1] = 0.0
    preds = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        w = np.linalg.solve(xa[keep].T @ xa[keep] + reg, xa[keep].T @ y[keep])
        preds[i] = xa[i] @ w
    return preds

def test_a_probe_is_a_leave_one_out_ridge_and_reads_a_linear_property_not_noise():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(40, 8))
    noise = rng.choice([-1.0, 0, 1], size=40)
    for target, alpha in ((x @ np.arange(8.0), 1e-3), (noise, 1.0), (noise, 0.03)):
        probe = linear_probe(x, target, alpha=alpha)
        preds = _loo_ridge(x, target, alpha)
        assert np.allclose(probe.predictions, preds, atol=1e-9)
        r2 = 1 - ((target - preds) ** 2).sum() / ((target - target.mean()) ** 2).sum()
        assert probe.r2 == pytest.approx(r2, abs=1e-9)
    assert linear_probe(x * 3, x @ np.arange(8.0), alpha=1e-3).r2 > 0.99
    assert linear_probe(x, noise).r2 < 0.3
    assert 0 <= linear_probe(x, np.sign(x[:, 0])).accuracy <= 1

def test_the_best_probe_chooses_its_strength_without_the_held_out_word():
    from lib.analysis.maps import best_probe
    rng = np.random.default_rng(1)
    x = rng.normal(scale=0.05, size=(40, 8))
    y = np.sign(x[:, 0])
    best = best_probe(x, y)
    assert best.r2 > 0.5 and best.alpha < 1.0
    # Nested choice: never better than choosing the strength on the very words it is scored on.
    from lib.analysis.maps import PROBE_ALPHAS
    assert best.r2 <= max(linear_probe(x, y, a).r2 for a in PROBE_ALPHAS) + 1e-12
    assert best_probe(x, rng.normal(size=40)).r2 < 0.2
