import pytest
import torch

from lib.errors import CourseError
from lib.model.generate import generate
from lib.analysis.lens import components, direct_logit_attribution, logit_lens
from helpers import small_model

TOKENS = [1, 4, 2, 7, 3, 3]


@pytest.mark.parametrize("layer_norm", [False, True])
def test_shapes_of_the_cache(layer_norm):
    m = small_model(layer_norm)
    logits, cache = m.run_with_cache(TOKENS)
    T, H, D, Dh, V = len(TOKENS), 3, 12, 4, 11
    assert logits.shape == (T, V)
    assert m.blocks[0].attn.W_Q.shape == (H, D, Dh)
    assert m.blocks[0].attn.W_O.shape == (H, Dh, D)
    assert cache["blocks.0.attn.q"].shape == (T, H, Dh)
    assert cache["blocks.1.attn.pattern"].shape == (H, T, T)
    assert cache["blocks.1.attn.head_out"].shape == (T, H, D)
    assert cache["blocks.0.mlp.pre"].shape == (T, 16)
    assert cache["resid_final"].shape == (T, D)
    batch_logits, batch_cache = m.run_with_cache([TOKENS, TOKENS[::-1]])
    assert batch_cache["blocks.0.attn.pattern"].shape == (2, H, T, T)
    assert torch.allclose(batch_logits[0], logits, atol=1e-6)


def test_attention_rows_sum_to_one_and_masked_cells_are_exactly_zero():
    m = small_model(layer_norm=True)
    _, cache = m.run_with_cache(TOKENS)
    for layer in range(2):
        pattern = cache[f"blocks.{layer}.attn.pattern"]
        assert torch.allclose(pattern.sum(-1), torch.ones(3, len(TOKENS)), atol=1e-6)
        future = torch.triu(torch.ones(len(TOKENS), len(TOKENS), dtype=torch.bool), diagonal=1)
        assert (pattern[:, future] == 0).all(), "a token attended to a later one"
        assert torch.isinf(cache[f"blocks.{layer}.attn.scores"][:, future]).all()


def test_residual_decomposes_into_embedding_heads_and_mlps_without_layernorm():
    m = small_model(layer_norm=False)
    logits, cache = m.run_with_cache(TOKENS)
    for pos in range(len(TOKENS)):
        parts = components(m, cache, pos)
        total = sum(parts.values())
        # the MLP output bias is part of each MLP's write, so nothing is left over
        assert torch.allclose(total, cache["resid_final"][pos], atol=1e-5)
        assert torch.allclose(total @ m.W_U + m.b_U, logits[pos], atol=1e-5)


@pytest.mark.parametrize("layer_norm", [False, True])
def test_direct_logit_attribution_adds_up_to_the_logits(layer_norm):
    m = small_model(layer_norm)
    logits, cache = m.run_with_cache(TOKENS)
    shares = direct_logit_attribution(m, cache)
    assert torch.allclose(sum(shares.values()), logits[-1], atol=1e-4)


@pytest.mark.parametrize("layer_norm", [False, True])
def test_the_lens_at_the_last_stage_equals_the_logits(layer_norm):
    m = small_model(layer_norm)
    logits = m(TOKENS)
    stages = logit_lens(m, TOKENS)
    assert [s.name for s in stages] == ["embed", "blocks.0.attn", "blocks.0.mlp", "blocks.1.attn", "blocks.1.mlp"]
    assert torch.allclose(stages[-1].logits, logits[-1], atol=1e-5)


def test_ablating_a_head_equals_zeroing_its_write():
    m = small_model(layer_norm=True)
    _, cache = m.run_with_cache(TOKENS, ablate=[(1, 2)])
    assert (cache["blocks.1.attn.head_out"][:, 2] == 0).all()
    ablated = m(TOKENS, ablate=[(1, 2)])
    with m.ablated([(1, 2)]):
        assert torch.equal(m(TOKENS), ablated)
    # Zeroing the head's slice of W_O is the same intervention, done to the weights.
    with torch.no_grad():
        saved = m.blocks[1].attn.W_O[2].clone()
        m.blocks[1].attn.W_O[2].zero_()
        zeroed = m(TOKENS)
        m.blocks[1].attn.W_O[2].copy_(saved)
    assert torch.allclose(ablated, zeroed, atol=1e-6)
    assert not torch.allclose(ablated, m(TOKENS), atol=1e-4), "ablation changed nothing: the test is void"


def test_unknown_heads_are_a_clear_error():
    m = small_model()
    with pytest.raises(CourseError, match="does not exist"):
        m(TOKENS, ablate=[(2, 0)])
    with pytest.raises(CourseError, match="layer, head"):
        m(TOKENS, ablate=["x"])


@pytest.mark.parametrize("do_sample", [False, True])
def test_kv_cache_generation_equals_full_recomputation(do_sample):
    m = small_model(layer_norm=True)
    with_cache = generate(m, [1, 2], 6, use_cache=True, do_sample=do_sample, seed=3)
    without = generate(m, [1, 2], 6, use_cache=False, do_sample=do_sample, seed=3)
    assert with_cache.tokens == without.tokens
    for a, b in zip(with_cache.step_logits, without.step_logits):
        assert torch.allclose(a, b, atol=1e-5)
    assert with_cache.kv_bytes == 2 * 2 * 3 * (len(with_cache.tokens) - 1) * 4 * 4


def test_prompt_longer_than_the_context_is_refused():
    m = small_model()
    with pytest.raises(CourseError, match="context holds at most 8"):
        m(list(range(9)))


def test_zero_layer_model_is_embed_then_unembed():
    m = small_model(n_layers=0)
    logits = m([3])
    expected = (m.W_E[3] + m.W_pos[0]) @ m.W_U + m.b_U
    assert torch.allclose(logits[0], expected, atol=1e-6)
