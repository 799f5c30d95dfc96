"""Switching attention off: whole blocks, single heads, and what changes when you do.

The library's model takes `ablate=[(layer, head), ...]`: an ablated head writes nothing into the
residual stream (the per-head version of zeroing its slice of W_O). `ablation_view` is the pure
function behind the head-ablation explorer; `head_effects` ablates each head alone and measures
one token's probability; `without_attention` checks that switching every head off leaves a model
whose prediction at a position no longer depends on the tokens before it, and `context_blindness`
repeats that check over a set of prompts. (Counts over labelled prompt sets: `head_survey`.)
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from itertools import combinations
from typing import Iterable

import torch

from lib.errors import require
from lib.model.readout import prompt_logits, softmax, token_prob
from lib.model.transformer import Head


def all_heads(model) -> list[Head]:
    return [(layer, h) for layer in range(model.cfg.n_layers) for h in range(model.cfg.n_heads)]


def head_name(head: Head) -> str:
    return f"L{head[0]}H{head[1]}"


@dataclass(frozen=True)
class AblationView:
    tokens: list[str]
    off: tuple[Head, ...]
    page: list[tuple[str, float]]           # the best next tokens, best first
    patterns: dict[Head, list[list[float]]]  # every head's pattern [query, key] (ablated heads included:
                                             # they still look, they just write nothing)
    track: str
    track_prob: float
    track_prob_intact: float


def ablation_view(lm, prompt: str, off: Iterable[Head] = (), track: str | None = None, k: int = 8) -> AblationView:
    """What the head-ablation explorer shows for one prompt and one set of heads switched off."""
    ids = lm.encode(prompt)
    off = tuple(sorted(set(off)))
    intact = softmax(prompt_logits(lm, prompt))
    logits, cache = lm.model.run_with_cache(ids, ablate=off)
    probs = softmax(logits[-1])
    track_id = int(torch.argmax(intact)) if not track else lm.vocab.id(track)
    order = torch.argsort(probs, descending=True, stable=True)[:k].tolist()
    patterns = {(layer, h): cache[f"blocks.{layer}.attn.pattern"][h].tolist() for layer, h in all_heads(lm.model)}
    return AblationView(lm.vocab.decode(ids), off, [(lm.vocab.tokens[i], float(probs[i])) for i in order], patterns,
                        lm.vocab.tokens[track_id], float(probs[track_id]), float(intact[track_id]))


def head_effects(lm, prompt: str, token: str, pairs: bool = False) -> dict[tuple[Head, ...], float]:
    """P(token) after `prompt` with each head (and, if `pairs`, each pair of heads) switched off."""
    heads = all_heads(lm.model)
    groups = [()] + [(h,) for h in heads] + (list(combinations(heads, 2)) if pairs else [])
    return {group: token_prob(lm, prompt, token, ablate=group) for group in groups}


def zero_W_O(model):
    """A copy of `model` with every head's output matrix set to zero (method 2 of note 1, appendix A)."""
    clone = copy.deepcopy(model)
    with torch.no_grad():
        for block in clone.blocks:
            block.attn.W_O.zero_()
    return clone


def without_attention(lm, prompt: str, other_prefix: str) -> dict[str, float]:
    """Three ways to look at a model with attention switched off, on the last position of `prompt`:

    - `ablate_vs_zero_W_O`: the largest logit difference between ablating every head and zeroing W_O;
    - `prefix_effect_off`: with attention off, how much the logits change when the tokens before the
      last one are replaced by `other_prefix` (same length): zero, because positions no longer meet;
    - `prefix_effect_on`: the same change with attention on, for contrast.
    """
    ids = lm.encode(prompt)
    alt = lm.encode(other_prefix)
    require(len(alt) == len(ids) - 1, "the other prefix must have one token fewer than the prompt")
    alt = alt + ids[-1:]
    heads = all_heads(lm.model)
    with torch.no_grad():
        off = lm.model(ids, ablate=heads)[-1]
        zeroed = zero_W_O(lm.model)(ids)[-1]
        off_alt = lm.model(alt, ablate=heads)[-1]
        on, on_alt = lm.model(ids)[-1], lm.model(alt)[-1]
    return {"ablate_vs_zero_W_O": float((off - zeroed).abs().max()),
            "prefix_effect_off": float((off - off_alt).abs().max()),
            "prefix_effect_on": float((on - on_alt).abs().max())}


def context_blindness(lm, prompts, seed: int = 0) -> dict[str, float]:
    """`without_attention` over many prompts, each against a random context: every token between
    the first (<BOS>) and the last is replaced by a token drawn at random from the vocabulary.
    Returns the largest of each of the three figures over all prompts, and how many were compared."""
    rng = random.Random(seed)
    words = [t for t in lm.vocab.tokens if t != "<PAD>"]
    worst = {"ablate_vs_zero_W_O": 0.0, "prefix_effect_off": 0.0, "prefix_effect_on": 0.0}
    for prompt in prompts:
        text = getattr(prompt, "text", prompt)
        tokens = text.split()
        other = " ".join(tokens[:1] + [rng.choice(words) for _ in tokens[1:-1]])
        for key, value in without_attention(lm, text, other).items():
            worst[key] = max(worst[key], value)
    worst["prompts"] = len(prompts)
    return worst
