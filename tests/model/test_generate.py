"""Generation (lib.model.generate): with the KV cache and without, the same tokens and logits; greedy takes each
step's best token; a seed draws the stream the read-out draws; a processor rewrites what is picked, not what is
kept; generation stops at a stop token and at the context; `sample_many` draws seeded rows side by side."""
import pytest
import torch

from helpers import small_model
from lib.errors import CourseError
from lib.model.generate import generate, sample_many
from lib.model.readout import Rolls, sample


@pytest.mark.parametrize("do_sample", [False, True])
def test_kv_cache_generation_equals_full_recomputation(do_sample):
    m = small_model(layer_norm=True)
    with_cache = generate(m, [1, 2], 6, use_cache=True, do_sample=do_sample, seed=3)
    without = generate(m, [1, 2], 6, use_cache=False, do_sample=do_sample, seed=3)
    assert with_cache.tokens == without.tokens
    for step, (a, b) in enumerate(zip(with_cache.step_logits, without.step_logits)):
        assert torch.allclose(a, b, atol=1e-5), f"step {step}"
    # layers x (keys, values) x heads x positions x d_head x 4 bytes
    assert with_cache.kv_bytes == 2 * 2 * 3 * (len(with_cache.tokens) - 1) * 4 * 4


def test_greedy_takes_each_steps_best_token_and_a_seed_draws_the_readouts_stream():
    m = small_model(layer_norm=True)
    g = generate(m, [1, 2], 5)
    assert g.new_tokens == [int(step.argmax()) for step in g.step_logits] and g.tokens == [1, 2, *g.new_tokens]
    s = generate(m, [1, 2], 5, do_sample=True, temperature=2.0, top_k=4, seed=11)
    rolls = Rolls(11)
    assert s.new_tokens == [sample(step, 2.0, 4, None, generator=rolls) for step in s.step_logits]
    assert generate(m, [1, 2], 5, do_sample=True, temperature=2.0, top_k=4, seed=11).tokens == s.tokens


def test_a_processor_changes_the_pick_not_the_kept_logits():
    m = small_model(layer_norm=True)
    free = generate(m, [1, 2], 4)
    banned = free.new_tokens[0]

    def ban(tokens, logits):
        return logits.masked_fill(torch.arange(len(logits)) == banned, float("-inf"))

    g = generate(m, [1, 2], 4, processor=ban)
    assert banned not in g.new_tokens and torch.equal(g.step_logits[0], free.step_logits[0])


def test_generation_stops_at_a_stop_token_and_at_the_context():
    m = small_model(layer_norm=True)
    free = generate(m, [1, 2], 6)
    stop = free.new_tokens[2]
    first = free.new_tokens.index(stop)
    assert generate(m, [1, 2], 6, stop=[stop]).new_tokens == free.new_tokens[:first + 1]
    assert len(generate(m, [1, 2], 100).tokens) == m.cfg.n_ctx
    assert generate(m, [1, 2], 0).new_tokens == []


@pytest.mark.parametrize("args, says", [(([], 3), "empty"), (([1], -1), "max_new_tokens must be 0 or more"),
                                        (([1] * 9, 1), "at most 8"), (([1], 2, {"temperature": 0}), "temperature")])
def test_bad_requests_are_one_clear_line(args, says):
    m = small_model()
    prompt, n, *kw = args
    with pytest.raises(CourseError, match=says):
        generate(m, prompt, n, **(kw[0] if kw else {}))


def test_sample_many_draws_seeded_rows_that_end_at_the_stop():
    m = small_model(layer_norm=True)
    rows = sample_many(m, [1], 12, 6, seed=5, stop=3)
    assert rows == sample_many(m, [1], 12, 6, seed=5, stop=3) and rows != sample_many(m, [1], 12, 6, seed=6, stop=3)
    assert all(r[0] == 1 and len(r) <= 7 for r in rows)
    assert all(3 not in r[1:-1] for r in rows), "a row ends at its first stop"
    assert len({tuple(r) for r in rows}) > 1
    with pytest.raises(CourseError, match="n must be at least 1"):
        sample_many(m, [1], 0, 3)
