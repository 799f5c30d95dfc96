"""What the query's length does to the page, and what the unembedding's bias and a final LayerNorm change.

The logits are `s * h @ W_U + b_U` when the query `h` is scaled by `s`. Without the bias `b_U` every
logit scales with `s`, so the order of the words never changes and only the sharpness of the page
does. With the bias, a short query lets the fixed per-word bias weigh more, and near-tied words can
swap places: `winners` and `winner_flips` count where that happens. The same bias is why dividing the
logits by a temperature is not quite scaling the query: the temperature divides the bias too.

A final LayerNorm fixes the query's length within a narrow band, so a model that has one cannot be
more confident by making its query longer; `length_and_confidence` measures what it uses instead:
how squarely the query points at its best word's column.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.analysis.search import model_query, query_from_cache
from lib.errors import require
from lib.model.readout import check_temperature, softmax

# Scales of the query the mechanism chapter sweeps: from a twentieth of its length to twice it.
SCALES = tuple(np.geomspace(0.05, 2, 40))


def _unembedding(lm):
    return lm.model.W_U.detach().double().numpy(), lm.model.b_U.detach().double().numpy()


def scaled_logits(lm, prompt: str, scales, bias: bool = True) -> np.ndarray:
    """The logits [scale, vocab] with the model's query for `prompt` multiplied by each of `scales`
    (the bias left as it is)."""
    W_U, b_U = _unembedding(lm)
    z = np.outer(np.asarray(scales, dtype=float), model_query(lm, prompt) @ W_U)
    return z + b_U if bias else z


@dataclass(frozen=True)
class ScaledPage:
    scales: tuple[float, ...]
    winners: list[str]        # the top word at each scale
    top_probs: list[float]    # its probability

    @property
    def distinct_winners(self) -> list[str]:
        return list(dict.fromkeys(self.winners))

    def flip_scale(self) -> float | None:
        """The first scale at which the winner differs from the one at the smallest scale."""
        return next((s for s, w in zip(self.scales, self.winners) if w != self.winners[0]), None)


def winners(lm, prompt: str, scales=SCALES, bias: bool = True) -> ScaledPage:
    pages = softmax(scaled_logits(lm, prompt, scales, bias)).numpy()
    return ScaledPage(tuple(scales), [lm.vocab.tokens[i] for i in pages.argmax(1)], pages.max(1).tolist())


def tie_scale(lm, prompt: str, a: str, b: str) -> float | None:
    """The scale of the query at which words `a` and `b` tie: their dot-product gap grows with the
    scale, their bias gap does not. None if they never tie at a positive scale."""
    W_U, b_U = _unembedding(lm)
    i, j = lm.vocab.id(a), lm.vocab.id(b)
    dots = model_query(lm, prompt) @ W_U
    if dots[i] == dots[j]:
        return None
    s = (b_U[j] - b_U[i]) / (dots[i] - dots[j])
    return float(s) if s > 0 else None


def winner_flips(lm, prompts, scales=SCALES, bias: bool = True) -> int:
    """How many of `prompts` have more than one winner as their query is scaled."""
    return sum(len(winners(lm, p, scales, bias).distinct_winners) > 1 for p in prompts)


def temperature_vs_length(lm, prompt: str, temperature: float) -> tuple[float, float]:
    """The largest probability gap between dividing the logits by `temperature` and dividing only
    the query by it, (with the model's bias, without it). Without the bias the two are one operation."""
    t = check_temperature(temperature)
    gaps = []
    for bias in (True, False):
        by_temperature = softmax(scaled_logits(lm, prompt, [1.0], bias), t).numpy()
        by_length = softmax(scaled_logits(lm, prompt, [1 / t], bias)).numpy()
        gaps.append(float(np.abs(by_temperature - by_length).max()))
    return gaps[0], gaps[1]


def rank_correlation(a, b) -> float:
    """Spearman's rank correlation (no ties expected in measured floats)."""
    ra = np.argsort(np.argsort(np.asarray(a)))
    rb = np.argsort(np.argsort(np.asarray(b)))
    return float(np.corrcoef(ra, rb)[0, 1])


@dataclass(frozen=True)
class LengthAndConfidence:
    raw_lengths: np.ndarray      # the residual stream's length before the final LayerNorm
    query_lengths: np.ndarray    # the query's length (after the LayerNorm, if any)
    alignments: np.ndarray       # cosine between the query and its top word's column
    top_probs: np.ndarray        # the top word's probability

    def correlation_with(self, name: str) -> float:
        """Rank correlation between the top probability and `raw_lengths`, `query_lengths` or `alignments`."""
        return rank_correlation(self.top_probs, getattr(self, name))


def length_and_confidence(lm, prompts) -> LengthAndConfidence:
    prompts = list(prompts)
    require(len(prompts) >= 2, "length_and_confidence needs at least two prompts")
    W_U, _ = _unembedding(lm)
    rows = []
    for p in prompts:
        logits, cache = lm.model.run_with_cache(lm.encode(p))   # one pass gives all three
        raw = cache["resid_final"][-1].double().numpy()
        query = query_from_cache(lm, cache)
        probs = softmax(logits[-1].double()).numpy()
        top = int(probs.argmax())
        column = W_U[:, top]
        cos = float(query @ column / (np.linalg.norm(query) * np.linalg.norm(column)))
        rows.append((np.linalg.norm(raw), np.linalg.norm(query), cos, probs[top]))
    raw, q, cos, top = (np.array(c) for c in zip(*rows))
    return LengthAndConfidence(raw, q, cos, top)


__all__ = ["SCALES", "scaled_logits", "ScaledPage", "winners", "tie_scale", "winner_flips", "temperature_vs_length",
           "rank_correlation", "LengthAndConfidence", "length_and_confidence"]
