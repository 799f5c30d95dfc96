"""Explorers: pure functions from the controls' values to what an explorer shows.

The explorers' definitions (lib.explorers.catalogue) call these on every change in a kernel; the
website's page computes the same views with its own twins (lib/explorers/js/views.js), which the
tests hold to these. Each one validates its controls with the library's own checks, so a bad value
raises `CourseError` with a sentence the explorer shows in its message line.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from lib.errors import CourseError, require
from lib.messages import say
from lib.analysis.lens import logit_lens
from lib.model.readout import (MAX_SEED, check_seed, check_temperature, check_top_k, check_top_p, greedy,
                               prompt_logits, reshape, results_page, sample, softmax)


def temperature_page(lm, prompt: str, temperature: float, k: int = 10) -> list[tuple[str, float]]:
    """The top-k candidates after `prompt` at `temperature`, best first, as (token, prob)."""
    page = results_page(prompt_logits(lm, prompt), lm.vocab.tokens, temperature)
    return [(c.token, c.prob) for c in page[:k]]


def parse_top_k(text) -> int | None:
    """A top-k typed in a box: blank means no limit, otherwise a whole number of at least 1."""
    text = str(text).strip()
    if text.lower() in ("", "all", "none"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise CourseError(say("top_k_text", got=repr(text))) from None
    return check_top_k(value)


def parse_top_p(text) -> float | None:
    """A top-p typed in a box: blank means no limit, otherwise a number in (0, 1]."""
    text = str(text).strip()
    if text.lower() in ("", "all", "none"):
        return None
    return check_top_p(text)


def parse_seed(text) -> int:
    """A seed typed in a box: a whole number from 0 to 2**63 - 1."""
    text = str(text).strip()
    try:
        value = int(text)
    except ValueError:
        raise CourseError(say("seed", maximum=MAX_SEED, got=repr(text))) from None
    return check_seed(value)


def parse_position(text, n_tokens: int) -> int:
    """A position typed in a box, counted from 0 (the first token); blank means the last."""
    text = str(text).strip()
    if text.lower() in ("", "last"):
        return n_tokens - 1
    try:
        value = int(text)
    except ValueError:
        value = -1
    require(0 <= value < n_tokens, say("position", last=n_tokens - 1, n=n_tokens, got=repr(text)))
    return value


@dataclass(frozen=True)
class SamplingRow:
    token: str
    base: float       # probability as trained (temperature 1)
    heated: float     # after the temperature, before truncation
    final: float      # the distribution the die is rolled on (0 if truncated away)


@dataclass(frozen=True)
class SamplingView:
    rows: list[SamplingRow]   # the best candidates, best first
    chosen: str
    chosen_prob: float        # its probability in the final distribution
    survivors: int            # how many tokens the truncation keeps
    greedy: bool


def sampling_view(lm, prompt: str, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None, use_greedy: bool = False, seed: int = 0,
                  k: int = 10, logits: torch.Tensor | None = None) -> SamplingView:
    """What the sampling explorer shows: the reshaped page, what survives, and one seeded roll.

    `logits` may be given when they are already known for this prompt (the website's grid rolls
    thousands of times on the same four prompts)."""
    t = check_temperature(temperature)
    if logits is None:
        logits = prompt_logits(lm, prompt)
    base, heated = softmax(logits), softmax(logits, t)
    final = reshape(logits, t, top_k, top_p)
    order = torch.argsort(base, descending=True, stable=True).tolist()
    tokens = lm.vocab.tokens
    rows = [SamplingRow(tokens[i], float(base[i]), float(heated[i]), float(final[i])) for i in order[:k]]
    chosen = greedy(logits) if use_greedy else sample(logits, t, top_k, top_p, seed=seed)
    return SamplingView(rows, tokens[chosen], float(final[chosen]), int((final > 0).sum()), use_greedy)


@dataclass(frozen=True)
class LensView:
    stages: list[str]                          # forward order, embedding first
    top: list[list[tuple[str, float]]]         # per stage, the k best (token, prob)
    track: str                                 # the token followed across stages
    track_probs: list[float]                   # its probability after each stage
    track_ranks: list[int]                     # its rank after each stage (1 = top)
    position: int = -1                         # the position read, counted from 0


def lens_view(lm, prompt: str, track: str | None = None, k: int = 3, position: int = -1) -> LensView:
    """The logit lens at one position (the last by default): the ranking after each stage and one
    token's climb.

    `track` defaults to the model's final top-1 token at that position.
    """
    ids = lm.encode(prompt)
    require(isinstance(position, int) and -len(ids) <= position < len(ids),
            f"position must be a whole number from 0 to {len(ids) - 1}, got {position!r}")
    position = position % len(ids)
    stages = logit_lens(lm.model, ids, position)
    tokens = lm.vocab.tokens
    track_id = int(torch.argmax(stages[-1].probs)) if track in (None, "") else lm.vocab.id(str(track).strip())
    top, probs, ranks = [], [], []
    for s in stages:
        order = torch.argsort(s.probs, descending=True, stable=True).tolist()
        top.append([(tokens[i], float(s.probs[i])) for i in order[:k]])
        probs.append(float(s.probs[track_id]))
        ranks.append(order.index(track_id) + 1)
    return LensView([s.name for s in stages], top, tokens[track_id], probs, ranks, position)


@dataclass(frozen=True)
class PatternView:
    tokens: list[str]
    layer: int
    head: int
    pattern: list[list[float]]   # [query, key], rows sum to 1, zero above the diagonal


def pattern_view(lm, prompt: str, layer: int, head: int) -> PatternView:
    """One head's attention pattern on a prompt (the attention-pattern viewer)."""
    ids = lm.encode(prompt)
    cfg = lm.model.cfg
    if not (isinstance(layer, int) and 0 <= layer < cfg.n_layers and isinstance(head, int) and 0 <= head < cfg.n_heads):
        raise CourseError(f"head (layer {layer!r}, head {head!r}) does not exist: layers run 0 to {cfg.n_layers - 1}, "
                          f"heads 0 to {cfg.n_heads - 1}")
    _, cache = lm.model.run_with_cache(ids)
    return PatternView(lm.vocab.decode(ids), layer, head, cache[f"blocks.{layer}.attn.pattern"][head].tolist())
