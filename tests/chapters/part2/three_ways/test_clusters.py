"""The known clusters (lib/chapters/part2/three_ways/clusters.py): a synthetic point set with its truth fixed in
advance, the sizes and distances it claims, and a point set the chapter's t-SNE explorer offers."""
import numpy as np


def test_the_known_clusters_have_the_structure_they_claim():
    from lib.chapters.part2.three_ways import clusters
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
    from lib.chapters.part2.three_ways.views import STEPS, step_stops, valid_perplexities
    from lib.chapters.part2.three_ways.views import POINT_SETS, WORD_SETS, point_set

    ps = point_set("known-clusters")
    assert "known-clusters" in POINT_SETS and "known-clusters" not in WORD_SETS
    assert ps.groups[0] == "tight" and ps.labels[:2] == ("T1", "T2")
    assert valid_perplexities("known-clusters") == (10, 20, 30, 50)
    assert step_stops("known-clusters") == STEPS and len(step_stops("calling-game")) == 1
