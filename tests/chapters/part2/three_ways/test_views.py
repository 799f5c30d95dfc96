"""The three-ways chapter's maps (lib/chapters/part2/three_ways/views.py): t-SNE views and their messages, the
neighbours a layout keeps, the axes a reader types, the concept plane; and the runs the course shows, all
stored, read without computing."""
import numpy as np
import pytest

from lib.chapters.part2.three_ways.views import (PERPLEXITIES, SEEDS, layouts, neighbours_kept, parse_axis, plane_view,
                                                 point_set, tsne_view)
from lib.errors import CourseError


def test_tsne_view_messages_and_cache():
    with pytest.raises(CourseError, match="below the number of points \\(28\\)"):
        tsne_view("calling-game", 28, 0, 1)
    with pytest.raises(CourseError, match="perplexity must be a number"):
        tsne_view("calling-game", "lots", 0, 1)
    with pytest.raises(CourseError, match="seed is a whole number"):
        tsne_view("calling-game", 5, 1.5, 1)
    with pytest.raises(CourseError, match="no point set"):
        tsne_view("tinystories", 5, 0, 1)
    v = tsne_view("calling-game", 5, 2, 2)
    assert v.layouts[0] is v.layouts[1] is layouts("calling-game", 5.0, [2])[0]
    assert 0 <= v.kept[0] <= 1
    # Every stop of the slider below 28 is allowed on the calling game; the real words allow all.
    assert [p for p in PERPLEXITIES if p < 28] and max(PERPLEXITIES) < 84 and len(SEEDS) >= 2

def test_neighbours_kept_is_one_for_a_copy_and_low_for_noise():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 5))
    assert neighbours_kept(x, x[:, :5]) == 1.0
    assert neighbours_kept(x, rng.normal(size=(40, 2))) < 0.4

def test_parse_axis():
    labels = point_set("calling-game").labels
    assert parse_axis("Paolo - Pietro", labels) == (["Paolo"], ["Pietro"])
    assert parse_axis("Tarso + Cefa - capo - vice", labels) == (["Tarso", "Cefa"], ["capo", "vice"])
    assert parse_axis("Paolo-Pietro", labels) == (["Paolo"], ["Pietro"])
    assert parse_axis("- Pietro", labels) == ([], ["Pietro"])
    with pytest.raises(CourseError, match="'Pippo' is not a token"):
        parse_axis("Pippo - Pietro", labels)
    with pytest.raises(CourseError, match="at least one token"):
        parse_axis("  ", labels)

def test_plane_view_reproduces_the_epithet_corners_and_refuses_zero_axes(lm):
    from lib.shipped.behaviour import epithet_plane
    plane, _ = epithet_plane(lm)
    v = plane_view("calling-game", "Paolo - Pietro", "Tarso + Cefa - capo - vice")
    assert np.allclose(v.coords, plane.coords) and v.spread == pytest.approx(plane.spread)
    with pytest.raises(CourseError, match="zero vector"):
        plane_view("calling-game", "Paolo - Paolo", "Tarso")
    with pytest.raises(CourseError, match="points along the first"):
        plane_view("calling-game", "Tarso", "Tarso + Tarso")
    assert plane_view("real-language", "king - queen", "man - woman").coords.shape == (84, 2)

def _clear_tsne_caches():
    from lib.analysis.maps import tsne_store
    from lib.chapters.part2.three_ways import views as map_views
    tsne_store._stored.cache_clear()
    map_views._RUNS.clear()
    map_views.tsne_grid.cache_clear()

def test_every_course_run_is_stored_and_converged(run_in_process):
    """Every run the course shows is stored; every run allowed to go on until it converges did (the
    others are the known clusters' iteration stops, tests/analysis/maps/test_tsne.py)."""
    from lib.chapters.part2.three_ways.views import course_runs
    n = len(course_runs())        # 206 with SmolLM2 installed (its 84 rows in real-language), 203 without
    code, out, _ = run_in_process("tsne")
    assert code == 0 and f"{n} of the course's {n} t-SNE runs are stored" in out, out
    import json
    from lib.analysis.maps import tsne_store
    from lib.analysis.maps.tsne import MAX_ITER
    runs = json.loads(tsne_store.store_path().read_text())["runs"]
    full = [r for key, r in runs.items() if key.endswith(f"|{MAX_ITER}")]
    # the store ships SmolLM2's three runs whether or not the package is installed where the tests run
    assert len(runs) == 206 and len(full) == 126 and all(r["converged"] for r in full)

def test_the_explorer_grids_compute_nothing(monkeypatch):
    import sklearn.manifold

    from lib.chapters.part2.three_ways.views import tsne_grid
    from lib.chapters.part2.three_ways.views import POINT_SETS

    def refuse(*a, **k):
        raise AssertionError("a t-SNE run was computed, not read from the store")
    monkeypatch.setattr(sklearn.manifold, "TSNE", refuse)
    _clear_tsne_caches()
    try:
        assert all(len(tsne_grid(name)) >= 40 for name in POINT_SETS)
    finally:
        _clear_tsne_caches()

def test_the_store_holds_every_run_the_explorers_reach():
    from lib.analysis.maps import tsne_store
    from lib.analysis.maps.tsne import MAX_ITER
    from lib.chapters.part2.three_ways.views import grid_cells
    from lib.chapters.part2.three_ways.views import POINT_SETS, point_set

    tsne_store._stored.cache_clear()
    for name in POINT_SETS:
        x = point_set(name).vectors
        for p, s, n in grid_cells(name):
            stored = tsne_store.lookup(tsne_store.run_key(x, p, s, n))
            assert stored is not None, f"{name}: perplexity {p:g}, seed {s}, {n} iterations is not stored"
            _, n_iter, kl, converged = stored
            assert np.isfinite(kl) and n_iter <= n
            # A stop either ran all its iterations or converged before reaching it.
            assert converged if n == MAX_ITER else (n_iter == n or converged), (name, p, s, n, n_iter)
