"""The self-checks of chapters/part2/gram-schmidt-by-hand
(lib/chapters/part2/gram_schmidt_by_hand/checks.py): each accepts the right answer and names the typical
mistakes, without giving the answer away."""

import numpy as np

from lib.chapters.part2.gram_schmidt_by_hand import checks as gram_schmidt_by_hand


def test_part2_gram_schmidt_checks():
    from lib.chapters.part2.gram_schmidt_by_hand import checks as gs
    assert gs.prince_royalty(1.5 / np.sqrt(2)) and gs.prince_royalty(1.06), "a pencil estimate from e2 to 3 decimals"
    assert "e1" in gs.prince_royalty(1.0).message
    assert "length greater than 1" in gs.prince_royalty(1.5).message
    assert gs.overlap_before(2.0) and gs.overlap_before(2)
    assert "king - man" in gs.overlap_before(0.0).message
    assert "along e2" in gs.overlap_before(np.sqrt(2)).message
    assert "too low" in gs.overlap_before(1).message


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def gram_schmidt(directions):
    axes = []
    for d in directions:
        v = np.array(d, dtype=float)
        for e in axes:
            v = v - (v @ e) * e
        axes.append(v / np.linalg.norm(v))
    return np.array(axes)


WRITE_CHECKS = {
    "gram_schmidt": (gram_schmidt_by_hand.gram_schmidt, gram_schmidt, [
        (lambda d: np.array([np.asarray(v) / np.linalg.norm(v) for v in d]), "nothing was subtracted"),
        (lambda d: gram_schmidt(d) * 2.0, "must have length 1"),
    ]),
}
