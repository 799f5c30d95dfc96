import math

import pytest
import torch

from lib.errors import CourseError
from lib.content.prompt_sets import prompt_set
from lib.model.readout import (entropy_bits, last_logits, prompt_logits, reshape, results_page, sample, softmax, top1_margin,
                               truncation_mask)

LOGITS = torch.tensor([2.0, 1.0, 0.5, -1.0])


def test_temperature_keeps_the_order_and_changes_the_sharpness():
    cold, warm = softmax(LOGITS, 0.5), softmax(LOGITS, 2.0)
    assert torch.equal(cold.argsort(), warm.argsort())
    assert cold[0] > softmax(LOGITS)[0] > warm[0]
    assert math.isclose(float(cold.sum()), 1.0)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "hot"])
def test_bad_temperatures_are_refused(bad):
    with pytest.raises(CourseError, match="temperature"):
        softmax(LOGITS, bad)


def test_top_k_and_top_p_truncate_as_documented():
    probs = softmax(LOGITS)
    assert truncation_mask(probs, top_k=2).tolist() == [True, True, False, False]
    # top-p keeps the smallest set of best tokens whose mass reaches p
    p0 = float(probs[0])
    assert truncation_mask(probs, top_p=p0 - 0.01).tolist() == [True, False, False, False]
    assert truncation_mask(probs, top_p=p0 + 0.01).tolist() == [True, True, False, False]
    assert truncation_mask(probs, top_p=1.0).all()
    # top-p 1 is off, even for a tail too small for the running sum to tell from the rounding of 1
    tiny = torch.tensor([1 - 3e-13, 1e-13, 1e-13, 1e-13], dtype=torch.float64)
    assert truncation_mask(tiny, top_p=1.0).all() and truncation_mask(tiny, top_p=0.5).tolist() == [True, False, False, False]
    kept = reshape(LOGITS, top_k=2)
    assert math.isclose(float(kept.sum()), 1.0) and kept[2] == 0


@pytest.mark.parametrize("kwargs,match", [({"top_k": 0}, "top-k"), ({"top_p": 0}, "top-p"),
                                          ({"top_p": 1.5}, "top-p"), ({"top_k": 1.5}, "top-k")])
def test_bad_truncation_is_refused(kwargs, match):
    with pytest.raises(CourseError, match=match):
        reshape(LOGITS, **kwargs)


def test_sampling_is_seeded_and_respects_truncation():
    draws = [sample(LOGITS, seed=s) for s in range(200)]
    assert draws == [sample(LOGITS, seed=s) for s in range(200)]
    assert len(set(draws)) > 1
    assert set(sample(LOGITS, top_k=1, seed=s) for s in range(50)) == {0}


def test_results_page_is_ranked_and_readable_signs_are_sane():
    page = results_page(LOGITS, ["a", "b", "c", "d"])
    assert [c.token for c in page] == ["a", "b", "c", "d"]
    assert math.isclose(sum(c.prob for c in page), 1.0)
    assert math.isclose(entropy_bits([0.25] * 4), 2.0)
    assert math.isclose(top1_margin([0.7, 0.2, 0.1]), 0.5)


def test_top_p_is_judged_after_top_k_shares_the_probability_out():
    """Hugging Face's order: the top-k survivors are renormalised before the top-p cut."""
    probs = torch.tensor([0.30, 0.25, 0.20, 0.15, 0.10])
    # Among the first four (mass 0.9) the shares are 0.333, 0.278, 0.222, 0.167: the first two
    # reach 0.5 together. Judged on the raw probabilities (0.30 + 0.25 = 0.55) the same two would
    # also do, so take p = 0.58: raw needs three tokens (0.75), shared-out needs two (0.611).
    assert truncation_mask(probs, top_k=4, top_p=0.58).tolist() == [True, True, False, False, False]
    assert truncation_mask(probs, top_p=0.58).tolist() == [True, True, True, False, False]


def test_the_prompt_named_in_the_sampling_bug_keeps_three_tokens(lm):
    from lib.model.readout import prompt_logits

    final = reshape(prompt_logits(lm, "<BOS> Pietro chiama"), top_k=5, top_p=0.5)
    assert int((final > 0).sum()) == 3


@pytest.mark.parametrize("top_p", [1e-12, 0.001])
def test_the_best_token_always_survives_top_p(top_p):
    final = reshape(LOGITS, top_p=top_p)
    assert final.tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("top_p", [1e-300, 1e-320, 9.9e-13])
def test_a_top_p_below_the_running_sums_tolerance_is_refused(top_p):
    with pytest.raises(CourseError, match="below 1e-12"):
        reshape(LOGITS, top_p=top_p)


@pytest.mark.parametrize("bad", [1e-320, 1e-7, True, None, [1.0]])
def test_temperatures_that_would_break_the_softmax_are_refused(bad):
    with pytest.raises(CourseError, match="temperature"):
        softmax(LOGITS, bad)


def test_the_smallest_temperature_allowed_gives_the_greedy_page():
    from lib.model.readout import MIN_TEMPERATURE

    assert softmax(LOGITS, MIN_TEMPERATURE).tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("bad", [-1, 2**63, 1.5, "7", True, float("nan")])
def test_bad_seeds_are_refused(bad):
    with pytest.raises(CourseError, match="seed"):
        sample(LOGITS, seed=bad)


@pytest.mark.parametrize("bad", [True, float("nan"), float("inf"), "half", [0.5]])
def test_bad_top_p_values_are_refused(bad):
    with pytest.raises(CourseError, match="top-p"):
        reshape(LOGITS, top_p=bad)


def test_batched_logits_equal_one_prompt_at_a_time(lm):
    prompts = [p.text for p in prompt_set("next-caller", 12, max_tokens=48)] + ["<BOS> Pietro chiama Paolo"]
    batch = last_logits(lm, prompts, ablate=[(0, 3)], ablate_mlps=[1])
    for row, prompt in zip(batch, prompts):
        assert float((row - prompt_logits(lm, prompt, ablate=[(0, 3)], ablate_mlps=[1])).abs().max()) < 1e-4
    with pytest.raises(CourseError, match="at least one prompt"):
        last_logits(lm, [])
    with pytest.raises(CourseError, match="unknown token"):
        last_logits(lm, ["<BOS> Pietro chiama Pablo"])
