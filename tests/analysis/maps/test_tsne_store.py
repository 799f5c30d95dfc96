"""The stored t-SNE runs (lib.analysis.maps.tsne_store): what is stored is what the library computes; a store
written under other settings, damaged or missing is ignored; other points are computed."""
import numpy as np
import pytest

from lib.errors import CourseError


def test_stored_runs_are_what_the_library_computes(monkeypatch):
    """A sample of stored runs, recomputed: the same number of iterations and the same KL (a store
    that drifted from the code would fail here)."""
    from lib.analysis.maps import tsne_store
    from lib.analysis.maps.tsne import tsne_run
    from lib.chapters.part2.three_ways.views import neighbours_kept
    from lib.content.point_sets import point_set

    for name, p, seed in (("calling-game", 20, 3), ("real-language", 60, 1), ("calling-game", 5, 0)):
        x = point_set(name).vectors
        stored = tsne_run(x, p, seed)
        monkeypatch.setenv("COURSE_TSNE_STORE", "off")
        fresh = tsne_run(x, p, seed)
        monkeypatch.delenv("COURSE_TSNE_STORE")
        assert fresh.converged and stored.converged
        # scikit-learn tests for convergence every 50 iterations: on another processor a run whose
        # gradient sits near the threshold at a check may stop one check earlier or later.
        assert abs(fresh.n_iter - stored.n_iter) <= 50 and fresh.kl == pytest.approx(stored.kl, rel=1e-3)
        assert neighbours_kept(x, fresh.layout) == pytest.approx(neighbours_kept(x, stored.layout), abs=0.05)

def test_a_store_written_under_other_settings_or_damaged_is_ignored(course_data):
    import json
    from lib.analysis.maps import tsne_store
    from lib.analysis.maps.tsne import MAX_ITER
    from lib.content.point_sets import point_set

    x = point_set("calling-game").vectors
    key = tsne_store.run_key(x, 20.0, 3, MAX_ITER)
    path = tsne_store.store_path()
    assert str(path).startswith(str(course_data))
    tsne_store._stored.cache_clear()
    assert tsne_store.lookup(key) is not None
    body = json.loads(path.read_text())
    body["settings"]["sklearn"] = "0.1"
    path.write_text(json.dumps(body))
    tsne_store._stored.cache_clear()
    assert tsne_store.lookup(key) is None
    path.write_text("{not json")
    tsne_store._stored.cache_clear()
    assert tsne_store.lookup(key) is None
    path.unlink()
    tsne_store._stored.cache_clear()
    assert tsne_store.lookup(key) is None
    tsne_store._stored.cache_clear()

def test_other_points_or_a_seed_out_of_range():
    from lib.analysis.maps import tsne_store
    from lib.analysis.maps.tsne import MAX_ITER, tsne_run

    x = np.random.default_rng(0).normal(size=(12, 4))
    assert tsne_store.lookup(tsne_store.run_key(x, 3.0, 0, MAX_ITER)) is None
    assert tsne_run(x, 3, 0).layout.shape == (12, 2)
    for bad in (-1, 2 ** 32, 1.5, "3", True):
        with pytest.raises(CourseError, match="seed is a whole number"):
            tsne_run(x, 3, bad)
