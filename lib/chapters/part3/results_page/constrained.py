"""Constrained decoding on the calling game: the rules written as a logits processor.

A logits processor rewrites the model's logits before the read-out picks (Hugging Face's `LogitsProcessor`;
`lib.model.generate`'s `processor`). This one bans, by a logit of minus infinity, every token the game's rules
forbid after the round so far, and leaves the others as the model wrote them: the model still chooses among
the legal tokens, in its own proportions, and no sampled round can break the rules.
"""
from __future__ import annotations

import torch

from lib.content.corpora.calling_game import next_token_distribution


def allowed(prefix) -> set[str]:
    """The tokens the rules allow after a valid prefix of a round (a wrong call included: the game plays it)."""
    return {t for t, p in next_token_distribution(list(prefix)).items() if p > 0}


def rules_processor(prefix, logits, vocab) -> torch.Tensor:
    """`logits` [vocab] after `prefix` (tokens) with every token the rules forbid set to minus infinity."""
    ok = allowed(prefix)
    keep = torch.tensor([t in ok for t in vocab])
    logits = torch.as_tensor(logits, dtype=torch.float64)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
