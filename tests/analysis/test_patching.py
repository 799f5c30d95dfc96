"""Activation patching, against the hooks' own invariants and an independent implementation.

The independent implementation below runs the model from its weights in plain torch (double
precision, one head at a time), never through the model's modules or hooks, records every head's
write, MLP output and residual stage, and patches one of them from a clean run into a corrupted one.
The prompt pairs come from the game's generator with a seed no page uses, corrupted by swapping the
last call's caller with a player of the other kind."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from helpers import small_model
from lib.analysis.patching import patch, patch_one, swap_players
from lib.content.prompt_sets import prompt_set
from lib.errors import CourseError
from lib.model.hooks import hook_names
from lib.model.readout import prompt_logits
from lib.model.store import load
from lib.model.vocab import Vocabulary

UNSHOWN_SEED = 8807   # no chapter draws its prompts with this seed


def random_lm():
    """A small random model with LayerNorm, GELU and an untied unembedding, dressed as a loaded model."""
    model = small_model(layer_norm=True, act="gelu", tied=False)
    vocab = Vocabulary([f"t{i}" for i in range(model.cfg.vocab_size)])
    return SimpleNamespace(name="random", model=model, vocab=vocab, encode=vocab.encode)


# ---------------------------------------------------------------- the independent implementation
def plain_run(model, tokens, patched=None, source=None):
    """Last-position logits and every patchable activation: {("head", L, h): [T, d], ("mlp", L): [T, d],
    ("resid", stage): [T, d]}. `patched` = (key, head or None, position) takes that row from `source`."""
    cfg = model.cfg
    W = {n: t.detach().double() for n, t in model.state_dict().items()}
    rec = {}

    def put(key, value):
        if patched is not None and patched[0] == key:
            value = value.clone()
            value[patched[1]] = source[key][patched[1]]
        rec[key] = value
        return value

    def ln(x, name):
        if not cfg.layer_norm:
            return x
        c = x - x.mean(-1, keepdim=True)
        return c / torch.sqrt((c ** 2).mean(-1, keepdim=True) + 1e-5) * W[name + ".w"] + W[name + ".b"]

    T = len(tokens)
    resid = W["W_E"][tokens] + (W["W_pos"][:T] if cfg.positions else 0)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    for layer in range(cfg.n_layers):
        p = f"blocks.{layer}."
        resid = put(("resid", p + "resid_pre"), resid)
        x = ln(resid, p + "ln1")
        write = torch.zeros_like(resid)
        for h in range(cfg.n_heads):
            q, k, v = (x @ W[p + f"attn.W_{m}"][h] for m in "QKV")
            scores = (q @ k.T / math.sqrt(cfg.d_head)).masked_fill(future, -math.inf)
            write = write + put(("head", layer, h), torch.softmax(scores, -1) @ v @ W[p + "attn.W_O"][h])
        resid = resid + write
        if cfg.has_mlp:
            hidden = ln(resid, p + "ln2") @ W[p + "mlp.W_in"] + W[p + "mlp.b_in"]
            hidden = torch.relu(hidden) if cfg.act == "relu" else 0.5 * hidden * (1 + torch.erf(hidden / math.sqrt(2)))
            resid = resid + put(("mlp", layer), hidden @ W[p + "mlp.W_out"] + W[p + "mlp.b_out"])
    resid = put(("resid", "resid_final"), resid)
    W_U = W["W_E"].T if cfg.tied else W["W_U_own"]
    return ln(resid[-1], "ln_final") @ W_U + W["b_U"], rec


def plain_patching(model, clean, corrupted, t, u, noise=False):
    """Denoising: the corrupted prompt run with one clean activation, the share of the difference brought
    back. Noising (`noise`): the clean prompt run with one corrupted activation, the share taken away."""
    clean_logits, clean_acts = plain_run(model, clean)
    corrupted_logits, corrupted_acts = plain_run(model, corrupted)
    c, k = float(clean_logits[t] - clean_logits[u]), float(corrupted_logits[t] - corrupted_logits[u])
    base, source = (clean, corrupted_acts) if noise else (corrupted, clean_acts)
    out = {}
    for key in source:
        for pos in range(len(clean)):
            logits, _ = plain_run(model, base, (key, pos), source)
            d = float(logits[t] - logits[u])
            out[key, pos] = (c - d) / (c - k) if noise else (d - k) / (c - k)
    return c, k, out


def assert_agrees(lm, clean, corrupted, target=None, against=None, tolerance=1e-6):
    got = patch(lm, clean, corrupted, target, against)
    t, u = lm.vocab.id(got.target), lm.vocab.id(got.against)
    c, k, want = plain_patching(lm.model, lm.encode(clean), lm.encode(corrupted), t, u)
    assert abs(got.clean_diff - c) < 1e-9 * max(1, abs(c)) and abs(got.corrupted_diff - k) < 1e-9 * max(1, abs(k))
    worst = 0.0
    for (key, pos), value in want.items():
        if key[0] == "head":
            mine = got.heads[key[1], key[2], pos]
        elif key[0] == "mlp":
            mine = got.mlps[key[1], pos]
        else:
            mine = got.resid[got.stages.index(key[1]), pos]
        worst = max(worst, abs(mine - value))
    assert worst < tolerance, f"{clean!r} vs {corrupted!r}: the recovered fractions differ by up to {worst:.2g}"
    return got


# ---------------------------------------------------------------- the tests
def unshown_pairs():
    """(clean, corrupted, target, against): prompts of three kinds, each corrupted by `swap_players`; the
    target and the rival are the clean run's two most probable tokens (the corrupted run often keeps the
    same first choice: a swapped prompt need not be a valid round)."""
    lm = load("calling-game")
    out = []
    for kind in ("epithet-later-turn", "next-caller", "number-call"):
        for p in prompt_set(kind, 3, seed=UNSHOWN_SEED):
            first, second = prompt_logits(lm, p.text).argsort(descending=True)[:2].tolist()
            out.append((p.text, swap_players(p.text), lm.vocab.tokens[first], lm.vocab.tokens[second]))
    return out


def test_patching_agrees_with_the_independent_implementation_on_unshown_pairs(lm):
    pairs = unshown_pairs()
    checked = 0
    for pair in pairs:
        try:
            assert_agrees(lm, *pair)
            checked += 1
        except CourseError as e:        # the swap left the difference where it was
            assert "nothing for a patch to recover" in str(e)
    assert checked >= 6, f"only {checked} of {len(pairs)} pairs could be patched"


def test_patching_agrees_on_a_random_model_with_layer_norm_and_gelu():
    lm = random_lm()
    assert_agrees(lm, "t1 t4 t2 t7 t3", "t1 t4 t9 t7 t3", "t6", "t2")


def test_patching_a_run_with_its_own_activations_changes_nothing_at_any_hook_point(lm):
    ids = lm.encode(prompt_set("epithet-later-turn", 1, seed=UNSHOWN_SEED)[0].text)
    want, cache = lm.model.run_with_cache(ids)
    for name in hook_names(lm.model.cfg):
        whole = lm.model.run_with_hooks(ids, fwd_hooks=[(name, lambda x, n: cache[n].clone())])
        assert float((whole - want).abs().max()) < 1e-6, name
        heads = range(lm.model.cfg.n_heads) if name.endswith(("head_out", ".q", ".k", ".v", ".z")) else [None]
        for pos in (0, len(ids) // 2, len(ids) - 1):
            for h in heads:
                one = patch_one(lm.model, ids, cache, name, pos, h)
                assert float((one - want).abs().max()) < 1e-6, (name, pos, h)


def test_patching_everything_from_the_clean_run_gives_the_clean_logits(lm):
    clean, corrupted = "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo", "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama"
    a, b = lm.encode(clean), lm.encode(corrupted)
    want, cache = lm.model.run_with_cache(a)
    every_write = lambda name: name in ("embed", "pos_embed") or name.endswith(("head_out", "mlp_out"))
    for where in ("resid_final", "blocks.0.resid_pre", "blocks.1.resid_mid", every_write):
        got = lm.model.run_with_hooks(b, fwd_hooks=[(where, lambda x, n: cache[n].clone())])
        assert float((got - want).abs().max()) < 1e-4, where
    grid = patch(lm, clean, corrupted)
    assert abs(grid.resid[-1, -1] - 1) < 1e-9     # the last residual stream at the last position is everything
    assert np.abs(grid.resid[-1, :-1]).max() < 1e-9  # and earlier positions of it reach nothing


@pytest.mark.parametrize("args, message", [
    (("<BOS> Pietro chiama", "<BOS> Pietro chiama Paolo"), "the clean prompt has 3 tokens and the corrupted one 4"),
    (("<BOS> Pietro chiama Paolo", "<BOS> Pietro chiama Paolo"), "are both 'Tarso'"),
    (("<BOS> Pietro chiama Paolo", "<BOS> Paolo chiama Pietro", "Tarso", "Tarso"), "the target and the rival are both"),
    (("<BOS> Pietro chiama Paolo", "<BOS> Pietro chiama Paolo", "Tarso", "Cefa"), "is 1.*after both prompts"),
    (("<BOS> Pietro chiama Pablo", "<BOS> Paolo chiama Pietro"), "unknown token 'Pablo'"),
    (("<BOS> Pietro chiama Paolo", "<BOS> Paolo chiama Pietro", "Tars"), "unknown token 'Tars'"),
])
def test_bad_patching_input_gets_one_clear_message(lm, args, message):
    with pytest.raises(CourseError, match=message):
        patch(lm, *args)


def test_swapping_players():
    assert swap_players("<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo") == "<BOS> 4 chiama Pietro <SEP> Pietro chiama Paolo"
    assert swap_players("<BOS> Pietro chiama 4 <SEP> 4 chiama Pietro") == "<BOS> Pietro chiama Paolo <SEP> Paolo chiama Pietro"
    assert swap_players("<BOS> Pietro chiama 1 <SEP> 1 chiama Paolo <SEP> Paolo chiama 1") == \
        "<BOS> Pietro chiama 1 <SEP> 1 chiama 2 <SEP> 2 chiama 1"
    assert swap_players("<BOS> Pietro chiama Paolo", "Pietro", "7") == "<BOS> 7 chiama Paolo"
    with pytest.raises(CourseError, match="neither 5 nor 6 is in the prompt"):
        swap_players("<BOS> Pietro chiama Paolo", "5", "6")


# ---------------------------------------------------------------- noising, legal pairs, warnings
def legal_unshown_pairs(lm):
    from lib.content.corruptions import legal_corruptions
    out = []
    for kind in ("epithet-later-turn", "next-caller"):
        for p in prompt_set(kind, 2, seed=UNSHOWN_SEED + 1, max_tokens=lm.model.cfg.n_ctx):
            out += [(p.text, c) for c in legal_corruptions(p.text, 1, seed=UNSHOWN_SEED)]
    return out


def test_noising_agrees_with_the_independent_implementation_on_legal_unshown_pairs(lm):
    pairs = legal_unshown_pairs(lm)
    assert len(pairs) >= 3
    for clean, corrupted in pairs:
        got = patch(lm, clean, corrupted, direction="noise")
        assert got.warnings == ()
        _, _, want = plain_patching(lm.model, lm.encode(clean), lm.encode(corrupted), lm.vocab.id(got.target),
                                    lm.vocab.id(got.against), noise=True)
        for (key, pos), value in want.items():
            mine = (got.heads[key[1], key[2], pos] if key[0] == "head" else got.mlps[key[1], pos] if key[0] == "mlp"
                    else got.resid[got.stages.index(key[1]), pos])
            assert abs(mine - value) < 1e-6, (clean, key, pos)
        assert abs(got.moved - (got.clean_diff - got.corrupted_diff)) < 1e-12


def test_denoising_agrees_on_legal_unshown_pairs(lm):
    for clean, corrupted in legal_unshown_pairs(lm)[:2]:
        assert assert_agrees(lm, clean, corrupted).warnings == ()


def test_a_swapped_pair_is_labelled_illegal(lm):
    r = patch(lm, "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo", swap_players("<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo"),
              "vice", "Tarso")
    assert any("not a legal round" in w for w in r.warnings) and any("first after both" in w for w in r.warnings)
