"""The calling game's epithets on the concept plane, on every shipped training run (the chapter's section
"What another training run changes")."""
from __future__ import annotations

import functools

import numpy as np

from lib.analysis.over_runs import each_run
from lib.shipped.behaviour import EPITHET_CORNERS, epithet_plane

EPITHETS = tuple(EPITHET_CORNERS)


def _corners(lm) -> dict:
    _, corners = epithet_plane(lm)
    at = {w: [float(c[0]), float(c[1])] for w, c in corners.items()}
    right = [w for w, (sx, sy) in EPITHET_CORNERS.items() if np.sign(at[w][0]) == sx and np.sign(at[w][1]) == sy]
    return {"at": at, "in_corner": right}


@functools.lru_cache(maxsize=1)
def epithet_corners() -> dict[str, dict]:
    """Per run (the run in use first): each epithet's place on the plane (Paolo - Pietro, peer - subordinate
    epithets), centred on the four, and which epithets sit in their role's corner."""
    return each_run("calling-game", _corners, keep="epithet-corners")
