"""t-SNE (lib.analysis.maps.tsne): seeded, reporting its run, checking its perplexity; its neighbourhoods have the
requested perplexity (against a bisection written out); a shorter run is the first iterations of a longer one,
and the first stop reports its own iterations and KL; seeds run together equal seeds run alone."""
import numpy as np
import pytest

from lib.analysis.maps import tsne
from lib.analysis.maps.tsne import tsne_seeds
from lib.content.point_sets import point_set
from lib.errors import CourseError


def test_tsne_is_seeded_reports_its_run_and_checks_perplexity():
    from lib.analysis.maps.tsne import MAX_ITER, kl_divergence, tsne_run
    rng = np.random.default_rng(3)
    x = rng.normal(size=(20, 6))
    a, b = tsne(x, perplexity=5, seed=1), tsne(x, perplexity=5, seed=1)
    assert a.shape == (20, 2) and np.allclose(a, b)
    assert not np.allclose(a, tsne(x, perplexity=5, seed=2))
    run = tsne_run(x, perplexity=5, seed=1)
    assert np.allclose(run.layout, a) and 250 < run.n_iter and run.converged == (run.n_iter < MAX_ITER)
    assert run.kl == pytest.approx(kl_divergence(x, run.layout, 5), rel=1e-3)
    short = tsne_run(x, perplexity=5, seed=1, max_iter=260)
    assert not short.converged and short.n_iter == 260 and short.kl > run.kl
    with pytest.raises(CourseError, match="below the number of points"):
        tsne(x, perplexity=20)

def test_tsne_keeps_clusters_together():
    rng = np.random.default_rng(4)
    centres = rng.normal(0, 5, size=(3, 10))
    x = np.vstack([c + rng.normal(size=(20, 10)) for c in centres])
    labels = np.repeat([0, 1, 2], 20)
    y = tsne(x, perplexity=10, seed=0)
    d = ((y[:, None] - y[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    assert (labels[d.argmin(1)] == labels).mean() == 1.0

def _conditional_by_bisection(x, perplexity):
    """Each point's Gaussian neighbourhood p(j | i), its width found by bisection so that
    exp(entropy) equals the perplexity: the definition, written out independently."""
    d = ((x[:, None] - x[None]) ** 2).sum(-1)
    n = len(x)
    rows = np.zeros((n, n))
    for i in range(n):
        rel = d[i] - np.delete(d[i], i).min()
        rel[i] = np.inf                       # a point is not its own neighbour
        lo, hi = 1e-20, 1e20
        for _ in range(200):
            beta = np.sqrt(lo * hi)
            w = np.exp(-rel * beta)
            p = w / w.sum()
            h = -(p[p > 0] * np.log(p[p > 0])).sum()
            lo, hi = (beta, hi) if h > np.log(perplexity) else (lo, beta)
        rows[i] = p
    return rows

def test_the_neighbourhoods_t_sne_reproduces_have_the_requested_perplexity():
    from lib.analysis.maps.tsne import neighbour_probabilities
    x = np.random.default_rng(5).normal(size=(30, 4))
    for perplexity in (2.0, 7.0, 20.0):
        cond = _conditional_by_bisection(x, perplexity)
        assert np.allclose(np.exp(-(np.where(cond > 0, cond * np.log(np.where(cond > 0, cond, 1)), 0)).sum(1)),
                           perplexity, rtol=1e-3)
        P = neighbour_probabilities(x, perplexity)
        assert np.allclose(P, P.T) and P.sum() == pytest.approx(1.0, abs=1e-6)
        assert np.allclose(P, (cond + cond.T) / (2 * len(x)), atol=1e-4)

def test_a_shorter_run_is_the_first_iterations_of_a_longer_one(monkeypatch):
    """The control is honest only if the layout after N iterations is what the full optimisation
    holds after N of its iterations. Record the layout the long run's objective is handed at every
    iteration, and compare."""
    import sklearn.manifold._t_sne as sk

    from lib.analysis.maps.tsne import tsne_run
    from lib.chapters.part2.three_ways.views import point_set as chapter_point_set

    monkeypatch.setenv("COURSE_TSNE_STORE", "off")
    x = chapter_point_set("known-clusters").vectors
    seen = []
    objective = sk._kl_divergence

    def recording(params, *args, **kwargs):
        seen.append(params.copy())
        return objective(params, *args, **kwargs)

    monkeypatch.setattr(sk, "_kl_divergence", recording)
    long = tsne_run(x, 10, 3, 1000)
    assert len(seen) == 1000 and not long.converged
    monkeypatch.setattr(sk, "_kl_divergence", objective)
    for stop in (250, 500):
        short = tsne_run(x, 10, 3, stop)
        assert short.n_iter == stop and not short.converged
        assert np.array_equal(short.layout.ravel(), seen[stop]), f"the {stop}-iteration run left the long run's path"

def test_the_first_stop_reports_its_iterations_and_the_kl_of_its_layout(monkeypatch):
    """scikit-learn reports 251 iterations and the largest float as KL for a run stopped at the end of
    early exaggeration; the library reports 250 and the KL of the layout against the real neighbourhoods."""
    from lib.analysis.maps.tsne import EXAGGERATION_ITER, kl_divergence, tsne_run
    from lib.chapters.part2.three_ways.views import point_set as chapter_point_set

    monkeypatch.setenv("COURSE_TSNE_STORE", "off")
    x = chapter_point_set("known-clusters").vectors
    first = tsne_run(x, 10, 0, EXAGGERATION_ITER)
    assert first.n_iter == EXAGGERATION_ITER and not first.converged
    assert first.kl == pytest.approx(kl_divergence(x, first.layout, 10), rel=1e-9) and first.kl < 10
    later = tsne_run(x, 10, 0, 500)
    # The library's KL agrees with scikit-learn's own on a run it reports (to its last update).
    assert later.kl == pytest.approx(kl_divergence(x, later.layout, 10), rel=0.02)
    for bad in (249, 0, 250.0, True, "500"):
        with pytest.raises(CourseError, match="at least 250 .the early-exaggeration phase"):
            tsne_run(x, 10, 0, bad)

def test_seeds_run_together_equal_seeds_run_alone():
    x = point_set("calling-game").vectors
    together = tsne_seeds(x, 5.0, [0, 3])
    assert np.allclose(together[1], tsne(x, 5.0, seed=3), atol=1e-9)
    assert not np.allclose(together[0], together[1])
