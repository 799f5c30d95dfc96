"""The read-out: from a prompt's logits to a ranked results page and a chosen next token.

This module is the one home of the last step: the logits for a prompt (`prompt_logits`), the
softmax with its temperature, top-k and top-p, the sampling distribution they make together,
greedy and seeded picks, and the ranked page. Every knob is validated here, once, so the command
line, the explorers, the chapters and the exercise checks share the same rules and messages.

The order of the knobs is the one Hugging Face's samplers use: divide the logits by the
temperature, softmax, keep the k best, share their probability out again, then keep the smallest
set of best survivors whose (shared-out) probabilities reach p, and share out once more.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from lib.errors import require
from lib.messages import say
# The read-out's knobs are checked in lib.model.knobs (no torch: the command line checks them before it loads
# anything); named here too, where the read-out's callers have always found them.
from lib.model.knobs import (MAX_SEED, MIN_TEMPERATURE, TOP_P_FLOOR, check_seed, check_temperature,  # noqa: F401
                             check_top_k, check_top_p)


def prompt_logits(lm, prompt, ablate=(), ablate_mlps=()) -> torch.Tensor:
    """The model's logits for the token after `prompt` (double precision), optionally with heads
    (`ablate`: (layer, head) pairs) and MLPs (`ablate_mlps`: layers) switched off."""
    with torch.no_grad():
        return lm.model(lm.encode(prompt), ablate=ablate, ablate_mlps=ablate_mlps)[-1].double()


def last_logits(lm, prompts, ablate=(), ablate_mlps=()) -> torch.Tensor:
    """The logits for the token after each of several prompts, [prompt, vocab] (double precision),
    in one pass over a right-padded batch: a causal model's last real position never sees the
    padding after it, so each row equals `prompt_logits` of that prompt alone."""
    encoded = [lm.encode(p) for p in prompts]
    require(len(encoded) > 0, "give at least one prompt")
    width = max(len(ids) for ids in encoded)
    pad = lm.vocab.id("<PAD>") if "<PAD>" in lm.vocab else 0
    batch = torch.tensor([ids + [pad] * (width - len(ids)) for ids in encoded])
    last = torch.tensor([len(ids) - 1 for ids in encoded])
    with torch.no_grad():
        logits = lm.model(batch, ablate=ablate, ablate_mlps=ablate_mlps)
    return logits[torch.arange(len(encoded)), last].double()


def softmax(logits, temperature: float = 1.0) -> torch.Tensor:
    """Probabilities from logits at a temperature (1 leaves them as trained), in double precision."""
    t = check_temperature(temperature)
    z = torch.as_tensor(logits, dtype=torch.float64) / t
    require(bool(torch.isfinite(z).all()),
            say("logits_not_finite", t=f"{t:g}"))
    return torch.softmax(z, dim=-1)


def next_distribution(lm, prompt, temperature: float = 1.0, ablate=(), ablate_mlps=()) -> dict[str, float]:
    """P(next token) after `prompt`, as {token: probability}, in vocabulary order."""
    probs = softmax(prompt_logits(lm, prompt, ablate, ablate_mlps), temperature)
    return dict(zip(lm.vocab.tokens, probs.tolist()))


def token_prob(lm, prompt, token: str, temperature: float = 1.0, ablate=(), ablate_mlps=()) -> float:
    """P(`token` comes next) after `prompt`, with the listed heads and MLPs switched off."""
    probs = softmax(prompt_logits(lm, prompt, ablate, ablate_mlps), temperature)
    return float(probs[lm.vocab.id(token)])


def truncation_mask(probs: torch.Tensor, top_k: int | None = None, top_p: float | None = None) -> torch.Tensor:
    """Which tokens survive top-k and then top-p (a boolean mask over the vocabulary).

    Top-p is judged on the probabilities shared out among the top-k survivors, so `top_k=5,
    top_p=0.5` keeps the smallest set of the five whose share of the five's mass reaches one half.
    The best token always survives."""
    probs = torch.as_tensor(probs, dtype=torch.float64)
    top_k = check_top_k(top_k, probs.shape[-1])
    top_p = check_top_p(top_p)
    order = torch.argsort(probs, descending=True, stable=True)
    keep_sorted = torch.ones_like(probs, dtype=torch.bool)
    if top_k is not None:
        keep_sorted[top_k:] = False
    if top_p is not None and top_p < 1:          # top-p 1 keeps every token: truncation off
        sorted_p = probs[order] * keep_sorted
        sorted_p = sorted_p / sorted_p.sum()
        before = torch.cumsum(sorted_p, 0) - sorted_p
        # Keep a token while the mass of the better survivors is still short of p: the set is the
        # smallest whose mass reaches p (the tolerance absorbs rounding in the running sum).
        keep_sorted &= before < top_p - TOP_P_FLOOR
        keep_sorted[0] = True
    mask = torch.zeros_like(keep_sorted)
    mask[order] = keep_sorted
    return mask


def reshape(logits, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None) -> torch.Tensor:
    """The sampling distribution: temperature, then truncation, then renormalisation."""
    probs = softmax(logits, temperature)
    mask = truncation_mask(probs, top_k, top_p)
    kept = probs * mask
    return kept / kept.sum()


def greedy(logits) -> int:
    return int(torch.argmax(torch.as_tensor(logits)))


# ----------------------------------------------------------------------------- seeded rolls
# One generator for every seeded roll, in the kernel and in the website's page (the same lines,
# in JavaScript, are in lib/explorers/js/readout.js), so that a seed picks the same token in both:
# SplitMix64 (Steele, Lea and Flood, 2014) read as a counter-based stream. The n-th number of seed
# s is mix(s + (n + 1) * GAMMA), its top 53 bits divided by 2**53: a double in [0, 1) that
# depends on (s, n) alone. The roll is then inverse-CDF: walk the tokens in vocabulary order,
# adding their probabilities, and pick the first whose running total exceeds u times the whole.
_GAMMA = 0x9E3779B97F4A7C15
_MASK64 = 2**64 - 1


def splitmix64(seed: int, n: int) -> int:
    """The n-th (from 0) 64-bit output of SplitMix64 started at `seed`."""
    z = (seed + (n + 1) * _GAMMA) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


class Rolls:
    """A seeded stream of uniform numbers in [0, 1): the n-th call returns the stream's n-th number."""

    def __init__(self, seed: int = 0):
        self.seed = check_seed(seed)
        self.count = 0

    def next(self) -> float:
        u = (splitmix64(self.seed, self.count) >> 11) / 2**53
        self.count += 1
        return u


