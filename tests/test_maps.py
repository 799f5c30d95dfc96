import numpy as np
import pytest

from lib.errors import CourseError
from lib.analysis.maps import analogy, concept_plane, direction, gram_schmidt, linear_probe, pca, tsne, unit_sphere

# The toy of note 2, appendix A.
TOY = {"king": np.array([2.0, 1, 0]), "queen": np.array([2.0, -1, 0]),
       "man": np.array([1.0, 1, 1]), "woman": np.array([1.0, -1, 1])}


def test_gram_schmidt_axes_are_orthonormal():
    rng = np.random.default_rng(0)
    axes = gram_schmidt([rng.normal(size=7) for _ in range(4)])
    assert np.allclose(axes @ axes.T, np.eye(4), atol=1e-12)


def test_gram_schmidt_refuses_a_dependent_direction():
    with pytest.raises(CourseError, match="span"):
        gram_schmidt([np.array([1.0, 0, 0]), np.array([2.0, 0, 0])])


def test_the_hand_checked_projection_of_note_2():
    d1 = direction(TOY, ["king"], ["queen"])
    d2 = direction(TOY, ["king"], ["man"])
    plane = concept_plane(np.array(list(TOY.values())), d1, d2)
    assert np.allclose(plane.axes[0], [0, 1, 0])
    assert np.allclose(plane.axes[1], np.array([1, 0, -1]) / np.sqrt(2))
    assert np.allclose(plane.coords, [[1, np.sqrt(2)], [-1, np.sqrt(2)], [1, 0], [-1, 0]])


def test_analogy_says_whether_inputs_were_excluded():
    excl = analogy(TOY, "king", "man", "woman")
    assert excl.best == "queen" and excl.excluded == ("king", "man", "woman")
    assert excl.ranked[0][1] == pytest.approx(1.0)
    incl = analogy(TOY, "king", "man", "woman", exclude_inputs=False)
    assert incl.excluded == () and {w for w, _ in incl.ranked} == set(TOY)
    assert "excluded" in excl.describe() and "not excluded" in incl.describe()


def test_pca_variance_shares_and_unit_sphere():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 5)) * [5, 2, 1, 0.5, 0.1]
    p = pca(x)
    assert p.explained_ratio.sum() == pytest.approx(1.0)
    assert (np.diff(p.explained_ratio) <= 1e-12).all()
    assert p.cumulative(1) > 0.7
    assert np.allclose(np.linalg.norm(unit_sphere(x), axis=1), 1)


def test_a_probe_reads_a_linear_property_and_not_noise():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(40, 8))
    y = np.sign(x @ rng.normal(size=8)).clip(-1, 1)
    assert linear_probe(x * 3, x @ np.arange(8.0), alpha=1e-3).r2 > 0.99
    assert linear_probe(x, rng.choice([-1.0, 0, 1], size=40)).r2 < 0.3
    assert 0 <= linear_probe(x, y).accuracy <= 1


def test_tsne_is_seeded_and_checks_perplexity():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(20, 6))
    a, b = tsne(x, perplexity=5, seed=1), tsne(x, perplexity=5, seed=1)
    assert a.shape == (20, 2) and np.allclose(a, b)
    assert not np.allclose(a, tsne(x, perplexity=5, seed=2))
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


def test_neighbourhoods_have_the_requested_perplexity():
    from lib.analysis.maps.tsne import conditional_probabilities, neighbour_probabilities
    x = np.random.default_rng(5).normal(size=(30, 4))
    for perplexity in (2.0, 7.0, 20.0):
        rows = conditional_probabilities(x, perplexity)
        entropy = -(np.where(rows > 0, rows * np.log(np.where(rows > 0, rows, 1)), 0)).sum(1)
        assert np.allclose(np.exp(entropy), perplexity, rtol=1e-3)
        assert np.allclose(np.diag(rows), 0)
    P = neighbour_probabilities(x, 7.0)
    assert np.allclose(P, P.T) and P.sum() == pytest.approx(1.0, abs=1e-6)


def test_neighbours_and_role_cohesion():
    from lib.errors import CourseError
    from lib.analysis.maps import cosine_matrix, nearest, role_cohesion
    x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.0, 0.0]])
    c = cosine_matrix(x)
    assert np.allclose(np.diag(c)[:3], 1) and c[3, 3] == 0, "a zero row is similar to nothing"
    assert nearest(x, ["a", "b", "c", "z"], "a", k=1)[0][0] == "b"
    same, other = role_cohesion(x[:3], ["r", "r", "s"])
    assert same > 0.9 and other < 0.2
    with pytest.raises(CourseError, match="not one of the rows"):
        nearest(x, ["a", "b", "c", "z"], "q")
    with pytest.raises(CourseError, match="k must be"):
        nearest(x, ["a", "b", "c", "z"], "a", k=4)
