"""Analogies (lib.analysis.maps.analogy): the offset's answer, whether the inputs were excluded, and the score
against the baseline of a's nearest neighbour."""
import numpy as np
import pytest

from lib.analysis.maps import analogy

# The toy of note 2, appendix A.
TOY = {"king": np.array([2.0, 1, 0]), "queen": np.array([2.0, -1, 0]),
       "man": np.array([1.0, 1, 1]), "woman": np.array([1.0, -1, 1])}


def test_analogy_says_whether_inputs_were_excluded():
    excl = analogy(TOY, "king", "man", "woman")
    assert excl.best == "queen" and excl.excluded == ("king", "man", "woman")
    assert excl.ranked[0][1] == pytest.approx(1.0)
    incl = analogy(TOY, "king", "man", "woman", exclude_inputs=False)
    assert incl.excluded == () and {w for w, _ in incl.ranked} == set(TOY)
    assert "excluded" in excl.describe() and "not excluded" in incl.describe()

def test_analogy_scores_compare_the_offset_with_the_nearest_neighbour_of_a():
    from lib.analysis.maps import score_analogies, score_analogy

    toy = {"king": np.array([2.0, 1, 0]), "queen": np.array([2.0, -1, 0]),
           "man": np.array([1.0, 1, 1]), "woman": np.array([1.0, -1, 1]), "crown": np.array([2.1, 0.9, 0])}
    s = score_analogy(toy, "king", "man", "woman", "queen", "gender")
    assert s.offset_right and s.offset_rank == 1 and s.parallel == pytest.approx(1.0)
    assert s.baseline_best == "crown" and not s.baseline_right      # king's nearest word is not queen here
    assert len(score_analogies(toy, {"g": [("king", "man", "woman", "queen")] * 2})) == 2
