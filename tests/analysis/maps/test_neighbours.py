"""Neighbours (lib.analysis.maps.neighbours): cosine similarity, the nearest rows, role cohesion."""
import numpy as np
import pytest


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
