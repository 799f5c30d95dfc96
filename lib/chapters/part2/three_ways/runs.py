"""The calling game's epithets on the concept plane, on a training run (the chapter's section "What another
training run changes"): measured on every run of the panel by the chapter's claim about the recipe."""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.shipped.behaviour import EPITHET_CORNERS, epithet_plane

EPITHETS = tuple(EPITHET_CORNERS)


def _corners(lm) -> dict:
    _, corners = epithet_plane(lm)
    at = {w: [float(c[0]), float(c[1])] for w, c in corners.items()}
    right = [w for w, (sx, sy) in EPITHET_CORNERS.items() if np.sign(at[w][0]) == sx and np.sign(at[w][1]) == sy]
    return {"at": at, "in_corner": right}


@functools.lru_cache(maxsize=1)
def corners() -> dict:
    """On the run in use: each epithet's place on the plane (Paolo - Pietro, peer - subordinate epithets),
    centred on the four, and which epithets sit in their role's corner."""
    return _corners(lib.load("calling-game"))
