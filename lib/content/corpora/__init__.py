"""Corpora the shipped models are trained on, each a seeded sampler of token sequences.

A corpus is a vocabulary plus a function that draws one sequence from a `random.Random`; the
trainer makes every batch on the fly from it, so no data set is stored or downloaded.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from lib.errors import CourseError, require
from lib.content.corpora import calling_game, hand_wired, repeats


@dataclass(frozen=True)
class Corpus:
    name: str
    tokens: tuple[str, ...]
    sample: Callable[[random.Random], list[str]]
    max_len: int
    # The role each token of a sequence plays (`calling_game.token_roles`), which mean and resample
    # ablation match positions by; None where the corpus states none (then they match by position).
    roles: Callable[[list[str]], list[str]] | None = None
    # Figures of a model measured on held-out sequences while it trains (name -> number), or None.
    # The trainer records them every `TrainConfig.monitor_every` steps and stops on the first one.
    monitor: Callable[[object], dict[str, float]] | None = None


def _calling_game(options: dict) -> Corpus:
    game = calling_game.GameOptions(**options)
    return Corpus("calling-game", calling_game.TOKENS, lambda rng: calling_game.sample_round(rng, game),
                  calling_game.MAX_ROUND_TOKENS, calling_game.token_roles)


def _hand_wired(options: dict) -> Corpus:
    require(not options, "the hand-wired corpus takes no options")
    return Corpus("hand-wired", hand_wired.TOKENS, hand_wired.sample_sentence, 9)


def _repeats(options: dict) -> Corpus:
    opts = repeats.RepeatOptions(**options)
    return Corpus("repeats", repeats.TOKENS, lambda rng: repeats.sample_sequence(rng, opts), opts.max_len,
                  monitor=repeats.monitor(opts))


# Each corpus by the name a preset gives it: options -> Corpus.
CORPORA: dict[str, Callable[[dict], Corpus]] = {"calling-game": _calling_game, "hand-wired": _hand_wired,
                                                "repeats": _repeats}


def get_corpus(name: str, options: dict | None = None) -> Corpus:
    if name not in CORPORA:
        raise CourseError(f"unknown corpus {name!r}; known: {', '.join(CORPORA)}")
    return CORPORA[name](dict(options or {}))
