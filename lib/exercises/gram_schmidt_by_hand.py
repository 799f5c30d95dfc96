"""Self-checks for the chapter "Gram-Schmidt by hand"."""
from __future__ import annotations

import numpy as np

from lib.analysis.maps import direction, gram_schmidt
from lib.content.worked_examples import GS_WORDS
from lib.exercises import Feedback, check_number

PRINCE = (2.0, 1.0, 0.5)


def _axes():
    v = {w: np.array(x) for w, x in GS_WORDS.items()}
    return gram_schmidt([direction(v, ["king"], ["queen"]), direction(v, ["king"], ["man"])])


def prince_royalty(answer) -> Feedback:
    """Exercise 1: the new word's coordinate on the royalty axis e2."""
    e1, e2 = _axes()
    expected = float(np.dot(PRINCE, e2))
    return check_number(answer, expected, tol=1e-3, what="The royalty coordinate",
                        hints={float(np.dot(PRINCE, e1)): "that is the coordinate on e1 (gender); project on e2."})


def overlap_before(answer) -> Feedback:
    """Exercise 2: with royalty as king - woman, its component along e1 before Gram-Schmidt."""
    v = {w: np.array(x) for w, x in GS_WORDS.items()}
    e1 = _axes()[0]
    expected = float(direction(v, ["king"], ["woman"]) @ e1)
    return check_number(answer, expected, tol=1e-6, what="The component along e1")
