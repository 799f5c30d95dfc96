import itertools
import math

import pytest
import torch

from lib.errors import CourseError
from lib.model import decoding
from lib.model.decoding import (Loop, beam_search, decode, distinct_n, find_loop, min_p_processor,
                                repetition_penalty_processor, token_logprobs)
from lib.model.generate import generate
from lib.model.readout import softmax


# ----------------------------------------------------------------------------- processors
def test_min_p_keeps_the_tokens_within_its_share_of_the_best_at_the_temperature():
    logits = torch.tensor([3.0, 2.0, 0.0, -1.0], dtype=torch.float64)
    for t in (0.5, 1.0, 2.0):
        p = softmax(logits, t)
        kept = ~torch.isneginf(min_p_processor(0.2, t)([], logits))
        assert kept.tolist() == (p >= 0.2 * p.max()).tolist()
        assert torch.equal(min_p_processor(0.2, t)([], logits)[kept], logits[kept])      # survivors untouched
    # a hotter page lets more tokens within the same share of its best
    assert (~torch.isneginf(min_p_processor(0.2, 2.0)([], logits))).sum() > (~torch.isneginf(min_p_processor(0.2, 0.5)([], logits))).sum()
    assert (~torch.isneginf(min_p_processor(1.0)([], logits))).tolist() == [True, False, False, False]


def test_the_repetition_penalty_lowers_every_seen_token_and_only_those():
    logits = torch.tensor([2.0, -1.0, 0.5, 3.0])
    out = repetition_penalty_processor(2.0)([0, 1, 1], logits)
    assert torch.allclose(out, torch.tensor([1.0, -2.0, 0.5, 3.0]), atol=1e-7)
    assert torch.equal(repetition_penalty_processor(1.0)([0, 1, 2, 3], logits), logits)
    assert torch.equal(logits, torch.tensor([2.0, -1.0, 0.5, 3.0]))                     # the input is left alone


@pytest.mark.parametrize("call,match", [
    (lambda: min_p_processor(0), "min-p must be a number above 0 and at most 1"),
    (lambda: min_p_processor(1.5), "min-p"), (lambda: min_p_processor("x"), "min-p"),
    (lambda: repetition_penalty_processor(0.5), "from 1 .no penalty."),
    (lambda: repetition_penalty_processor(float("nan")), "repetition penalty"),
    (lambda: decoding.check_beams(0), "beams must be a whole number from 1 to 64"),
    (lambda: decoding.check_beams(2.0), "beams"),
    (lambda: decoding.check_length_penalty(-1), "length penalty"),
    (lambda: decoding.check_max_new(-1), "max_new_tokens")])
def test_bad_knobs_get_one_line_saying_what_is_allowed(call, match):
    with pytest.raises(CourseError, match=match) as e:
        call()
    assert "\n" not in str(e.value)


# ----------------------------------------------------------------------------- on the calling game
def test_decode_gives_each_row_what_generate_gives_its_prompt_alone(lm):
    eos = lm.vocab.id("<EOS>")
    prompts = [lm.encode("<BOS> Pietro chiama"), lm.encode("<BOS> Pietro chiama")]
    for kw in ({}, {"do_sample": True, "seed": 3, "temperature": 1.5, "min_p": 0.05},
               {"repetition_penalty": 1.5}):
        rows = decode(lm.model, prompts, 20, stop=[eos], **kw)
        alone = generate(lm.model, prompts[0], 20, stop=[eos], **kw)
        assert rows[0].new_tokens == rows[1].new_tokens == alone.new_tokens
        # the kept log-probabilities are the model's own, before any processor
        assert torch.allclose(torch.tensor(rows[0].logprobs, dtype=torch.float64),
                              token_logprobs(lm.model, prompts[0], alone.new_tokens), atol=1e-5)


def test_a_model_with_a_table_of_positions_decodes_prompts_of_one_length_only(lm):
    with pytest.raises(CourseError, match="one length"):
        decode(lm.model, [lm.encode("<BOS>"), lm.encode("<BOS> Pietro")], 2)


