"""Hook points: every cached tensor can be read and replaced by name, and interventions are hooks."""
import pytest
import torch

from helpers import small_model
from lib.errors import CourseError
from lib.model.hooks import hook_names, zero_hooks

TOKENS = [1, 4, 2, 7, 3, 3]
CONFIGS = {"layer norm": dict(layer_norm=True), "no layer norm": dict(), "attention only": dict(d_mlp=0),
           "gelu, untied": dict(act="gelu", tied=False, layer_norm=True)}


@pytest.fixture(scope="module", params=list(CONFIGS))
def model(request):
    return small_model(**CONFIGS[request.param])


def test_the_hook_points_are_the_cache_names_in_forward_order(model):
    for tokens in (TOKENS, [TOKENS, TOKENS[::-1]]):
        _, cache = model.run_with_cache(tokens)
        assert list(cache) == hook_names(model.cfg)
        assert all(not t.requires_grad for t in cache.values())


def test_a_predicate_hook_sees_every_point_once_in_order_with_the_cache_shapes(model):
    seen = []
    _, cache = model.run_with_cache(TOKENS)
    model.run_with_hooks(TOKENS, fwd_hooks=[(lambda name: True, lambda x, name: seen.append((name, x.shape)))])
    assert seen == [(name, t.shape) for name, t in cache.items()]


def test_a_hook_that_returns_its_input_or_none_changes_nothing(model):
    want = model(TOKENS)
    for fn in (lambda x, name: x.clone(), lambda x, name: None):
        got = model.run_with_hooks(TOKENS, fwd_hooks=[(lambda name: True, fn)])
        assert torch.equal(got, want)


def test_replacing_one_heads_write_changes_the_layers_sum_by_that_much(model):
    _, clean = model.run_with_cache(TOKENS)
    extra = torch.randn(model.cfg.d_model)

    def push(x, name):
        out = x.clone()
        out[2, 1] += extra
        return out
    logits, cache = model.run_with_cache(TOKENS, fwd_hooks=[("blocks.0.attn.head_out", push)])
    moved = cache["blocks.0.attn_out"] - clean["blocks.0.attn_out"]
    assert torch.allclose(moved[2], extra, atol=1e-5) and float(moved[[0, 1, 3, 4, 5]].abs().max()) == 0
    assert torch.allclose(cache["blocks.0.attn.head_out"][2, 1], clean["blocks.0.attn.head_out"][2, 1] + extra)
    assert float((logits - clean["logits"]).abs().max()) > 1e-3


def test_replacing_a_pattern_or_a_query_reaches_the_logits():
    model = small_model(layer_norm=True)
    want = model(TOKENS)
    for name in ("blocks.0.attn.q", "blocks.0.attn.pattern", "blocks.1.attn.v", "blocks.0.mlp.post", "embed"):
        got = model.run_with_hooks(TOKENS, fwd_hooks=[(name, lambda x, n: x * 0.5)])
        assert float((got - want).abs().max()) > 1e-4, name


def test_ablate_keywords_are_the_zero_hooks():
    model = small_model(layer_norm=True)
    heads, mlps = [(0, 1), (1, 2), (1, 0)], [1]
    a = model(TOKENS, ablate=heads, ablate_mlps=mlps)
    b = model.run_with_hooks(TOKENS, fwd_hooks=zero_hooks(model.cfg, heads, mlps))
    assert torch.equal(a, b)
    _, cache = model.run_with_cache(TOKENS, ablate=heads, ablate_mlps=mlps)
    assert float(cache["blocks.1.attn.head_out"][:, [0, 2]].abs().max()) == 0
    assert float(cache["blocks.1.attn.head_out"][:, 1].abs().max()) > 0
    assert float(cache["blocks.1.mlp_out"].abs().max()) == 0


@pytest.mark.parametrize("hooks, message", [
    ([("blocks.9.attn.z", lambda x, n: x)], r"no hook point 'blocks.9.attn.z'; it has: embed, pos_embed"),
    ([("embed", lambda x, n: x[:2])], r"the hook on embed must return None or a tensor shaped \(6, 12\), got \(2, 12\)"),
    ([("embed", lambda x, n: 3)], r"must return None or a tensor shaped \(6, 12\), got int"),
    ([("embed",)], r"a hook is a pair \(name or predicate, function\)"),
    ([("embed", "not a function")], "a hook's function must be callable"),
    ([(3, lambda x, n: x)], "a hook is attached to a hook point's name or to a predicate over names, got 3"),
])
def test_bad_hooks_get_one_clear_message(hooks, message):
    with pytest.raises(CourseError, match=message):
        small_model().run_with_hooks(TOKENS, fwd_hooks=hooks)


def test_the_shipped_model_with_hooks_unused_gives_the_same_logits(lm):
    ids = lm.encode("<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama")
    assert torch.equal(lm.model.run_with_hooks(ids, fwd_hooks=[]), lm.model(ids))
