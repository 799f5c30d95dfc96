"""Ablation and attention counted over labelled prompt sets (lib.analysis.head_survey): which head a set
needs, where each head looks, the switch groups, and that training made the heads differ."""
import numpy as np
import pytest
import torch

from lib.analysis.ablation import all_heads
from lib.analysis.head_survey import (HOLDS_AT, Switch, ablation_survey, attention_survey, head_disagreement, head_pairs,
                                      single_heads, untrained_twin, whole_blocks)
from lib.chapters.part1.circuits.circuits import ov_copies
from lib.content.corpora.calling_game import PLAYERS
from lib.content.prompt_sets import epithet_sets, prompt_set
from lib.errors import CourseError

NUMBERS = tuple(p for p in PLAYERS if p not in ("Pietro", "Paolo"))


def test_one_head_reads_the_caller_on_later_calls_and_copies_the_next_caller(lm):
    sets = epithet_sets(40, max_tokens=48)
    cefa = ablation_survey(lm, sets["Cefa"])
    assert cefa.held() == 40 and cefa.most_damaging() == "L0H3" and cefa.lost("L0H3") == 40
    assert cefa.replacements("L0H3") == {"capo": 40}
    for subordinate in ("capo", "vice"):
        assert ablation_survey(lm, sets[subordinate]).lost("L0H3") == 0
    copying = ablation_survey(lm, prompt_set("next-caller", 40, max_tokens=48, target=NUMBERS))
    assert copying.most_damaging() == "L0H3" and copying.lost("L0H3") >= 30
    looks = attention_survey(lm, prompt_set("next-caller", 40, max_tokens=48, target=NUMBERS), ["the callee"])
    assert looks[(0, 3)]["the callee"].largest >= 36 and looks[(0, 3)]["the callee"].present == 40
    assert sum(ov_copies(lm.model, 0, 3, [lm.vocab.id(p) for p in NUMBERS])) == len(NUMBERS)
    # On the opening call no single zeroed head is needed (what reads the caller there is patching's
    # question: lib.claims, ablation.opening-reads-caller).
    opening = ablation_survey(lm, prompt_set("epithet-first-turn"))
    assert opening.n == 1 and all(opening.lost(name) == 0 for name in opening.off)

def test_switch_groups_and_survey_messages(lm):
    assert len(single_heads(lm.model)) == 8 and len(head_pairs(lm.model)) == 28
    assert set(whole_blocks(lm.model)) == {"attention 0", "MLP 0", "attention 1", "MLP 1"}
    group = prompt_set("number-call", 6)
    survey = ablation_survey(lm, group, {"all": Switch(heads=tuple(all_heads(lm.model))), "none": Switch()})
    assert np.allclose(survey.off["none"], survey.intact) and survey.lost("none") == 0
    assert 0 <= HOLDS_AT <= 1
    with pytest.raises(CourseError, match="empty"):
        ablation_survey(lm, [])
    with pytest.raises(CourseError, match="empty"):
        attention_survey(lm, [], ["the callee"])

def test_training_made_the_heads_differ(lm):
    group = prompt_set("epithet-later-turn", 20, max_tokens=48)
    trained, fresh = head_disagreement(lm, group, 0), head_disagreement(untrained_twin(lm), group, 0)
    assert trained > 0.3 > 0.01 > fresh
    twin = untrained_twin(lm).model
    assert twin.W_E.shape == lm.model.W_E.shape and not torch.equal(twin.W_E, lm.model.W_E)
    assert torch.equal(untrained_twin(lm, seed=3).model.W_E, untrained_twin(lm, seed=3).model.W_E), "seeded"
