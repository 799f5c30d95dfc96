"""The read-out: from a row of logits to a ranked results page and a chosen next token.

Temperature divides the logits before the softmax; top-k keeps the k best; top-p keeps the
smallest set of best tokens whose probabilities reach p. Every knob is validated here, once, so
the command line and the widgets share the same messages.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from lib.errors import CourseError, require


def check_temperature(t) -> float:
    try:
        t = float(t)
    except (TypeError, ValueError):
        raise CourseError(f"temperature must be a positive number, got {t!r}") from None
    require(math.isfinite(t) and t > 0, f"temperature must be a positive finite number, got {t}")
    return t


def check_top_k(k, vocab_size: int | None = None) -> int | None:
    if k is None:
        return None
    require(isinstance(k, (int,)) and not isinstance(k, bool) and k >= 1,
            f"top-k must be a whole number of at least 1, got {k!r}")
    return k if vocab_size is None else min(k, vocab_size)


def check_top_p(p) -> float | None:
    if p is None:
        return None
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise CourseError(f"top-p must be a number in (0, 1], got {p!r}") from None
    require(math.isfinite(p) and 0 < p <= 1, f"top-p must lie in (0, 1], got {p}")
    return p


def softmax(logits, temperature: float = 1.0) -> torch.Tensor:
    """Probabilities from logits at a temperature (1 leaves them as trained)."""
    t = check_temperature(temperature)
    return torch.softmax(torch.as_tensor(logits, dtype=torch.float64) / t, dim=-1)


def truncation_mask(probs: torch.Tensor, top_k: int | None = None, top_p: float | None = None) -> torch.Tensor:
    """Which tokens survive top-k and then top-p truncation (a boolean mask over the vocabulary)."""
    top_k = check_top_k(top_k, probs.shape[-1])
    top_p = check_top_p(top_p)
    order = torch.argsort(probs, descending=True, stable=True)
    keep_sorted = torch.ones_like(probs, dtype=torch.bool)
    if top_k is not None:
        keep_sorted[top_k:] = False
    if top_p is not None:
        sorted_p = probs[order] * keep_sorted
        before = torch.cumsum(sorted_p, 0) - sorted_p
        # Keep a token while the mass of the better tokens is still short of p: the best one
        # always survives, and the set is the smallest whose mass reaches p.
        keep_sorted &= before < top_p - 1e-12
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


def sample(logits, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
           seed: int | None = None, generator: torch.Generator | None = None) -> int:
    """Draw one token id; the same seed always draws the same token."""
    probs = reshape(logits, temperature, top_k, top_p)
    if generator is None:
        generator = torch.Generator()
        generator.manual_seed(0 if seed is None else int(seed))
    return int(torch.multinomial(probs.float(), 1, generator=generator))


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
