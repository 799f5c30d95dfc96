"""A convolution pass by hand: the operations an OCR network applies, one small function each.

Part 1 sets a 3x3 filter sliding over a 5x5 image beside an attention head: the filter's window
is fixed and local, the head's is chosen by content. These functions are written as loops over
windows on purpose, so a chapter can show each stop of the filter.
"""
from __future__ import annotations

import numpy as np

from lib.errors import require
from lib.model.readout import softmax


def windows(image: np.ndarray, size: int):
    """Every (row, col, window) of a `size` x `size` window sliding with stride 1, no padding."""
    image = np.asarray(image, float)
    require(image.ndim == 2 and image.shape[0] >= size and image.shape[1] >= size,
            f"the image must be a 2-D grid at least {size}x{size}")
    for r in range(image.shape[0] - size + 1):
        for c in range(image.shape[1] - size + 1):
            yield r, c, image[r:r + size, c:c + size]


def convolve(image, kernel) -> np.ndarray:
    """Valid cross-correlation (what deep-learning libraries call convolution)."""
    kernel = np.asarray(kernel, float)
    require(kernel.ndim == 2 and kernel.shape[0] == kernel.shape[1], "the filter must be a square grid")
    k = kernel.shape[0]
    image = np.asarray(image, float)
    out = np.zeros((image.shape[0] - k + 1, image.shape[1] - k + 1))
    for r, c, w in windows(image, k):
        out[r, c] = float((w * kernel).sum())
    return out


def relu(x) -> np.ndarray:
    return np.maximum(np.asarray(x, float), 0.0)


def max_pool(x, size: int = 2, stride: int = 1) -> np.ndarray:
    """Max over `size` x `size` patches. Stride 1 keeps a 3x3 map at 2x2, as in the worked example."""
    x = np.asarray(x, float)
    rows = (x.shape[0] - size) // stride + 1
    cols = (x.shape[1] - size) // stride + 1
    require(rows >= 1 and cols >= 1, f"the map is smaller than the {size}x{size} pooling window")
    out = np.zeros((rows, cols))
    for r in range(rows):
        for c in range(cols):
            out[r, c] = x[r * stride:r * stride + size, c * stride:c * stride + size].max()
    return out


def ocr_pass(image, filters: dict[str, np.ndarray]) -> dict:
    """The whole pass: each filter's map, ReLU, pooling; flatten; one score per filter's class; softmax."""
    maps = {name: convolve(image, f) for name, f in filters.items()}
    activated = {name: relu(m) for name, m in maps.items()}
    pooled = {name: max_pool(a) for name, a in activated.items()}
    features = np.concatenate([p.ravel() for p in pooled.values()])
    # The read-out layer: each class sums the features of its own filter.
    scores = np.array([p.sum() for p in pooled.values()])
    return {"conv": maps, "relu": activated, "pool": pooled, "features": features,
            "scores": scores, "probs": softmax(scores).numpy(), "classes": list(filters)}