def test_beam_search_finds_the_most_probable_round_of_a_tiny_search_space(lm):
    """Over two new tokens the search is small enough to check by hand: every pair, scored one by one."""
    prompt = lm.encode("<BOS> Pietro chiama")
    logp0 = torch.log_softmax(lm.model(prompt)[-1].double(), -1)
    firsts = torch.topk(logp0, 6).indices.tolist()
    best = max(((a, b) for a in firsts for b in range(lm.model.cfg.vocab_size)),
               key=lambda ab: float(token_logprobs(lm.model, prompt, ab).sum()) if ab[0] in firsts[:3] else -math.inf)
    found = beam_search(lm.model, [prompt], 2, 3)[0]
    assert found[0].new_tokens == best
    assert found[0].logprob == pytest.approx(float(token_logprobs(lm.model, prompt, best).sum()), abs=1e-5)
    assert [b.logprob for b in found] == sorted((b.logprob for b in found), reverse=True)
    # one beam is greedy
    assert list(beam_search(lm.model, [prompt], 5, 1)[0][0].new_tokens) == generate(lm.model, prompt, 5).new_tokens


def test_the_length_penalty_ranks_by_the_mean_per_token():
    short, long = decoding.Beam((1, 2), -2.0, True), decoding.Beam((1, 2, 3, 4, 5, 6), -3.0, True)
    assert short.score(0.0) > long.score(0.0) and long.score(1.0) > short.score(1.0)


# ----------------------------------------------------------------------------- loops and repeats
def test_find_loop_finds_the_earliest_stretch_that_repeats_to_the_end():
    assert find_loop(list("xyabcabcabc")) == Loop(2, 3)
    assert find_loop(list("abababab")) == Loop(0, 2)
    assert find_loop(list("xyzaaaaaaa")) == Loop(3, 1)
    assert find_loop(list("abcabcabx")) is None           # broken at the end
    assert find_loop(list("xaaa")) is None                 # too short to be a loop
    assert find_loop(list("abcdefgh")) is None
    assert Loop(2, 3).repeats(11) == 3


def test_distinct_n_counts_the_share_of_different_n_grams():
    assert distinct_n("abcd", 2) == 1.0
    assert distinct_n("abab", 2) == pytest.approx(2 / 3)
    with pytest.raises(CourseError, match="at least 2 tokens"):
        distinct_n("a", 2)


# ----------------------------------------------------------------------------- SmolLM2: padded rows
def test_smollm2_rows_of_different_lengths_decode_as_each_prompt_alone(smollm2_model):
    lm = smollm2_model
    prompts = [lm.encode("The capital of France is"), lm.encode("I went to the market to buy some")]
    rows = decode(lm.model, prompts, 3)
    for p, r in zip(prompts, rows):
        assert r.new_tokens == generate(lm.model, p, 3).new_tokens
    # the padded row's logits are its prompt's alone (rotary positions read only the distance)
    both = decoding.Rows(lm.model, prompts)
    with torch.no_grad():
        alone = lm.model(prompts[0])[-1].double()
    assert torch.allclose(both.logits[0], alone, atol=1e-3)


def test_rows_that_are_done_leave_the_batch_and_the_others_go_on_unchanged(lm):
    prompts = [lm.encode("<BOS> Pietro chiama")] * 3
    kw = {"do_sample": True, "seed": 5}
    rows = decode(lm.model, prompts, 12, per_row=[{"max_new_tokens": 3}, {"max_new_tokens": 0}, {}], **kw)
    full = generate(lm.model, prompts[0], 12, **kw).new_tokens
    assert rows[0].new_tokens == full[:3] and rows[1].new_tokens == [] and rows[2].new_tokens == full
    with pytest.raises(CourseError, match="per_row knows the knobs"):
        decode(lm.model, prompts, 2, per_row=[{"beams": 2}, {}, {}])
