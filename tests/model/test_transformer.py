"""The model, as a specification.

First the model against a plain implementation written here, one position and one head at a time,
for the shipped models and for small random ones, with heads and MLPs switched off. Then the
invariants a reader can see in the chapters: attention rows sum to one, the future is invisible,
the residual stream is a sum of writes, the lens ends at the logits, the KV cache changes nothing.
"""
import itertools
import math
import random

import pytest
import torch

from helpers import small_model
from lib.analysis.lens import components, direct_logit_attribution, logit_lens
from lib.errors import CourseError
from lib.model.store import load, shipped_names

TOKENS = [1, 4, 2, 7, 3, 3]


# ---------------------------------------------------------------- the plain implementation
def plain_logits(model, tokens, heads_off=(), mlps_off=()) -> torch.Tensor:
    """The forward pass as a textbook writes it, in double precision, from the weights alone.

    Every position is a vector; every head is visited in turn; a query meets the keys of its own
    and earlier positions only, so no mask is needed. A head that is off adds nothing to the
    residual stream; an MLP that is off adds nothing either.
    """
    cfg = model.cfg
    W = {name: tensor.detach().double() for name, tensor in model.state_dict().items()}

    def layer_norm(x, name):
        if not cfg.layer_norm:
            return x
        mean = x.mean()
        variance = ((x - mean) ** 2).mean()
        return (x - mean) / math.sqrt(variance + 1e-5) * W[name + ".w"] + W[name + ".b"]

    def activation(x):
        if cfg.act == "relu":
            return x.clamp(min=0)
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))  # GELU, exactly

    T = len(tokens)
    resid = []
    for i, token in enumerate(tokens):
        position = W["W_pos"][i] if cfg.positions else 0
        resid.append(W["W_E"][token] + position)

    for layer in range(cfg.n_layers):
        p = f"blocks.{layer}."
        x = [layer_norm(r, p + "ln1") for r in resid]
        writes = [torch.zeros(cfg.d_model, dtype=torch.float64) for _ in range(T)]
        for head in range(cfg.n_heads):
            if (layer, head) in heads_off:
                continue
            W_Q, W_K = W[p + "attn.W_Q"][head], W[p + "attn.W_K"][head]
            W_V, W_O = W[p + "attn.W_V"][head], W[p + "attn.W_O"][head]
            q = [x[i] @ W_Q for i in range(T)]
            k = [x[i] @ W_K for i in range(T)]
            v = [x[i] @ W_V for i in range(T)]
            for i in range(T):
                scores = [float(q[i] @ k[j]) / math.sqrt(cfg.d_head) for j in range(i + 1)]
                top = max(scores)
                weights = [math.exp(s - top) for s in scores]
                total = sum(weights)
                z = sum(w / total * v[j] for j, w in enumerate(weights))
                writes[i] = writes[i] + z @ W_O
        resid = [r + w for r, w in zip(resid, writes)]
        if cfg.has_mlp and layer not in mlps_off:
            for i in range(T):
                hidden = activation(layer_norm(resid[i], p + "ln2") @ W[p + "mlp.W_in"] + W[p + "mlp.b_in"])
                resid[i] = resid[i] + hidden @ W[p + "mlp.W_out"] + W[p + "mlp.b_out"]

    W_U = W["W_E"].T if cfg.tied else W["W_U_own"]
    return torch.stack([layer_norm(r, "ln_final") @ W_U + W["b_U"] for r in resid])


def switch_offs(cfg, seed=0):
    """Nothing off; each head off in turn; each MLP off in turn; three random sets of both."""
    heads = [(layer, head) for layer in range(cfg.n_layers) for head in range(cfg.n_heads)]
    mlps = list(range(cfg.n_layers)) if cfg.has_mlp else []
    cases = [((), ())] + [((h,), ()) for h in heads] + [((), (m,)) for m in mlps]
    rng = random.Random(seed)
    for _ in range(3 if heads else 0):
        cases.append((tuple(rng.sample(heads, rng.randint(1, len(heads)))),
                      tuple(rng.sample(mlps, rng.randint(0, len(mlps))))))
    return cases


