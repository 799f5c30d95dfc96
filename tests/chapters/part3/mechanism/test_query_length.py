"""The query's length, the bias and a final LayerNorm (lib/chapters/part3/mechanism/query_length.py)."""
import math

import pytest

from lib.errors import CourseError


def test_without_the_bias_scaling_the_query_never_changes_the_winner(lm):
    from lib.chapters.part3.mechanism.query_length import scaled_logits, temperature_vs_length, tie_scale, winner_flips, winners
    from lib.content.prompt_sets import prompt_set

    prompts = [p.text for p in prompt_set("callee-choice", 15, max_tokens=48)]
    assert winner_flips(lm, prompts, bias=False) == 0
    page = winners(lm, "<BOS> Pietro chiama")
    assert len(page.distinct_winners) == 2 and page.flip_scale() is not None, "the bias swaps two near-tied players"
    assert winners(lm, "<BOS> Pietro chiama", bias=False).flip_scale() is None
    first, last = page.distinct_winners
    tie = tie_scale(lm, "<BOS> Pietro chiama", first, last)
    at_tie = scaled_logits(lm, "<BOS> Pietro chiama", [tie])[0]
    assert math.isclose(at_tie[lm.vocab.id(first)], at_tie[lm.vocab.id(last)], abs_tol=1e-9)
    assert tie < page.flip_scale(), "the sweep sees the swap at its first point past the tie"
    with_bias, without = temperature_vs_length(lm, "<BOS> Pietro chiama", 0.25)
    assert without < 1e-12 < with_bias
    with pytest.raises(CourseError, match="temperature"):
        temperature_vs_length(lm, "<BOS> Pietro chiama", 0)

def test_a_final_layernorm_squeezes_the_query_length_into_a_band(hand_wired):
    from lib.chapters.part3.mechanism.query_length import length_and_confidence, rank_correlation
    from lib.content.prompt_sets import hand_wired_prompts

    assert math.isclose(rank_correlation([1, 2, 3], [10, 20, 30]), 1.0)
    assert math.isclose(rank_correlation([1, 2, 3], [3, 2, 1]), -1.0)
    hw = hand_wired
    r = length_and_confidence(hw, hand_wired_prompts(60))
    # The band is much narrower than the raw spread, but not a single length: the gain stretches
    # some directions more than others (the chapter reports both correlations, whichever is larger).
    squeezed, raw = (v.max() / v.min() for v in (r.query_lengths, r.raw_lengths))
    assert 1.0 < squeezed < raw / 2
    assert r.top_probs.min() < 0.5 < r.top_probs.max()
    assert all(-1 <= r.correlation_with(name) <= 1 for name in ("alignments", "query_lengths", "raw_lengths"))
    with pytest.raises(CourseError, match="at least two"):
        length_and_confidence(hw, ["<BOS> the"])
