"""Corpora the shipped models are trained on, each a seeded sampler of token sequences.

A corpus is a vocabulary plus a function that draws one sequence from a `random.Random`; the
trainer makes every batch on the fly from it, so no data set is stored or downloaded.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from lib.errors import CourseError, require
from lib.content.corpora import calling_game, hand_wired


@dataclass(frozen=True)
class Corpus:
    name: str
    tokens: tuple[str, ...]
    sample: Callable[[random.Random], list[str]]
    max_len: int


def get_corpus(name: str, options: dict | None = None) -> Corpus:
    options = dict(options or {})
    if name == "calling-game":
        game = calling_game.GameOptions(**options)
        return Corpus(name, calling_game.TOKENS, lambda rng: calling_game.sample_round(rng, game),
                      calling_game.MAX_ROUND_TOKENS)
    if name == "hand-wired":
        require(not options, "the hand-wired corpus takes no options")
        return Corpus(name, hand_wired.TOKENS, hand_wired.sample_sentence, 9)
    raise CourseError(f"unknown corpus {name!r}; known: calling-game, hand-wired")