def assert_model_is_plain(model, prompts, label):
    for (heads_off, mlps_off), (i, prompt) in itertools.product(switch_offs(model.cfg), enumerate(prompts)):
        with torch.no_grad():
            got = model(prompt, ablate=heads_off, ablate_mlps=mlps_off).double()
        want = plain_logits(model, prompt, heads_off, mlps_off)
        gap = float((got - want).abs().max())
        # The model computes in float32: allow a few units in the sixth digit of the largest logit
        # (the calling-game model reaches logits near 180 on random tokens).
        allowed = 1e-5 + 2e-6 * float(want.abs().max())
        assert gap <= allowed, (f"{label}, prompt {i} ({len(prompt)} tokens), heads off {list(heads_off)}, "
                                f"MLPs off {list(mlps_off)}: the model's logits differ from the plain "
                                f"implementation's by {gap:.2g} (allowed {allowed:.2g})")


RANDOM_MODELS = {f"layer_norm={ln}, tied={tied}, act={act}": dict(layer_norm=ln, tied=tied, act=act)
                 for ln, tied, act in itertools.product([False, True], [True, False], ["relu", "gelu"])}
RANDOM_MODELS["attention only"] = dict(layer_norm=True, d_mlp=0)
RANDOM_MODELS["no positions, one layer"] = dict(positions=False, n_layers=1)


@pytest.mark.parametrize("name", RANDOM_MODELS)
def test_a_random_model_equals_the_plain_implementation(name):
    model = small_model(**RANDOM_MODELS[name])
    prompts = [TOKENS, [5], list(range(model.cfg.n_ctx))]
    assert_model_is_plain(model, prompts, name)


@pytest.mark.parametrize("name", shipped_names())
def test_a_shipped_model_equals_the_plain_implementation(name):
    lm = load(name)
    rng = random.Random(name)
    prompts = [lm.encode(lm.vocab.tokens[:3]),
               [rng.randrange(lm.model.cfg.vocab_size) for _ in range(lm.model.cfg.n_ctx)]]
    assert_model_is_plain(lm.model, prompts, name)


def test_every_switch_off_changes_the_logits():
    """Otherwise the comparisons above could pass with ablation doing nothing."""
    model = small_model(layer_norm=True)
    full = model(TOKENS)
    for heads_off, mlps_off in switch_offs(model.cfg)[1:]:
        changed = float((model(TOKENS, ablate=heads_off, ablate_mlps=mlps_off) - full).abs().max())
        assert changed > 1e-3, f"switching off heads {heads_off} and MLPs {mlps_off} changed nothing"


def test_one_prompt_or_a_batch_the_three_entry_points_agree():
    model = small_model(layer_norm=True)
    batch = [TOKENS, TOKENS[::-1]]
    off = dict(ablate=[(0, 1)], ablate_mlps=[1])
    logits = model(batch, **off)
    assert logits.shape == (2, len(TOKENS), model.cfg.vocab_size)
    assert torch.allclose(logits[1], model(TOKENS[::-1], **off), atol=1e-6)
    assert torch.equal(model.run_with_cache(batch, **off)[0], logits)
    assert torch.allclose(model.forward_with_kv(batch, **off)[0], logits, atol=1e-6)


# ---------------------------------------------------------------- the activation cache
def expected_keys(layer_norm: bool, n_layers=2) -> set[str]:
    per_block = ["resid_pre", "attn.q", "attn.k", "attn.v", "attn.qk", "attn.scores", "attn.pattern",
                 "attn.z", "attn.head_out", "attn_out", "resid_mid", "mlp.pre", "mlp.post", "mlp_out",
                 "resid_post"] + (["ln1", "ln2"] if layer_norm else [])
    keys = {"embed", "pos_embed", "resid_final", "logits"} | ({"ln_final"} if layer_norm else set())
    return keys | {f"blocks.{layer}.{name}" for layer in range(n_layers) for name in per_block}


