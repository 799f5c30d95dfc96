"""SmolLM2's induction heads on a text the reader types: the chapter's explorer of the real model.

The reader's text is read twice in a row, token for token (its ids, then the same ids again): the second copy
can be predicted only by copying, as the toy's sequences are. On that sequence, as the chapter's measurement
on random tokens (`real`) does:

- every head's previous-token score (its mean attention from each position to the one before) and induction
  score (from each position of the second copy to the position after the same token's first occurrence),
  a head counting as a previous-token head from `FORMED_PREVIOUS`, an induction head from `FORMED`: heads are
  found by their role on this text, never by name;
- the copy: the share of the second copy's tokens (its first left out) that are the model's top choice, and
  its loss, with a group of heads switched off and without: the induction heads found, the previous-token
  heads found, as many heads drawn at random from the others (`draw`: the control any claim of necessity
  needs), the chosen head alone, or the chosen layer's nine;
- the chosen head's whole pattern.

Switching off is zero or mean ablation of each head's output (its `z`, before W_O: the head's write is z W_O,
so the two are the same): zero sets it to 0 at every position; mean sets it, at every position but the first,
to its mean over this sequence's positions but the first (the first position is where every head writes its
own token's value, far from its usual write, and is left as it is). The page runs the same
(lib/explorers/js/smollm2/ops.js `induction`), held to this by tests/explorers/test_smollm2.py.
"""
from __future__ import annotations

import numpy as np
import torch

from lib.analysis.induction import FORMED, FORMED_PREVIOUS
from lib.chapters.part1.induction.real import head_scores
from lib.errors import CourseError, require
from lib.messages import say
from lib.model.readout import Rolls

GROUPS = ("none", "induction", "previous", "random", "head", "layer")
GROUP_SHOWN = ("none", "the induction heads found", "the previous-token heads found",
               "as many random heads as induction heads", "the chosen head", "the chosen layer's heads")
KINDS = ("zero", "mean")
DRAW_SEED = 0
# The text read once may be at most this many tokens: twice, it fills the page's longest text (lib.explorers.smollm2).
MAX_TEXT = 64


def sequence(lm, text: str, repeat: bool = True) -> list[int]:
    """The ids the model reads: the text's, then (repeat) the same ids again."""
    ids = lm.encode(text)
    require(len(ids) <= MAX_TEXT, say("smol_text_long", n=len(ids), most=MAX_TEXT, twice=2 * MAX_TEXT))
    return ids + ids if repeat else ids


def draw(k: int, pool: list[tuple[int, int]], seed: int = DRAW_SEED) -> list[tuple[int, int]]:
    """`k` heads drawn from `pool` (in its order) without repeats, by the course's seeded rolls (SplitMix64, as the
    page draws them): at each step the next number of the stream picks one of the heads left."""
    rolls, left, out = Rolls(seed), list(pool), []
    for _ in range(min(k, len(left))):
        out.append(left.pop(int(rolls.next() * len(left))))
    return sorted(out)


def chosen_heads(group: str, prev: np.ndarray, ind: np.ndarray | None, layer: int, head: int) -> list[tuple[int, int]]:
    L, H = prev.shape
    every = [(a, b) for a in range(L) for b in range(H)]
    if group == "none":
        return []
    if group == "head":
        return [(layer, head)]
    if group == "layer":
        return [(layer, h) for h in range(H)]
    if group == "previous":
        return [(a, b) for a, b in every if prev[a, b] >= FORMED_PREVIOUS]
    require(ind is not None, say("smol_induction_twice"))
    found = [(a, b) for a, b in every if ind[a, b] >= FORMED]
    if group == "induction":
        return found
    return draw(len(found), [x for x in every if x not in found])


def head_label(h: tuple[int, int]) -> str:
    return f"L{h[0]}H{h[1]}"


