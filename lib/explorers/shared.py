"""What the explorers of several chapters share: small pieces of their views, and the settings the
tests make them with (`registered(view, examples, ...)`: the course's models and the chapters' prompts).

An explorer's own helpers live with it in its chapter's unit (lib/chapters/PART/UNIT/explorers.py);
what two chapters' explorers use lives here, or with the controls in `lib.explorers.definition`.
"""
from __future__ import annotations

from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.model.store import load


def tokens(lm, prompt: str) -> list[str]:
    """The prompt's tokens, as the model's vocabulary writes them."""
    return lm.vocab.decode(lm.encode(prompt))


def pairs(ranked) -> list[list]:
    """(token, probability) pairs as the view holds them: [token, float]."""
    return [[t, float(p)] for t, p in ranked]


def example_model(name: str = "calling-game"):
    """A shipped model, for an explorer's examples."""
    return load(name)


def example_prompts() -> dict[str, str]:
    """The chapters' two prompts, for an explorer's examples: the confident one and the uncertain one."""
    return {"confident": CONFIDENT, "uncertain": UNCERTAIN}