@pytest.mark.parametrize("layer_norm", [False, True])
def test_the_cache_holds_every_named_tensor_in_its_shape(layer_norm):
    m = small_model(layer_norm).requires_grad_(True)  # as in training: the cache must still be plain tensors
    logits, cache = m.run_with_cache(TOKENS)
    T, H, D, Dh, V, F = len(TOKENS), 3, 12, 4, 11, 16
    assert set(cache) == expected_keys(layer_norm)
    assert m.blocks[0].attn.W_Q.shape == (H, D, Dh)
    assert m.blocks[0].attn.W_O.shape == (H, Dh, D)
    shapes = {"embed": (T, D), "pos_embed": (T, D), "blocks.0.resid_pre": (T, D),
              "blocks.0.attn.q": (T, H, Dh), "blocks.0.attn.k": (T, H, Dh), "blocks.0.attn.v": (T, H, Dh),
              "blocks.1.attn.qk": (H, T, T), "blocks.1.attn.scores": (H, T, T), "blocks.1.attn.pattern": (H, T, T),
              "blocks.1.attn.z": (T, H, Dh), "blocks.1.attn.head_out": (T, H, D), "blocks.1.attn_out": (T, D),
              "blocks.0.mlp.pre": (T, F), "blocks.0.mlp.post": (T, F), "blocks.0.mlp_out": (T, D),
              "resid_final": (T, D), "logits": (T, V)}
    for key, shape in shapes.items():
        assert cache[key].shape == shape, f"{key}: {tuple(cache[key].shape)}, expected {shape}"
    assert torch.equal(cache["logits"], logits)
    assert not any(t.requires_grad for t in cache.values()), "the cache is for reading: detached"

    batch_logits, batch_cache = m.run_with_cache([TOKENS, TOKENS[::-1]])
    assert batch_cache["blocks.0.attn.pattern"].shape == (2, H, T, T)
    assert torch.allclose(batch_logits[0], logits, atol=1e-6)


def test_a_missing_cache_entry_names_the_ones_there_are():
    _, cache = small_model(layer_norm=False).run_with_cache(TOKENS)
    with pytest.raises(CourseError, match="no entry 'blocks.0.ln1'.*blocks.0.attn.pattern"):
        cache["blocks.0.ln1"]


# ---------------------------------------------------------------- invariants a reader can see
def test_attention_rows_sum_to_one_and_masked_cells_are_exactly_zero():
    m = small_model(layer_norm=True)
    _, cache = m.run_with_cache(TOKENS)
    future = torch.triu(torch.ones(len(TOKENS), len(TOKENS), dtype=torch.bool), diagonal=1)
    for layer in range(2):
        pattern = cache[f"blocks.{layer}.attn.pattern"]
        assert torch.allclose(pattern.sum(-1), torch.ones(3, len(TOKENS)), atol=1e-6)
        assert (pattern[:, future] == 0).all(), f"layer {layer}: a token attended to a later one"
        assert torch.isinf(cache[f"blocks.{layer}.attn.scores"][:, future]).all()
        assert torch.isfinite(cache[f"blocks.{layer}.attn.scores"][:, ~future]).all()


def test_the_residual_stream_is_the_sum_of_every_write():
    m = small_model(layer_norm=False)
    logits, cache = m.run_with_cache(TOKENS)
    for pos in range(len(TOKENS)):
        total = sum(components(m, cache, pos).values())
        # Each MLP's write includes its output bias, so nothing is left over.
        assert torch.allclose(total, cache["resid_final"][pos], atol=1e-5), f"position {pos}"
        assert torch.allclose(total @ m.W_U + m.b_U, logits[pos], atol=1e-5), f"position {pos}"


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


def test_a_head_switched_off_writes_zero_and_equals_a_zeroed_W_O():
    m = small_model(layer_norm=True)
    logits, cache = m.run_with_cache(TOKENS, ablate=[(1, 2)])
    assert (cache["blocks.1.attn.head_out"][:, 2] == 0).all()
    assert (cache["blocks.1.attn.pattern"][2] > 0).any(), "an ablated head still looks; only its write is zero"
    assert torch.equal(m(TOKENS, ablate=[(1, 2)]), logits)
    with torch.no_grad():  # the same intervention, done to the weights
        saved = m.blocks[1].attn.W_O[2].clone()
        m.blocks[1].attn.W_O[2].zero_()
        zeroed = m(TOKENS)
        m.blocks[1].attn.W_O[2].copy_(saved)
    assert torch.allclose(logits, zeroed, atol=1e-6)


