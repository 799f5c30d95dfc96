"""The QK and OV circuits and the heads' habits (lib/chapters/part1/circuits/circuits.py)."""
import numpy as np
import pytest

from lib.chapters.part1.circuits.circuits import head_habits, ov_circuit, qk_circuit, token_ov
from lib.content.prompt_sets import prompt_set
from lib.errors import CourseError


def test_circuits_have_the_rank_of_a_head(lm):
    for M in (qk_circuit(lm.model, 0, 1), ov_circuit(lm.model, 1, 2)):
        s = np.linalg.svd(M, compute_uv=False)
        assert int((s > s[0] * 1e-5).sum()) == lm.model.cfg.d_head
    assert token_ov(lm.model, 0, 0).shape == (28, 28)
    habits = head_habits(lm)
    assert habits.positions == 160 and all(abs(sum(s.values()) - 1) < 1e-6 for s in habits.shares.values())
    assert max(habits.shares, key=lambda hd: habits.shares[hd]["where the caller was called"]) == (0, 3)
    with pytest.raises(CourseError, match="later-turn epithet prompts"):
        head_habits(lm, prompt_set("next-caller", 3))
