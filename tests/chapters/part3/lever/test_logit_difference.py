"""A word's lead over its rival epithet, by stage and component (lib/chapters/part3/lever/logit_difference.py)."""
import math

import pytest

from lib.errors import CourseError


def test_the_logit_difference_adds_up_stage_by_stage(lm):
    from lib.chapters.part3.lever.logit_difference import difference_view, rival_epithet, summarise

    assert [rival_epithet(w) for w in ("Tarso", "vice", "Cefa", "capo")] == ["vice", "Tarso", "capo", "Cefa"]
    with pytest.raises(CourseError, match="not an epithet"):
        rival_epithet("Paolo")
    v = difference_view(lm, "<BOS> Pietro chiama Paolo", "Tarso")
    logits = lm.model(lm.encode(v.prompt))[-1].double()
    final = float(logits[lm.vocab.id("Tarso")] - logits[lm.vocab.id("vice")])
    assert math.isclose(v.final, final, abs_tol=1e-4), "the lens's last stage is the model's output"
    assert math.isclose(sum(v.pushes.values()), final, abs_tol=1e-4), "without LayerNorm the pushes add up"
    # Each stage's difference is the previous one plus what that stage wrote.
    assert math.isclose(v.differences[2] - v.differences[1], v.pushes["blocks.0.mlp"], abs_tol=1e-4)
    assert v.tops[-1] == "Tarso" and v.probs[-1] > 0.99
    s = summarise([v, difference_view(lm, "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo", "vice")])
    assert s.n == 2 and s.on_top[-1] == 2 and s.ahead[-1] == 2 and sum(s.largest.values()) == 2
    with pytest.raises(CourseError):
        summarise([])
