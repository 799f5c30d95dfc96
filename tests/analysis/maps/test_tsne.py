"""The known clusters (a synthetic point set with its truth fixed in advance) and the t-SNE
explorer's iterations control: what a stop is, that it is honest, and that the store holds it."""
import numpy as np
import pytest

from lib.errors import CourseError


# ------------------------------------------------------------------ the known clusters
def test_the_known_clusters_have_the_structure_they_claim():
    from lib.content import clusters
    from lib.analysis.maps import nearest_indices

    made = clusters.make()
    x, groups = made.vectors, list(made.groups)
    assert x.shape == (80, clusters.DIM) and len(set(made.labels)) == 80
    assert np.array_equal(x, clusters.make.__wrapped__().vectors), "a fixed seed: the same points every time"
    assert [groups.count(c.name) for c in clusters.CLUSTERS] == [20, 20, 20, 20]
    spread = {c.name: clusters.group_spread(x, groups, c.name) for c in clusters.CLUSTERS}
    # Sizes: wide is about five times as spread out as each of the others, which are alike.
    for name in ("tight", "near", "far"):
        assert 4 < spread["wide"] / spread[name] < 6.5
        assert 0.8 < spread[name] / spread["tight"] < 1.25
    # Distances from tight: near < wide < far, far about five times near.
    d = {name: clusters.centre_distance(x, groups, "tight", name) for name in ("near", "wide", "far")}
    assert d["near"] < d["wide"] < d["far"] and 4 < d["far"] / d["near"] < 6
    # Separate clusters: every point's five nearest neighbours are in its own cluster.
    same = np.array(groups)[nearest_indices(x, 5)] == np.array(groups)[:, None]
    assert same.all()


def test_the_known_clusters_are_a_point_set_the_tsne_explorer_offers():
    from lib.analysis.maps.views import STEPS, step_stops, valid_perplexities
    from lib.content.point_sets import POINT_SETS, WORD_SETS, point_set

    ps = point_set("known-clusters")
    assert "known-clusters" in POINT_SETS and "known-clusters" not in WORD_SETS
    assert ps.groups[0] == "tight" and ps.labels[:2] == ("T1", "T2")
    assert valid_perplexities("known-clusters") == (10, 20, 30, 50)
    assert step_stops("known-clusters") == STEPS and len(step_stops("calling-game")) == 1


# ------------------------------------------------------------------ what an iteration stop is
def test_a_shorter_run_is_the_first_iterations_of_a_longer_one(monkeypatch):
    """The control is honest only if the layout after N iterations is what the full optimisation
    holds after N of its iterations. Record the layout the long run's objective is handed at every
    iteration, and compare."""
    import sklearn.manifold._t_sne as sk

    from lib.analysis.maps.tsne import tsne_run
    from lib.content.point_sets import point_set

    monkeypatch.setenv("COURSE_TSNE_STORE", "off")
    x = point_set("known-clusters").vectors
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
    from lib.content.point_sets import point_set

    monkeypatch.setenv("COURSE_TSNE_STORE", "off")
    x = point_set("known-clusters").vectors
    first = tsne_run(x, 10, 0, EXAGGERATION_ITER)
    assert first.n_iter == EXAGGERATION_ITER and not first.converged
    assert first.kl == pytest.approx(kl_divergence(x, first.layout, 10), rel=1e-9) and first.kl < 10
    later = tsne_run(x, 10, 0, 500)
    # The library's KL agrees with scikit-learn's own on a run it reports (to its last update).
    assert later.kl == pytest.approx(kl_divergence(x, later.layout, 10), rel=0.02)
    for bad in (249, 0, 250.0, True, "500"):
        with pytest.raises(CourseError, match="at least 250 .the early-exaggeration phase"):
            tsne_run(x, 10, 0, bad)


# ------------------------------------------------------------------ the store
def test_the_store_holds_every_run_the_explorers_reach():
    from lib.analysis.maps import tsne_store
    from lib.analysis.maps.tsne import MAX_ITER
    from lib.analysis.maps.views import grid_cells
    from lib.content.point_sets import POINT_SETS, point_set

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


# ------------------------------------------------------------------ the explorer's control
def test_the_iterations_control_in_a_kernel():
    from lib.chapters.part2.three_ways.explorers import tsne_explorer
    from lib.analysis.maps.views import STEPS

    ex = tsne_explorer("known-clusters", perplexity=10)
    steps = next(c for c in ex.controls if c.name == "steps")
    assert steps.options == STEPS and steps.default == STEPS[-1] and steps.slider
    assert steps.labels()[0] == "250" and steps.labels()[-1] == "until converged"
    assert "early exaggeration" in ex.note and "scikit-learn" in ex.note
    assert "steps" not in {c.name for c in tsne_explorer().controls}
    assert tsne_explorer("known-clusters").defaults()["perplexity"] == 10, "5 is not offered there"
    box = ex.widget()
    done = box.figure.data
    assert done["converged"] == [True, True] and done["steps"] == STEPS[-1]
    box.controls["steps"].value = 250
    first = box.figure.data
    assert first["iterations"] == [250, 250] and first["converged"] == [False, False]
    assert all(a > b for a, b in zip(first["kl"], done["kl"])), "the end of exaggeration is far from the optimum"
    assert first["layouts"][0] != done["layouts"][0]
    box.controls["left"].value = 4
    assert box.figure.data["seeds"] == [4, 1] and box.figure.data["iterations"][0] == 250
    # Values no slider offers get one sentence each, in the constructor and in compute.
    with pytest.raises(CourseError, match="iterations 300 is not one of this set's stops: 250, 500"):
        tsne_explorer("known-clusters", perplexity=10, steps=300)
    with pytest.raises(CourseError, match="perplexity 5 is not one of this set.s stops: 10, 20, 30, 50"):
        tsne_explorer("known-clusters", perplexity=5)
    for values, message in (({"steps": 100}, "iterations 100 is not"), ({"perplexity": 7}, "perplexity 7 is not"),
                            ({"left": 9}, "the left seed 9 is not")):
        with pytest.raises(CourseError, match=message):
            ex.compute({**ex.defaults(), **values})
