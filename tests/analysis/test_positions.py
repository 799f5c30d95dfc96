"""Order and positions (lib.analysis.positions): without positions one layer sees a bag of tokens and the
causal mask leaks order to the next; shuffles keep the ends; learned positions keep the rhythm of a turn."""
import numpy as np
import pytest

from lib.analysis.positions import lag_similarity, offset_preference, order_test, shuffle_middle, without_positions
from lib.content.prompt_sets import prompt_set
from lib.errors import CourseError


def test_without_positions_one_layer_sees_a_bag_and_the_causal_mask_leaks_order(lm):
    sequences = [lm.encode(p.text) for p in prompt_set("epithet-later-turn", 10, max_tokens=48)]
    flat = without_positions(lm)
    blind = order_test(flat.model, sequences, shuffles=3)
    assert blind.shuffles > 0 and blind.largest["blocks.0.attn_out"] < 1e-5
    assert blind.largest["blocks.1.attn_out"] > 0.1, "layer 1 reads keys that saw different prefixes"
    assert order_test(lm.model, sequences, shuffles=3).largest["blocks.0.attn_out"] > 0.1
    assert float(lm.model.W_pos.abs().max()) > 0, "the shipped model keeps its positions"
    from lib.content.worked_examples import cat_sat
    ex = cat_sat()
    swap = order_test(ex.model, [ex.tokens], shuffles=4, stages=("logits",), keep_first=False)
    assert swap.largest["logits"] == 0.0
    with pytest.raises(CourseError, match="two tokens"):
        order_test(ex.model, [ex.tokens[:2]], keep_first=True)

def test_shuffling_keeps_the_ends_and_the_tokens():
    import random
    ids = list(range(10))
    out = shuffle_middle(ids, random.Random(1))
    assert out[0] == 0 and out[-1] == 9 and sorted(out) == ids
    assert sorted(shuffle_middle(ids, random.Random(1), keep_first=False)) == ids

def test_learned_positions_keep_the_rhythm_of_a_turn(lm):
    lags = lag_similarity(lm.model, 10)
    assert int(np.argmax(lags)) + 1 == 4
    pref = offset_preference(lm.model, 0, 3)
    assert pref.shape == (11,) and set(np.argsort(-pref[1:])[:2] + 1) == {1, 5}
    with pytest.raises(CourseError, match="lags"):
        lag_similarity(lm.model, 100)
