"""The notes' printed arithmetic against the computation (lib.content.note_slips): each slip found where it is."""
import numpy as np
import pytest

from lib.content.note_slips import NOTE_TEN_PROBS, cat_sat_steps, ten_column_readout


def test_the_notes_slips_are_found_where_they_are():
    steps = {c.step: c for c in cat_sat_steps()}
    assert steps["V"].follows and steps["scaled"].follows
    assert not steps["QK"].follows and not steps["pattern"].follows and not steps["Q"].follows
    assert round(float(steps["QK"].from_note[1, 0]), 3) == 0.123
    assert np.allclose(steps["pattern"].from_note[2], (0.286, 0.315, 0.399), atol=5e-4)
    assert steps["pattern"].computed[2, 0] > steps["pattern"].computed[2, 1], "computed, sat takes more from the"
    assert steps["pattern"].printed[2, 0] < steps["pattern"].printed[2, 1], "printed, more from cat"
    ten = ten_column_readout()
    assert ten.printed_sum == pytest.approx(1.0) and ten.gap < 0.006 and len(NOTE_TEN_PROBS) == 10
