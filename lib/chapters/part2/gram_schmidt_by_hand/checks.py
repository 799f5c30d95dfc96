"""Self-checks for the chapter "Gram-Schmidt by hand"."""
from __future__ import annotations

import numpy as np

from lib.analysis import maps
from lib.analysis.maps import direction
from lib.content.worked_examples import GS_WORDS
from lib.exercises import Feedback, as_number, check_number, check_whole_number
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck

PRINCE = (2.0, 1.0, 0.5)


def _words() -> dict[str, np.ndarray]:
    return {w: np.array(x) for w, x in GS_WORDS.items()}


def _axes():
    v = _words()
    return maps.gram_schmidt([direction(v, ["king"], ["queen"]), direction(v, ["king"], ["man"])])


# ------------------------------------------------------------------ predict: by pencil, from the printed axes
def _prince_values() -> Values:
    e1, e2 = _axes()
    return Values(float(np.dot(PRINCE, e2)), hints={"e1": float(np.dot(PRINCE, e1)),
                                                     "raw": float(np.dot(PRINCE, direction(_words(), ["king"], ["man"])))})


# Worked out by hand from e2 as the page prints it (to three decimals, hence the tolerance).
PRINCE_ROYALTY = site_check(__name__, "prince_royalty", rule="number", compute="princeRoyalty", values=_prince_values,
                            what="The royalty coordinate", tol=5e-3, args={"words": GS_WORDS, "prince": PRINCE}, texts={
    "e1": "that is the coordinate on e1 (gender); project on e2.",
    "raw": "that is the dot product with king - man itself, which has length greater than 1; project on the unit "
           "axis e2."})


def prince_royalty(answer) -> Feedback:
    """Predict: the new word's coordinate on the royalty axis e2, worked out by hand."""
    return PRINCE_ROYALTY.judge(answer)


OVERLAP_WHAT = "The component along e1"


def _overlaps() -> tuple[float, dict[str, float]]:
    """king - woman's component along e1, and the known wrong values by their texts' keys."""
    v = _words()
    e1, e2 = _axes()
    return (float(direction(v, ["king"], ["woman"]) @ e1),
            {"man": float(direction(v, ["king"], ["man"]) @ e1), "e2": float(direction(v, ["king"], ["woman"]) @ e2)})


def _overlap_examples() -> Values:
    """Answers the tests type (an open check ships no values): the right one, and one per text."""
    expected, wrong = _overlaps()
    return Values(round(expected), hints={**wrong, "off/": round(expected) + 3})


# On this toy's coordinates the component is a whole number, so the check asks for it exactly (a
# whole-number check); a known wrong value, whole or not, still gets its text.
OVERLAP_BEFORE = site_check(__name__, "overlap_before", rule="open", reads="number", compute="overlapBefore",
                            values=_overlap_examples, args={"words": GS_WORDS, "what": OVERLAP_WHAT}, texts={
    "man": "that is king - man's component, which the page printed; take king - woman.",
    "e2": "that is the component along e2; measure along e1 (gender)."})


def overlap_before(answer) -> Feedback:
    """Predict: with royalty as king - woman, its component along e1 before Gram-Schmidt."""
    expected, wrong = _overlaps()
    fb = check_whole_number(answer, round(expected), what=OVERLAP_WHAT)
    value = as_number(answer)
    if fb or value is None:
        return fb
    return next((OVERLAP_BEFORE.say(key) for key, w in wrong.items() if abs(value - w) < 1e-3), fb)


# ------------------------------------------------------------------ write: Gram-Schmidt
def _gs(directions, *, onto="axes", normalise=True, only_first=False):
    """Gram-Schmidt with switches, each switch one typical mistake (the defaults are right)."""
    ds = [np.asarray(d, dtype=float) for d in directions]
    axes = []
    for d in ds:
        v = d.copy()
        earlier = {"axes": axes, "raw": ds[:len(axes)],
                   "unit raw": [e / np.linalg.norm(e) for e in ds[:len(axes)]], "none": []}[onto]
        for e in (earlier[:1] if only_first else earlier):
            v = v - (v @ e) * e
        axes.append(v / np.linalg.norm(v) if normalise else v)
    return np.array(axes)


def _overlap(case, got) -> str | None:
    g = np.asarray(got, dtype=float)
    lengths = np.linalg.norm(g, axis=1)
    for i, n in enumerate(lengths):
        if abs(n - 1) > 1e-6:
            return f"axis {i + 1} has length {n:.3g}; every axis must have length 1."
    dots = g @ g.T - np.eye(len(g))
    i, j = np.unravel_index(int(np.argmax(np.abs(dots))), dots.shape)
    if abs(dots[i, j]) > 1e-6:
        a, b = sorted((i, j))
        return f"axis {b + 1} still overlaps axis {a + 1} (their dot product is {dots[i, j]:.3g}): the axes " \
               f"must be perpendicular."
    first = np.asarray(case.args[0], dtype=float)[0]
    if g[0] @ first <= 0:
        return "axis 1 does not point along direction 1: it is direction 1 itself, made length 1."
    return None


def _gs_cases() -> list[Case]:
    v = {w: np.array(x) for w, x in GS_WORDS.items()}
    rng = np.random.default_rng(8)
    nearly = rng.normal(size=6)
    return [Case((np.array([direction(v, ["king"], ["queen"]), direction(v, ["king"], ["man"])]),),
                 "the chapter's two directions, king - queen and king - man"),
            Case((rng.normal(size=(3, 5)) * [[3.0], [0.5], [2.0]],), "3 random directions in 5 dimensions"),
            Case((rng.normal(size=(4, 40)),), "4 random directions in 40 dimensions"),
            Case((np.array([[0.0, 3.0, 4.0]]),), "a single direction"),
            Case((np.array([nearly, nearly + 0.05 * rng.normal(size=6), rng.normal(size=6)]),),
                 "3 directions, the first two almost parallel")]


gram_schmidt = WriteCheck(
    name="gram_schmidt",
    cases=_gs_cases,
    reference=lambda directions: maps.gram_schmidt(list(directions)),
    rtol=1e-6, atol=1e-9,
    mistakes=(
        Mistake(lambda d: _gs(d, normalise=False),
                "the axes are perpendicular but not of length 1: divide each by its length."),
        Mistake(lambda d: _gs(d, onto="none"),
                "each axis is its direction made length 1, but nothing was subtracted: axis 2 still overlaps "
                "axis 1. Take away from each direction its parts along the earlier axes."),
        Mistake(lambda d: _gs(d, onto="raw"),
                "the parts taken away were measured along the raw directions, which are not of length 1: "
                "measure them along the unit axes."),
        Mistake(lambda d: _gs(d, onto="unit raw"),
                "each direction lost its parts along the earlier directions, not along the earlier axes: the "
                "third axis still overlaps the second."),
        Mistake(lambda d: _gs(d, only_first=True),
                "each direction lost only its part along axis 1: take away its parts along every earlier axis."),
    ),
    invariants=(_overlap,),
)
