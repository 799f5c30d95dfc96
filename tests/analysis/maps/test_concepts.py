"""Concept directions and planes (lib.analysis.maps.concepts): Gram-Schmidt gives orthonormal axes and refuses a
direction in the span of the others; the projection of note 2's toy, checked by hand."""
import numpy as np
import pytest

from lib.analysis.maps import concept_plane, direction, gram_schmidt
from lib.errors import CourseError

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