def inverse_cdf(probs, u: float) -> int:
    """The token whose slice of [0, total) holds u * total, slices laid in vocabulary order.

    The running total is a plain left-to-right sum in double precision (the page adds the same
    way), and a token of probability zero has an empty slice, so it is never picked."""
    p = torch.as_tensor(probs, dtype=torch.float64).tolist()
    running = []
    total = 0.0
    for x in p:
        total += x
        running.append(total)
    target = u * total
    for i, r in enumerate(running):
        if r > target:
            return i
    return max(i for i, x in enumerate(p) if x > 0)     # u * total rounded up to the total


def sample(logits, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
           seed: int | None = None, generator: Rolls | torch.Generator | None = None) -> int:
    """Draw one token id from the reshaped distribution by inverse CDF; the same seed always draws
    the same token, here and on the website. `generator` continues a stream (a `Rolls`, as
    generation does; a torch.Generator is also accepted, for callers that keep one)."""
    probs = reshape(logits, temperature, top_k, top_p)
    if generator is None:
        generator = Rolls(0 if seed is None else check_seed(seed))
    if isinstance(generator, Rolls):
        u = generator.next()
    else:
        u = float(torch.rand((), generator=generator, dtype=torch.float64))
    return inverse_cdf(probs, u)


@dataclass(frozen=True)
class Candidate:
    token: str
    prob: float
    logit: float


def results_page(logits, tokens: list[str], temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None) -> list[Candidate]:
    """The ranked list of next tokens, best first; with top-k or top-p only the survivors."""
    logits = torch.as_tensor(logits, dtype=torch.float64)
    probs = reshape(logits, temperature, top_k, top_p)
    order = torch.argsort(probs, descending=True, stable=True)
    return [Candidate(tokens[i], float(probs[i]), float(logits[i])) for i in order.tolist() if probs[i] > 0]


def entropy_bits(probs) -> float:
    p = torch.as_tensor(probs, dtype=torch.float64)
    p = p[p > 0]
    return float(-(p * torch.log2(p)).sum())


def top1_margin(probs) -> float:
    """How far the best token is ahead of the second: a readable sign of a confident search."""
    p = torch.sort(torch.as_tensor(probs, dtype=torch.float64), descending=True).values
    return float(p[0] - p[1]) if len(p) > 1 else float(p[0])