def test_an_mlp_switched_off_writes_zero_and_equals_zeroed_weights():
    m = small_model(layer_norm=True)
    logits, cache = m.run_with_cache(TOKENS, ablate_mlps=[0])
    assert (cache["blocks.0.mlp_out"] == 0).all()
    assert torch.equal(cache["blocks.0.resid_post"], cache["blocks.0.resid_mid"])
    mlp = m.blocks[0].mlp
    with torch.no_grad():
        saved = mlp.W_out.clone(), mlp.b_out.clone()
        mlp.W_out.zero_(), mlp.b_out.zero_()
        zeroed = m(TOKENS)
        mlp.W_out.copy_(saved[0]), mlp.b_out.copy_(saved[1])
    assert torch.allclose(logits, zeroed, atol=1e-6)


def test_the_kv_cache_continues_a_prefix_without_changing_it():
    m = small_model(layer_norm=True)
    _, prefix = m.forward_with_kv(TOKENS[:3], ablate=[(0, 0)])
    a, _ = m.forward_with_kv(TOKENS[3:], prefix, ablate=[(0, 0)])
    b, _ = m.forward_with_kv([9], prefix, ablate=[(0, 0)])  # the same prefix, continued another way
    assert prefix.length == 3
    full = m(TOKENS, ablate=[(0, 0)])
    assert torch.allclose(a, full[3:], atol=1e-5)
    assert torch.allclose(b[0], m(TOKENS[:3] + [9], ablate=[(0, 0)])[-1], atol=1e-5)


def test_a_zero_layer_model_is_embed_then_unembed():
    m = small_model(n_layers=0)
    logits = m([3])
    expected = (m.W_E[3] + m.W_pos[0]) @ m.W_U + m.b_U
    assert torch.allclose(logits[0], expected, atol=1e-6)


# ---------------------------------------------------------------- bad input: one clear line
@pytest.mark.parametrize("call, message", [
    (dict(tokens=list(range(9))), "context holds at most 8"),
    (dict(tokens=[]), "the prompt is empty"),
    (dict(tokens=[11]), "token ids must lie in 0 to 10"),
    (dict(tokens=[-1]), "token ids must lie in 0 to 10"),
    (dict(tokens=[1.5]), "whole numbers from 0 to 10"),
    (dict(tokens=[[1, 2], [3]]), "prompts of one length"),
    (dict(tokens=["cat"]), "whole-number ids"),
    (dict(tokens=[[[1]]]), r"shaped \[position\] or \[batch, position\]"),
    (dict(tokens=[1], ablate=[(2, 0)]), r"head \(2, 0\) does not exist: layers run 0 to 1, heads 0 to 2"),
    (dict(tokens=[1], ablate=[(0, 3)]), r"head \(0, 3\) does not exist"),
    (dict(tokens=[1], ablate=["x"]), r"a head is named as \(layer, head\)"),
    (dict(tokens=[1], ablate=(0, 1)), r"a head is named as \(layer, head\), got 0"),
    (dict(tokens=[1], ablate_mlps=[2]), "layer 2 does not exist: layers run 0 to 1"),
])
def test_bad_input_is_refused_with_one_clear_line(call, message):
    m = small_model()
    for entry in (m, m.run_with_cache, m.forward_with_kv):
        with pytest.raises(CourseError, match=message):
            entry(**call)


def test_switching_an_mlp_off_zeroes_its_write_and_changes_the_answer(lm):
    ids = lm.encode("<BOS> Pietro chiama Paolo")
    logits, cache = lm.model.run_with_cache(ids, ablate_mlps=[0])
    assert float(cache["blocks.0.mlp_out"].abs().max()) == 0.0
    assert float(cache["blocks.1.mlp_out"].abs().max()) > 0
    intact, _ = lm.model.run_with_cache(ids)
    assert int(intact[-1].argmax()) == lm.vocab.id("Tarso") != int(logits[-1].argmax())
    with pytest.raises(CourseError, match="layer 5 does not exist"):
        lm.model.run_with_cache(ids, ablate_mlps=[5])
