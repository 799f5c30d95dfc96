import math

import pytest
import torch

from lib.errors import CourseError
from lib.model.readout import entropy_bits, reshape, results_page, sample, softmax, top1_margin, truncation_mask

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
