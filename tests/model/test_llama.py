"""The Llama architecture (lib.model.llama), on a small random model written out here as its definition says.

SmolLM2 itself is held to Hugging Face's implementation in test_smollm2.py; these tests check each piece on
a model small enough to compute by hand, in double precision: RMSNorm, the rotary turn (lengths kept, a
query-key product that depends on the offset alone), grouped-query attention (query heads of a group
read one key/value head), the gated MLP, the cache's names in forward order, and the KV cache."""
import math

import pytest
import torch
from torch.nn import functional as F

from lib.errors import CourseError
from lib.model.llama import Llama, LlamaConfig, RMSNorm, rotary_angles, rotate

CFG = LlamaConfig(vocab_size=13, n_ctx=16, d_model=12, n_heads=4, n_kv_heads=2, d_head=6, n_layers=2, d_mlp=10,
                  rope_base=50.0)
TOKENS = [3, 1, 4, 1, 5, 9, 2, 6]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = Llama(CFG)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 0.5)
    return m.double().eval().requires_grad_(False)


def test_rmsnorm_divides_by_the_root_mean_square_without_centring():
    norm = RMSNorm(4, eps=0.0)
    with torch.no_grad():
        norm.w.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    x = torch.tensor([[3.0, 1.0, -1.0, 1.0]])
    rms = math.sqrt((9 + 1 + 1 + 1) / 4)
    assert torch.allclose(norm(x), x / rms * norm.w) and not RMSNorm.centred


def test_the_turn_keeps_lengths_and_a_product_depends_on_the_offset_alone():
    d = CFG.d_head
    q, k = torch.randn(d, dtype=torch.float64), torch.randn(d, dtype=torch.float64)

    def turned(x, position):
        cos, sin = rotary_angles(position, position + 1, d, CFG.rope_base)
        return rotate(x[None], cos.double(), sin.double())[0]

    assert torch.allclose(turned(q, 5).norm(), q.norm())
    assert torch.allclose(turned(q, 0), q), "position 0 is not turned"
    # Pair i (numbers i and i + d/2) turns by position * base^(-2i/d).
    angle = 3 * CFG.rope_base ** (-2 * 1 / d)
    by_hand = q.clone()
    by_hand[1] = q[1] * math.cos(angle) - q[1 + d // 2] * math.sin(angle)
    by_hand[1 + d // 2] = q[1 + d // 2] * math.cos(angle) + q[1] * math.sin(angle)
    assert torch.allclose(turned(q, 3)[[1, 1 + d // 2]], by_hand[[1, 1 + d // 2]], atol=1e-6)
    products = [float(turned(q, m) @ turned(k, m - 2)) for m in (2, 5, 11)]
    assert max(products) - min(products) < 1e-5, "the same offset, the same product"
    assert abs(float(turned(q, 5) @ turned(k, 2)) - float(turned(q, 5) @ turned(k, 4))) > 1e-3


def test_a_group_of_query_heads_reads_one_key_value_head(model):
    _, cache = model.run_with_cache(TOKENS)
    T, group = len(TOKENS), CFG.group
    assert cache["blocks.0.attn.rot_k"].shape == (T, CFG.n_kv_heads, CFG.d_head)
    assert cache["blocks.0.attn.pattern"].shape == (CFG.n_heads, T, T)
    for layer in range(CFG.n_layers):
        q, k = cache[f"blocks.{layer}.attn.rot_q"], cache[f"blocks.{layer}.attn.rot_k"]
        for h in range(CFG.n_heads):
            scores = q[:, h] @ k[:, h // group].T / math.sqrt(CFG.d_head)
            scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
            assert torch.allclose(cache[f"blocks.{layer}.attn.pattern"][h], scores.softmax(-1), atol=1e-12), (layer, h)


def test_the_mlp_is_a_gate_times_an_up_projection(model):
    _, cache = model.run_with_cache(TOKENS)
    mlp, x = model.blocks[1].mlp, cache["blocks.1.ln2"]
    want = (F.silu(x @ mlp.W_gate) * (x @ mlp.W_in)) @ mlp.W_out
    assert torch.allclose(cache["blocks.1.mlp_out"], want, atol=1e-12)
    assert torch.allclose(cache["blocks.1.mlp.post"], F.silu(cache["blocks.1.mlp.pre"]) * cache["blocks.1.mlp.up"])


def test_the_stream_adds_up_and_the_read_out_is_the_embedding_turned_on_its_side(model):
    logits, cache = model.run_with_cache(TOKENS)
    assert set(cache) == set(CFG.hook_names()) and len(cache) == len(CFG.hook_names()), "every hook point"
    assert torch.allclose(cache["embed"], model.W_E[TOKENS]) and "pos_embed" not in cache
    for layer in range(CFG.n_layers):
        p = f"blocks.{layer}."
        assert torch.allclose(cache[p + "resid_mid"], cache[p + "resid_pre"] + cache[p + "attn_out"])
        assert torch.allclose(cache[p + "resid_post"], cache[p + "resid_mid"] + cache[p + "mlp_out"])
        assert torch.allclose(cache[p + "attn_out"], cache[p + "attn.head_out"].sum(1), atol=1e-12)
    assert torch.allclose(logits, cache["ln_final"] @ model.W_E.T) and not model.b_U.any()


def test_the_kv_cache_gives_the_same_logits_as_one_pass(model):
    whole = model(TOKENS)
    first, kv = model.forward_with_kv(TOKENS[:5])
    rest, kv = model.forward_with_kv(TOKENS[5:], kv)
    assert torch.allclose(torch.cat([first, rest]), whole, atol=1e-10) and kv.length == len(TOKENS)
    assert kv.layers[0][0].shape[1] == CFG.n_kv_heads, "the cache keeps the shared heads only"


def test_a_configuration_that_cannot_split_its_heads_is_refused():
    with pytest.raises(CourseError, match="split evenly"):
        LlamaConfig(n_heads=9, n_kv_heads=2)
    with pytest.raises(CourseError, match="d_head must be even"):
        LlamaConfig(d_head=7)
