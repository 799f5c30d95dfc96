"""What the temperature and sampling explorers show: a results page reshaped by the temperature,
what top-k and top-p keep of it, and one seeded roll of the die (the read-out's own functions,
lib.model.readout, arranged as a view).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from lib.model.readout import check_temperature, greedy, prompt_logits, reshape, results_page, sample, softmax


def temperature_page(lm, prompt: str, temperature: float, k: int = 10) -> list[tuple[str, float]]:
    """The top-k candidates after `prompt` at `temperature`, best first, as (token, prob)."""
    page = results_page(prompt_logits(lm, prompt), lm.vocab.tokens, temperature)
    return [(c.token, c.prob) for c in page[:k]]


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
