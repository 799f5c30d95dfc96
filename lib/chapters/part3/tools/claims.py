"""The claims of the chapter `chapters/part3/tools.md`, each with its measurement."""
from __future__ import annotations

import functools

import lib
from lib.claims.registry import THIS_RUN, claim
from lib.claims.words import Q
from lib.content.conveyor import referee, run_belt
from lib.content.corpora.calling_game import check_round

REFEREE_ROUNDS = 30


@functools.lru_cache(maxsize=None)
def _referee_numbers(seed):
    lm = lib.load("calling-game")
    valid = 0
    for k in range(REFEREE_ROUNDS):
        belt = run_belt(lm, "<BOS>", referee(seed=seed * REFEREE_ROUNDS + k))
        valid += check_round(belt.words())[0]
    return {"n": REFEREE_ROUNDS, "valid": valid}


claim("tools.referee-valid", "tools",
      "With the referee as its tool, greedy decoding plays {valid:.0f} of {n:.0f} rounds by the rules (each "
      "round with its own referee seed)",
      words={"greedy decoding plays {valid:.0f} of {n:.0f} rounds by the rules": Q("valid") >= 0.9 * Q("n")},
      note="greedy play with the referee tool gives a valid round on at least 90% of referee seeds",
      scope=THIS_RUN, models=('calling-game',))(
    _referee_numbers)
