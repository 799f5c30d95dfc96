"""Path patching: along which route does one component's write reach the answer?

Ablating or patching a component measures its *total* effect: everything downstream recomputes, so
the change reaches the logits along every route at once. Path patching (Wang et al. 2022, "Interpretability
in the wild"; Goldowsky-Dill et al. 2023) splits that effect by the first component the write passes
through on its way to the logits, its *receiver*:

- `direct`: the write itself, read by the unembedding at the last position;
- `MLP L` for an MLP after the sender (the sender's own layer's MLP reads its write too);
- `attention L` for a later layer's heads together, and `LxHy` for each of them alone (through their
  queries, keys and values alike).

The sender's write is changed at one position, from its value in the *base* run to a *new* value (its
value on a corrupted prompt, its role-matched mean, ...). For a receiver R, two runs:

1. the base prompt with the sender's write changed and every other head's write and MLP's output frozen
   at its base value, except R's: R's input is then the base input plus the sender's change alone, and
   its output is recorded;
2. the base prompt with R's output replaced by that recorded output, everything else (the sender
   included) left to compute freely: R's changed output travels on to the logits by every route after R.

The path's effect is how much that moves the logit difference (target minus rival at the last
position): `effect = base - patched`, positive when the path carried what the new value removes. The
direct path needs no second run: the base residual stream plus the sender's change, read out.
`total` changes the sender alone with everything free. Routes interact (the model is not linear), so
the paths need not add up to the total; `PathEffects.rest` says by how much they do not.

Noising and denoising are the two choices of base: the clean prompt with a corrupted (or ablated)
sender (`noise`: what each path carries of the answer), or the corrupted prompt with the clean sender
(`denoise`: how much of the answer each path brings back).

Everything runs in double precision on the model's double twin (`patching.double_model`).

`copying_score` measures a head's OV circuit on a set of tokens: +1 for a head that raises the logit of
whatever token it attends to (copying), -1 for one that lowers it (copy suppression).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from lib.analysis.ablation import head_name
from lib.analysis.patching import double_model
from lib.errors import require
from lib.model.transformer import Head

DIRECTIONS = ("noise", "denoise")


@dataclass(frozen=True)
class PathEffects:
    sender: str                 # e.g. "L0H3"
    position: int
    target: str
    against: str
    base_diff: float            # logit(target) - logit(against) on the base run
    total: float                # base - patched with the sender changed and everything free
    paths: dict[str, float]     # receiver -> base - patched along that path alone

    @property
    def rest(self) -> float:
        """What the first-hop paths (direct, every MLP, every later layer's heads together) leave of the total:
        the interactions between routes."""
        firsts = [v for k, v in self.paths.items() if k == "direct" or k.startswith(("MLP", "attention"))]
        return self.total - sum(firsts)


def receivers(cfg, layer: int) -> list[tuple[str, tuple]]:
    """The components after a sender in `layer`, in forward order: (name, what it is), where what it is
    is ("mlp", L) or ("heads", L, (h, ...))."""
    out = []
    for L in range(layer, cfg.n_layers):
        if L > layer:
            out.append((f"attention {L}", ("heads", L, tuple(range(cfg.n_heads)))))
            out += [(head_name((L, h)), ("heads", L, (h,))) for h in range(cfg.n_heads)]
        if cfg.has_mlp:
            out.append((f"MLP {L}", ("mlp", L)))
    return out


def _writes(cfg):
    names = [f"blocks.{L}.attn.head_out" for L in range(cfg.n_layers)]
    return names + ([f"blocks.{L}.mlp_out" for L in range(cfg.n_layers)] if cfg.has_mlp else [])


def _replace(value, heads=None, position=None, keep_heads=()):
    """A hook writing `value` (the cache's [position, head, d] or [position, d]) into x, for the listed
    heads only (all of them if None), sparing `keep_heads`; with `position`, at that position only."""
    def hook(x, _):
        out = x.clone()
        hs = list(range(x.shape[1])) if heads is None and x.dim() == 3 else heads
        if x.dim() == 3:
            for h in hs:
                if h in keep_heads:
                    continue
                if position is None:
                    out[:, h] = value[:, h]
                else:
                    out[position, h] = value[position, h]
        else:
            if position is None:
                out[:] = value
            else:
                out[position] = value[position]
        return out
    return hook


def path_patch(lm, tokens, sender: Head, position: int, new_value: torch.Tensor, target: str, against: str) -> PathEffects:
    """The effect of changing `sender`'s write at `position` of the prompt `tokens` (the base run) to
    `new_value` [d_model], along each path (see the module's docstring), on logit(target) -
    logit(against) at the last position."""
    model = double_model(lm.model)
    cfg = model.cfg
    ids = lm.encode(tokens) if isinstance(tokens, str) else list(tokens)
    layer, head = sender
    require(0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads, f"no head {head_name(sender)} in {lm.name}")
    position = position % len(ids)
    t, u = lm.vocab.id(target), lm.vocab.id(against)
    with torch.no_grad():
        logits, base = model.run_with_cache(ids)
    base_diff = float(logits[-1, t] - logits[-1, u])
    send_name = f"blocks.{layer}.attn.head_out"
    changed = base[send_name].clone()
    changed[position, head] = torch.as_tensor(new_value, dtype=changed.dtype)

    def diff(hooks) -> float:
        with torch.no_grad():
            out = model.run_with_hooks(ids, fwd_hooks=hooks)
        return float(out[-1, t] - out[-1, u])

    sender_hook = (send_name, _replace(changed, [head]))
    total = base_diff - diff([sender_hook])
    paths = {}
    # Direct: the base residual stream plus the sender's change, read out at the last position.
    delta = torch.zeros_like(base["resid_final"])
    delta[position] = changed[position, head] - base[send_name][position, head]
    final = base["resid_final"] + delta
    if model.ln_final is not None:
        final = model.ln_final(final)
    direct = final[-1] @ model.W_U + model.b_U
    paths["direct"] = base_diff - float(direct[t] - direct[u])
    for name, (kind, L, *rest) in receivers(cfg, layer):
        spare = rest[0] if kind == "heads" else ()
        # Run 1: everything frozen at the base run but the sender (changed) and the receiver (free).
        freeze = []
        for w in _writes(cfg):
            if w == send_name:
                freeze.append((w, _replace(base[w], None, None, keep_heads=(head,))))
            elif kind == "heads" and w == f"blocks.{L}.attn.head_out":
                freeze.append((w, _replace(base[w], None, None, keep_heads=spare)))
            elif kind == "mlp" and w == f"blocks.{L}.mlp_out":
                continue
            else:
                freeze.append((w, _replace(base[w])))
        with torch.no_grad():
            _, run1 = model.run_with_cache(ids, fwd_hooks=freeze + [sender_hook])
        # Run 2: the base run with the receiver's output from run 1, everything else free.
        if kind == "mlp":
            hook = (f"blocks.{L}.mlp_out", _replace(run1[f"blocks.{L}.mlp_out"]))
        else:
            hook = (f"blocks.{L}.attn.head_out", _replace(run1[f"blocks.{L}.attn.head_out"], list(spare)))
        paths[name] = base_diff - diff([hook])
    return PathEffects(head_name(sender), position, target, against, base_diff, total, paths)


def copying_score(model, layer: int, head: int, token_ids) -> float:
    """The head's OV circuit restricted to `token_ids`, W_E W_V W_O W_U (tokens x tokens), read by its
    eigenvalues: sum(eigenvalues) / sum(|eigenvalues|) (Elhage et al. 2021). +1: attending to a token
    raises that token's logit (copying); -1: lowers it (copy suppression)."""
    with torch.no_grad():
        W_E = model.W_E.double()[list(token_ids)]
        W_U = model.W_U.double()[:, list(token_ids)]
        ov = model.blocks[layer].attn.W_V[head].double() @ model.blocks[layer].attn.W_O[head].double()
        full = (W_E @ ov @ W_U).numpy()
    eig = np.linalg.eigvals(full)
    return float(eig.sum().real / np.abs(eig).sum())


__all__ = ["DIRECTIONS", "PathEffects", "copying_score", "path_patch", "receivers"]
