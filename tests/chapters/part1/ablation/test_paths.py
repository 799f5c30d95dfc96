"""Path patching and copying scores, against an independent implementation in numpy.

The implementation below runs the calling-game model from its weights in numpy (double precision,
one head at a time) and computes each path as its definition says, without freezing anything: the
receiver's output recomputed from its base input plus the sender's change, then put into an
otherwise free run. The library freezes every other write with hooks instead, so the two meet only
in the definition. Prompts and corrupted prompts come from a seed no page uses. Tolerance: 1e-8 on
logit differences of size ~10 (both in double precision)."""
import numpy as np
import pytest
import torch

from lib.chapters.part1.ablation.paths import copying_score, path_patch
from lib.content.corpora.calling_game import PLAYERS
from lib.content.corruptions import legal_corruptions
from lib.content.prompt_sets import prompt_set

UNSHOWN_SEED = 8807


def weights(model):
    return {n: t.detach().double().numpy() for n, t in model.state_dict().items()}


def head_write(W, L, h, x):
    p = f"blocks.{L}.attn."
    q, k, v = (x @ W[p + f"W_{m}"][h] for m in "QKV")
    T = len(x)
    s = q @ k.T / np.sqrt(q.shape[1])
    s[np.triu(np.ones((T, T), bool), 1)] = -np.inf
    a = np.exp(s - s.max(1, keepdims=True))
    a /= a.sum(1, keepdims=True)
    return a @ v @ W[p + "W_O"][h]


def mlp_write(W, L, x):
    p = f"blocks.{L}.mlp."
    return np.maximum(x @ W[p + "W_in"] + W[p + "b_in"], 0) @ W[p + "W_out"] + W[p + "b_out"]


def run(W, cfg, ids, outputs=None):
    """Logits at the last position, and each component's input and output: outputs[key] replaces a
    component's output, key ("head", L, h) or ("mlp", L)."""
    outputs = outputs or {}
    resid = W["W_E"][ids] + W["W_pos"][:len(ids)]
    seen = {}
    for L in range(cfg.n_layers):
        write = 0
        for h in range(cfg.n_heads):
            out = outputs.get(("head", L, h))
            seen[("head", L, h)] = (resid, head_write(W, L, h, resid) if out is None else out)
            write = write + seen[("head", L, h)][1]
        resid = resid + write
        out = outputs.get(("mlp", L))
        seen[("mlp", L)] = (resid, mlp_write(W, L, resid) if out is None else out)
        resid = resid + seen[("mlp", L)][1]
    return resid[-1] @ W["W_E"].T + W["b_U"], seen, resid


def plain_paths(lm, text, sender, position, value, t, u):
    W, cfg = weights(lm.model), lm.model.cfg
    ids = lm.encode(text)
    logits, seen, final = run(W, cfg, ids)
    base = logits[t] - logits[u]
    L0, h0 = sender
    delta = np.zeros_like(final)
    delta[position] = value - seen[("head", L0, h0)][1][position]
    changed = seen[("head", L0, h0)][1] + delta
    out = {}
    d = (final + delta)[-1] @ W["W_E"].T + W["b_U"]
    out["direct"] = base - (d[t] - d[u])
    for key in seen:
        if key[0] == "head" and key[1] <= L0 or key[0] == "mlp" and key[1] < L0:
            continue
        x = seen[key][0] + delta
        new = mlp_write(W, key[1], x) if key[0] == "mlp" else head_write(W, key[1], key[2], x)
        g, _, _ = run(W, cfg, ids, {key: new})
        name = f"MLP {key[1]}" if key[0] == "mlp" else f"L{key[1]}H{key[2]}"
        out[name] = base - (g[t] - g[u])
    g, _, _ = run(W, cfg, ids, {("head", L0, h0): changed})
    out["total"] = base - (g[t] - g[u])
    return base, out


def cases(lm):
    """Next-caller and later-call prompts of an unshown seed, each with a legal corruption: the sender's
    new value is its write on the corrupted prompt (noising)."""
    out = []
    for kind in ("next-caller", "epithet-later-turn"):
        for p in prompt_set(kind, 3, seed=UNSHOWN_SEED, max_tokens=lm.model.cfg.n_ctx):
            bad = legal_corruptions(p.text, 1, seed=UNSHOWN_SEED)
            if bad:
                out.append((p.text, bad[0], p.target))
    return out


@pytest.mark.parametrize("sender", [(0, 3), (0, 0), (1, 1)])
def test_path_patching_agrees_with_the_numpy_definition(lm, sender):
    found = cases(lm)
    assert len(found) >= 4
    for clean, corrupted, target in found:
        with torch.no_grad():
            _, cc = lm.model.run_with_cache(lm.encode(corrupted))
        value = cc[f"blocks.{sender[0]}.attn.head_out"].double()
        T = len(lm.encode(clean))
        for position in (T - 1, T - 3):
            logits = lm.model(lm.encode(clean))[-1]
            against = lm.vocab.tokens[int(logits.argsort(descending=True)[1])]
            if against == target:
                against = lm.vocab.tokens[int(logits.argsort(descending=True)[0])]
            got = path_patch(lm, clean, sender, position, value[position, sender[1]], target, against)
            base, want = plain_paths(lm, clean, sender, position, value[position, sender[1]].numpy(),
                                     lm.vocab.id(target), lm.vocab.id(against))
            assert abs(got.base_diff - base) < 1e-8
            assert abs(got.total - want["total"]) < 1e-8
            for name, v in want.items():
                if name != "total":
                    assert abs(got.paths[name] - v) < 1e-8, (clean, sender, position, name, got.paths[name], v)
            assert set(got.paths) - set(want) <= {f"attention {L}" for L in range(2)}


def test_a_later_layers_heads_together_are_one_receiver(lm):
    clean, corrupted, target = cases(lm)[0]
    ids = lm.encode(clean)
    got = path_patch(lm, clean, (0, 3), len(ids) - 1, torch.zeros(lm.model.cfg.d_model), target, "<SEP>")
    # Four heads patched at once: the numpy run with all four outputs recomputed from base + change.
    W, cfg = weights(lm.model), lm.model.cfg
    logits, seen, final = run(W, cfg, ids)
    delta = np.zeros_like(final)
    delta[-1] = -seen[("head", 0, 3)][1][-1]
    new = {("head", 1, h): head_write(W, 1, h, seen[("head", 1, h)][0] + delta) for h in range(cfg.n_heads)}
    g, _, _ = run(W, cfg, ids, new)
    t, u = lm.vocab.id(target), lm.vocab.id("<SEP>")
    assert abs(got.paths["attention 1"] - ((logits[t] - logits[u]) - (g[t] - g[u]))) < 1e-8


def test_copying_scores_agree_with_a_loop_over_the_eigenvalues(lm):
    W = weights(lm.model)
    ids = [lm.vocab.id(p) for p in PLAYERS]
    for L in range(2):
        for h in range(4):
            p = f"blocks.{L}.attn."
            full = W["W_E"][ids] @ W[p + "W_V"][h] @ W[p + "W_O"][h] @ W["W_E"].T[:, ids]
            eig = np.linalg.eigvals(full)
            want = sum(e.real for e in eig) / sum(abs(e) for e in eig)
            assert abs(copying_score(lm.model, L, h, ids) - want) < 1e-9
