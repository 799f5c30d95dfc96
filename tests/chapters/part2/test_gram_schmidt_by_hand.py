"""The self-checks of chapters/part2/gram-schmidt-by-hand
(lib/chapters/part2/gram_schmidt_by_hand/checks.py): each accepts the right answer and names the typical
mistakes, without giving the answer away."""

import numpy as np


def test_part2_gram_schmidt_checks():
    from lib.chapters.part2.gram_schmidt_by_hand import checks as gs
    assert gs.prince_royalty(1.5 / np.sqrt(2)) and gs.prince_royalty(1.06), "a pencil estimate from e2 to 3 decimals"
    assert "e1" in gs.prince_royalty(1.0).message
    assert "length greater than 1" in gs.prince_royalty(1.5).message
    assert gs.overlap_before(2.0) and gs.overlap_before(2)
    assert "king - man" in gs.overlap_before(0.0).message
    assert "along e2" in gs.overlap_before(np.sqrt(2)).message
    assert "too low" in gs.overlap_before(1).message