def _off_hooks(off: list[tuple[int, int]], kind: str, z_clean: dict[int, torch.Tensor]):
    by_layer: dict[int, list[int]] = {}
    for layer, h in off:
        by_layer.setdefault(layer, []).append(h)
    hooks = []
    for layer, heads in by_layer.items():
        def hook(z, name, heads=heads, layer=layer):
            out = z.clone()                                   # [T, head, d_head] (one prompt)
            if kind == "zero":
                out[:, heads] = 0
            else:
                mean = z_clean[layer][1:, heads].mean(0)      # over positions 1.. of this sequence
                out[1:, heads] = mean
            return out
        hooks.append((f"blocks.{layer}.attn.z", hook))
    return hooks


def _next_probs(logits: torch.Tensor, ids: list[int]) -> list[float]:
    p = torch.softmax(logits.double(), -1)
    return [float(p[t, ids[t + 1]]) for t in range(len(ids) - 1)]


def _copy(probs: list[float], logits: torch.Tensor, ids: list[int], period: int) -> dict:
    """The second copy, its first token left out: the share the model's top choice gets right, and the loss."""
    at = range(period, 2 * period - 1)
    top = logits[list(at)].argmax(-1).tolist()
    right = [top[i] == ids[t + 1] for i, t in enumerate(at)]
    return {"accuracy": float(np.mean(right)), "loss": float(-np.mean(np.log([probs[t] for t in at]))), "n": len(right)}


def run(lm, text: str, repeat: bool = True, group: str = "induction", kind: str = "zero", layer: int = 0,
        head: int = 0) -> dict:
    """The explorer's view (the module's note)."""
    group, kind = str(group), str(kind)
    if group not in GROUPS:
        raise CourseError(f"switch off one of: {', '.join(GROUPS)}; got {group}")
    if kind not in KINDS:
        raise CourseError(f"the ablation is zero or mean; got {kind}")
    L, H = lm.cfg.n_layers, lm.cfg.n_heads
    layer, head = int(layer), int(head)
    require(0 <= layer < L and 0 <= head < H, f"the head is a layer from 0 to {L - 1} and a head from 0 to {H - 1}")
    ids = sequence(lm, text, bool(repeat))
    T, period = len(ids), (len(ids) // 2 if repeat else None)
    require(T >= 2, say("smol_text_short"))
    kept: dict[str, torch.Tensor] = {}

    def record(x, name):
        kept[name] = x.detach().clone()
    wanted = lambda name: name.endswith(".attn.pattern") or name.endswith(".attn.z")   # noqa: E731
    with torch.no_grad():
        logits = lm.model.run_with_hooks(ids, fwd_hooks=[(wanted, record)])
    patterns = [kept[f"blocks.{b}.attn.pattern"][None] for b in range(L)]
    if repeat:
        prev, ind = head_scores(patterns, period)
    else:
        prev = np.stack([p[0, :, torch.arange(1, T), torch.arange(T - 1)].mean(-1).numpy() for p in patterns]).astype(float)
        ind = None
    off = chosen_heads(group, prev, ind, layer, head)
    clean_probs = _next_probs(logits, ids)
    out = {"tokens": lm.vocab.decode(ids), "period": period, "layer": layer, "head": head,
           "pattern": kept[f"blocks.{layer}.attn.pattern"][head].tolist(),
           "prev": prev.tolist(), "ind": None if ind is None else ind.tolist(),
           "formed": FORMED, "formed_previous": FORMED_PREVIOUS,
           "group": group, "kind": kind, "off": [head_label(h) for h in off],
           "clean": clean_probs, "ablated": None, "copy": None, "copy_off": None}
    if off:
        z = {b: kept[f"blocks.{b}.attn.z"] for b in range(L)}
        with torch.no_grad():
            ablated = lm.model.run_with_hooks(ids, fwd_hooks=_off_hooks(off, kind, z))
        out["ablated"] = _next_probs(ablated, ids)
    if repeat:
        out["copy"] = _copy(clean_probs, logits, ids, period)
        if off:
            out["copy_off"] = _copy(out["ablated"], ablated, ids, period)
    return out
