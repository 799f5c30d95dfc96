"""Part 3's library: the trajectory, the conveyor belt, the signs of a weak search, the cost of the search."""
import math

import numpy as np
import pytest
import torch

from lib.content.conveyor import always, current_turn, referee, run_belt
from lib.content.corpora.calling_game import check_round
from lib.errors import CourseError
from lib.analysis.scale import search_cost
from lib.analysis.signs import random_prompts, read_signs, rules_say
from lib.model.store import load
from lib.analysis.trajectory import residual_trajectory


@pytest.fixture(scope="module")
def lm():
    return load("calling-game")


def test_pushes_add_up_to_the_end_of_the_path(lm):
    t = residual_trajectory(lm, "<BOS> Pietro chiama Paolo")
    assert t.stages == ["embed", "blocks.0.attn", "blocks.0.mlp", "blocks.1.attn", "blocks.1.mlp"]
    assert math.isclose(sum(t.pushes.values()), t.coords[-1, 0], abs_tol=1e-5)
    assert 0 < t.spread <= t.best_spread <= 1 + 1e-12
    assert t.largest_push()[0] == "blocks.1.mlp"
    assert t.coords[-1, 0] > t.coords[0, 0], "the path moves toward Tarso"


def test_ablating_heads_changes_the_path_only_from_their_layer(lm):
    base = residual_trajectory(lm, "<BOS> Pietro chiama Paolo")
    off = residual_trajectory(lm, "<BOS> Pietro chiama Paolo", ablate=[(1, h) for h in range(4)])
    assert np.allclose(base.coords[:3], off.coords[:3])
    assert np.allclose(off.coords[3], off.coords[2]), "with every head of block 1 off, its attention writes nothing"


def test_referee_rounds_obey_the_rules_and_tools_write_after_every_request(lm):
    belt = run_belt(lm, "<BOS>", referee(seed=0))
    assert check_round(belt.words()) == (True, "valid")
    words = belt.words()
    for i, t in enumerate(belt.tokens):
        if t.writer == "tool":
            assert words[i - 1] == "chiama" and belt.tokens[i - 1].writer == "model"
    assert belt.tool_calls == sum(t.writer == "tool" for t in belt.tokens) == 8


def test_a_tools_answer_is_just_more_text(lm):
    """The model's next-word page after a belt equals its page after the same words typed as a prompt."""
    belt = run_belt(lm, "<BOS>", always("Paolo"), max_new_tokens=3)   # counts the model's tokens only
    assert belt.words() == ["<BOS>", "Pietro", "chiama", "Paolo", "Tarso"]
    assert [t.writer for t in belt.tokens] == ["prompt", "model", "model", "tool", "model"]

    def page(prompt):
        return torch.softmax(lm.model(lm.encode(prompt))[-1].double(), -1)

    assert math.isclose(belt.tokens[3].prob, float(page("<BOS> Pietro chiama")[lm.vocab.id("Paolo")]), rel_tol=1e-5)
    assert math.isclose(belt.tokens[4].prob, float(page("<BOS> Pietro chiama Paolo")[lm.vocab.id("Tarso")]),
                        rel_tol=1e-5)


def test_bad_tools_get_a_clear_message(lm):
    with pytest.raises(CourseError, match="cannot read"):
        run_belt(lm, "<BOS>", always("Giovanni"))
    with pytest.raises(CourseError, match="trigger"):
        run_belt(lm, "<BOS>", always("1"), trigger="calls")
    with pytest.raises(CourseError, match="no call yet"):
        current_turn(["<BOS>"])


def test_the_belt_stops_at_the_context(lm):
    belt = run_belt(lm, "<BOS>", referee(1), max_new_tokens=1000)
    assert len(belt.tokens) <= lm.model.cfg.n_ctx


def test_signs_set_the_page_beside_the_rules(lm):
    s = read_signs(lm, "<BOS> Pietro chiama")
    assert s.on_distribution and s.top_allowed and math.isclose(s.entropy_bits, 3.17, abs_tol=0.05)
    bad = read_signs(lm, "<BOS> Pietro chiama Pietro")
    assert not bad.on_distribution and "opening call cannot be wrong" in bad.why_impossible
    assert rules_say("<BOS> Pietro chiama Paolo") == ({"Tarso": 1.0}, "")
    prompts = random_prompts(lm, 20, seed=3)
    assert prompts == random_prompts(lm, 20, seed=3) and all(p.startswith("<BOS> ") for p in prompts)


def test_search_cost_counts_and_checks():
    c = search_cost(5000, 64, repeats=1)
    assert c.multiply_adds == 320000 and c.dictionary_bytes == 1280000 and c.seconds > 0
    with pytest.raises(CourseError, match="vocab_size"):
        search_cost(0, 64)
    with pytest.raises(CourseError, match="d_model"):
        search_cost(10, 2.5)
