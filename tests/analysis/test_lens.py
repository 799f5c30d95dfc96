"""The logit lens (lib.analysis.lens): its view ends at the model's own output, at any position."""
import math

import pytest

from lib.analysis.lens import lens_view
from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.errors import CourseError
from lib.model.readout import prompt_logits, softmax


def test_lens_view_ends_at_the_model_output_at_any_position(lm):
    v = lens_view(lm, CONFIDENT)
    assert v.track == "Tarso" and v.track_ranks[-1] == 1 and v.position == 3
    final = softmax(prompt_logits(lm, CONFIDENT))
    assert math.isclose(v.track_probs[-1], float(final[lm.vocab.id("Tarso")]), rel_tol=1e-5)
    assert v.stages[0] == "embed" and len(v.top) == len(v.stages)
    assert lens_view(lm, CONFIDENT, "Cefa").track == "Cefa"
    earlier = lens_view(lm, CONFIDENT, position=2)
    shorter = lens_view(lm, UNCERTAIN)
    assert earlier.position == 2 and earlier.track_probs == pytest.approx(shorter.track_probs), \
        "position 2 of a prompt reads what the prompt cut there reads last"
    with pytest.raises(CourseError, match="unknown token"):
        lens_view(lm, CONFIDENT, "Tars")
