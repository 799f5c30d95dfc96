"""PCA (lib.analysis.maps.pca): one SVD of the centred rows, signs fixed, the unit sphere, and points without
spread refused in one sentence."""
import warnings

import numpy as np
import pytest

from lib.analysis.maps import pca, unit_sphere
from lib.errors import CourseError


def test_pca_equals_an_svd_of_the_centred_rows_and_unit_sphere():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 5)) * [5, 2, 1, 0.5, 0.1]
    p = pca(x)
    # The reference: PCA written out as one SVD of the centred rows.
    c = x - x.mean(0)
    _, s, vt = np.linalg.svd(c, full_matrices=False)
    assert np.allclose(p.explained_ratio, s ** 2 / (s ** 2).sum(), atol=1e-12)
    for k in range(5):     # each component equals the SVD's, up to its sign
        assert abs(abs(p.components[k] @ vt[k]) - 1) < 1e-9, k
    assert np.allclose(p.coords, c @ p.components.T)
    assert (np.diff(p.explained_ratio) <= 1e-12).all() and p.cumulative(1) > 0.7
    # Each component's largest coordinate is positive, so figures do not flip between runs.
    assert (p.components[np.arange(5), np.abs(p.components).argmax(1)] > 0).all()
    assert pca(x, k=2).coords.shape == (30, 2)
    assert np.allclose(np.linalg.norm(unit_sphere(x), axis=1), 1)

def test_pca_refuses_points_without_spread_in_one_sentence():
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # scikit-learn's divide-by-zero warning must not show
        with pytest.raises(CourseError, match="all 4 points are the same"):
            pca(np.tile([1.0, -2.0, 3.0], (4, 1)))
        assert pca([[0.0, 1.0], [0.0, 2.0]]).explained_ratio[0] == pytest.approx(1.0)
