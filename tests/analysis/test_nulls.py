"""The fair nulls (`lib.analysis.nulls`, the whole-vocabulary analogy ranking, the cosine 5-NN): each
behaves as a null on data with no structure, and each detects structure planted on purpose."""
import numpy as np
import pytest

from lib.analysis import nulls
from lib.analysis.maps import concept_plane, random_plane_spread
from lib.analysis.maps.analogy import VOCABULARY_METHODS, rank_methods
from lib.analysis.maps.neighbours import knn_accuracy
from lib.errors import CourseError

RNG = np.random.default_rng(12345)


def _low_rank(n=28, dim=64, rank=3, seed=0):
    """n points that vary only inside a `rank`-dimensional subspace of `dim` dimensions."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((dim, rank)))
    return rng.standard_normal((n, rank)) @ basis.T + 5.0


def test_percentile_of_counts_ties_half():
    assert nulls.percentile_of(2.0, [1.0, 2.0, 3.0, 4.0]) == pytest.approx(37.5, abs=1e-12)
    assert nulls.percentile_of(10.0, [1.0, 2.0]) == pytest.approx(100.0, abs=1e-12)
    with pytest.raises(CourseError):
        nulls.percentile_of(1.0, [])


def test_in_span_planes_live_where_the_rows_vary():
    x = _low_rank(rank=3)
    assert len(nulls.span_basis(x)) == 3
    inside = nulls.in_span_planes(x, 300, seed=1)
    across = random_plane_spread(x, 300, seed=1)
    # a plane inside a 3-D span holds about 2/3 of the spread; one drawn across 64 dimensions about 2/64
    assert inside.mean() == pytest.approx(2 / 3, abs=0.1)
    assert across.mean() < 0.1 < inside.min()
    with pytest.raises(CourseError, match="fewer than 2 directions"):
        nulls.in_span_planes(_low_rank(rank=1), 10)


def test_same_construction_planes_are_a_null_on_noise_and_find_a_planted_plane():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((28, 64))
    recipe = ((1, 1), (2, 2))
    null = nulls.same_construction_planes(x, recipe, 400, seed=0)
    assert len(null) == 400 and ((0 < null) & (null < 1)).all()
    # on noise, the plane named by rows 0 - 1 and (2 + 3) - (4 + 5) is one more draw of the same null
    plane = concept_plane(x, x[0] - x[1], (x[2] + x[3] - x[4] - x[5]) / 2)
    assert 5 < nulls.percentile_of(plane.spread, null) < 95
    # planted: two strong directions that the chosen rows name; the plane beats every same-construction draw
    axes = np.linalg.qr(rng.standard_normal((64, 2)))[0].T
    y = 0.2 * rng.standard_normal((28, 64))
    y[0] += 6 * axes[0]
    y[1] -= 6 * axes[0]
    y[2:4] += 6 * axes[1]
    y[4:6] -= 6 * axes[1]
    planted = concept_plane(y, axes[0], axes[1]).spread
    assert nulls.percentile_of(planted, nulls.same_construction_planes(y, recipe, 400, seed=0)) > 99
    # and the same-construction null sits far above planes at random: differences of rows point where rows differ
    assert np.median(nulls.same_construction_planes(y, recipe, 200, seed=1)) > random_plane_spread(y, 200).max()


@pytest.mark.parametrize("recipe", [((1, 1),), ((0, 1), (1, 1)), "ab", ((20, 20), (1, 1))])
def test_same_construction_planes_reject_bad_recipes(recipe):
    with pytest.raises(CourseError, match="recipe"):
        nulls.same_construction_planes(np.random.default_rng(0).standard_normal((28, 8)), recipe, 5)


def test_column_permuted_keeps_each_column_and_breaks_relations():
    x = _low_rank(rank=2, n=60, dim=10)
    p = nulls.column_permuted(x, np.random.default_rng(0))
    assert np.allclose(np.sort(p, axis=0), np.sort(x, axis=0), atol=0)
    assert nulls.top_share(x) == pytest.approx(1.0, abs=1e-9)
    shares = nulls.structureless_shares(x, "column-permuted", 100, seed=0)
    assert len(shares) == 100 and shares.max() < 0.9
    g = nulls.gaussian_like(x, np.random.default_rng(0))
    assert g.shape == x.shape


@pytest.mark.parametrize("kind", list(nulls.NULL_DATA))
def test_structureless_data_is_a_null_for_structureless_rows(kind):
    x = np.random.default_rng(7).standard_normal((40, 30))
    shares = nulls.structureless_shares(x, kind, 100, seed=1)
    assert 2.5 < nulls.percentile_of(nulls.top_share(x), shares) < 97.5


def test_at_least_a_hundred_shuffles_and_known_kinds():
    x = np.random.default_rng(0).standard_normal((10, 5))
    with pytest.raises(CourseError, match="at least 100"):
        nulls.structureless_shares(x, "gaussian", 10)
    with pytest.raises(CourseError, match="unknown null data"):
        nulls.structureless_shares(x, "uniform", 100)
    with pytest.raises(CourseError, match="at least 100"):
        nulls.label_shuffles(len, ["a", "b"], 99)


def test_label_shuffles_find_planted_groups_and_not_random_ones():
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((4, 20)) * 3
    groups = np.repeat(np.arange(4), 10)
    planted = centres[groups] + rng.standard_normal((40, 20))
    null = nulls.label_shuffles(lambda g: nulls.group_gap(planted, g), groups, 100, seed=0)
    assert nulls.group_gap(planted, groups) > null.max()
    noise = rng.standard_normal((40, 20))
    null = nulls.label_shuffles(lambda g: nulls.group_gap(noise, g), groups, 100, seed=0)
    assert 2.5 < nulls.percentile_of(nulls.group_gap(noise, groups), null) < 97.5


def test_step_matched_paths_keep_the_steps_and_expose_a_straight_path():
    rng = np.random.default_rng(2)
    walk = np.cumsum(rng.standard_normal((6, 64)), axis=0)
    paths = nulls.step_matched_paths(walk, 200, seed=0)
    assert paths.shape == (200, 6, 64)
    assert np.allclose(paths[:, 0], walk[0], atol=1e-12)
    assert np.allclose(np.linalg.norm(np.diff(paths, axis=1), axis=2), np.linalg.norm(np.diff(walk, axis=0), axis=1),
                       atol=1e-9)
    shares = np.array([nulls.top_share(p) for p in paths])
    assert 2.5 < nulls.percentile_of(nulls.top_share(walk), shares) < 97.5     # a random walk is its own null
    line = np.outer(np.arange(6.0) ** 2, rng.standard_normal(64))               # every step along one line
    assert nulls.top_share(line) > shares.max()
    with pytest.raises(CourseError, match="at least 3 points"):
        nulls.step_matched_paths(walk[:2], 5)


def test_control_word_swaps_the_word_and_nothing_else():
    senses = {"money": ("The bank lent it.", "A bank, banked."), "river": ("On the bank.",)}
    out = nulls.with_control_word(senses, "bank", "thing")
    assert out == {"money": ("The thing lent it.", "A thing, banked."), "river": ("On the thing.",)}
    with pytest.raises(CourseError, match="once in every sentence"):
        nulls.with_control_word({"x": ("bank bank",)}, "bank", "thing")
    with pytest.raises(CourseError, match="one word"):
        nulls.with_control_word(senses, "bank", "two words")


def test_noise_map_of_structureless_data():
    x = np.random.default_rng(0).standard_normal((28, 64))
    m = nulls.noise_map(x, "gaussian", perplexity=5, seed=0)
    assert m.tsne.shape == m.pca.shape == (28, 2) and m.data.shape == x.shape
    assert 0 <= m.pca_kept <= 1 and 0 <= m.tsne_kept <= 1
    # t-SNE keeps neighbours even of noise, and makes clumps of it: that is what the noise map is for
    assert m.tsne_kept > m.pca_kept
    assert m.tsne_clumpy > 0.3
    # planted clusters keep their labels' silhouette far above the noise map's under the same labels
    centres = np.random.default_rng(1).standard_normal((4, 64)) * 4
    labels = np.repeat(np.arange(4), 7)
    planted = centres[labels] + np.random.default_rng(2).standard_normal((28, 64))
    noise = nulls.gaussian_like(planted, np.random.default_rng(0))
    assert nulls.silhouette(planted, labels) > 0.3 > nulls.silhouette(noise, labels)


def test_knn_accuracy_agrees_with_scikit_learn_and_finds_planted_groups():
    from sklearn.model_selection import LeaveOneOut, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(4)
    groups = np.repeat(list("abcd"), 10)
    centres = {g: rng.standard_normal(16) * 2 for g in "abcd"}
    x = np.array([centres[g] for g in groups]) + rng.standard_normal((40, 16))
    for cosine in (False, True):
        sk = KNeighborsClassifier(n_neighbors=5, metric="cosine" if cosine else "euclidean", algorithm="brute")
        ref = cross_val_score(sk, x, groups, cv=LeaveOneOut()).mean()
        assert knn_accuracy(x, groups, 5, cosine) == pytest.approx(ref, abs=1e-12)
    assert knn_accuracy(x, groups, 5, True) > 0.9
    assert knn_accuracy(rng.standard_normal((40, 16)), groups, 5, True) < 0.6
    # direction-only structure: rows of a group point the same way at very different lengths
    lengths = rng.uniform(0.1, 20, size=40)[:, None]
    y = np.array([centres[g] / np.linalg.norm(centres[g]) for g in groups]) * lengths + 0.05 * rng.standard_normal((40, 16))
    assert knn_accuracy(y, groups, 5, cosine=True) > knn_accuracy(y, groups, 5, cosine=False)


def _vocabulary(seed=0, n=500, dim=50):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    return words, rng.standard_normal((n, dim)), rng


def test_whole_vocabulary_ranking_finds_a_planted_offset_and_its_baselines_do_not():
    words, m, rng = _vocabulary()
    offset = rng.standard_normal(50) * 2
    quads = []
    for i in range(0, 40, 2):            # pairs (w_i, w_i+1) with w_i+1 = w_i + offset (+ a little noise)
        m[i + 1] = m[i] + offset + 0.1 * rng.standard_normal(50)
    for i in range(0, 40, 4):
        quads.append((words[i + 3], words[i + 2], words[i], words[i + 1]))   # d - c = a - b
    r = rank_methods(words, m, quads)
    assert r.methods == VOCABULARY_METHODS and r.pool == len(words) - 3
    assert r.right("offset") == len(quads) and r.right("3CosMul") == len(quads)
    assert r.right("add-opposite") == 0 and r.right("nearest to b") == 0
    # on a vocabulary with no offsets, the offset method is no better than its baselines
    words, m, _ = _vocabulary(1)
    r = rank_methods(words, m, [tuple(words[i:i + 4]) for i in range(0, 40, 4)])
    assert r.right("offset") <= 1
    assert all(1 <= rank <= r.pool for ranks in r.ranks.values() for rank in ranks)


def test_3cosmul_matches_its_formula():
    words, m, _ = _vocabulary(2, n=60, dim=8)
    a, b, c = 0, 1, 2
    u = m / np.linalg.norm(m, axis=1, keepdims=True)
    s = lambda i: (u @ u[i] + 1) / 2
    scores = s(a) * s(c) / (s(b) + 1e-3)
    scores[[a, b, c]] = -np.inf
    expected = words[int(np.argmax(scores))]
    r = rank_methods(words, m, [(words[a], words[b], words[c], expected)], ["3CosMul"])
    assert r.best["3CosMul"] == [expected] and r.ranks["3CosMul"] == [1]
    with pytest.raises(CourseError, match="not in the vocabulary"):
        rank_methods(words, m, [("w0", "w1", "w2", "nope")])
    with pytest.raises(CourseError, match="unknown analogy method"):
        rank_methods(words, m, [("w0", "w1", "w2", "w3")], ["cosmul"])


def test_top_share_against_both_nulls():
    planted = _low_rank(n=40, dim=20, rank=2) + 0.05 * np.random.default_rng(0).standard_normal((40, 20))
    r = nulls.top_share_against_nulls(planted, seed=0)
    assert r["share"] > 90 and r["share"] > r["perm_hi"] and r["share"] > r["gauss_hi"]
    assert r["draws"] == 100 and (r["n"], r["dim"]) == (40, 20) and r["ratio_perm"] > 1
    noise = nulls.top_share_against_nulls(np.random.default_rng(1).standard_normal((40, 20)), seed=0)
    assert noise["share"] < noise["gauss_hi"] * 1.15 and noise["ratio_gauss"] == pytest.approx(1.0, abs=0.15)
