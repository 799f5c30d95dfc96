"""A convolution pass by hand (lib.content.convolution): each window the filter stops at, the map as the
cross-correlation a library computes, ReLU and max-pooling, and the worked example's whole pass."""
import numpy as np
import pytest

from lib.content import worked_examples as wx
from lib.content.convolution import convolve, max_pool, ocr_pass, relu, windows
from lib.errors import CourseError


def test_the_convolution_by_hand():
    out = ocr_pass(wx.stroke_image(), wx.FILTERS)
    assert out["conv"]["vertical"].tolist() == [[-3, 6, -3]] * 3
    assert out["pool"]["vertical"].tolist() == [[6, 6], [6, 6]]
    assert not out["conv"]["horizontal"].any()
    assert out["features"].tolist() == [6, 6, 6, 6, 0, 0, 0, 0]
    assert out["scores"].tolist() == [24, 0]
    assert out["probs"][0] > 0.999999


def test_the_map_is_the_cross_correlation_at_every_stop():
    rng = np.random.default_rng(0)
    image, kernel = rng.normal(size=(6, 5)), rng.normal(size=(3, 3))
    stops = list(windows(image, 3))
    assert [(r, c) for r, c, _ in stops] == [(r, c) for r in range(4) for c in range(3)]
    want = np.array([[(image[r:r + 3, c:c + 3] * kernel).sum() for c in range(3)] for r in range(4)])
    assert np.allclose(convolve(image, kernel), want)
    flipped = np.flip(kernel)
    assert not np.allclose(convolve(image, flipped), want), "not flipped: a cross-correlation"


def test_relu_and_pooling():
    x = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0], [7.0, -8.0, 9.0]])
    assert relu(x).min() == 0 and relu(x)[2, 2] == 9
    assert max_pool(x).tolist() == [[5, 5], [7, 9]]
    assert max_pool(x, size=2, stride=2).tolist() == [[5]]
    assert max_pool(x, size=3).tolist() == [[9]]


@pytest.mark.parametrize("call, says", [(lambda: convolve(np.ones((2, 2)), np.ones((3, 3))), "at least 3x3"),
                                        (lambda: convolve(np.ones((4, 4)), np.ones((2, 3))), "square grid"),
                                        (lambda: max_pool(np.ones((1, 1))), "smaller than the 2x2 pooling window"),
                                        (lambda: list(windows(np.ones(5), 3)), "2-D grid")])
def test_a_grid_too_small_or_misshapen_is_named(call, says):
    with pytest.raises(CourseError, match=says):
        call()
