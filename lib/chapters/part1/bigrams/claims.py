"""The claims of the chapter `chapters/part1/bigrams.md`, each with its measurement.

The later-turn epithet sets are those of `lib.analysis.calling_sets`, drawn with the claim's seed.
"""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.analysis.bigrams import (bigram_loss_per_token, bigram_table, held_out_rounds, loss_per_token, model_table,
                                  rules_loss_per_token)
from lib.analysis.calling_sets import EPITHETS4, N, answers_held, calling_game, sets
from lib.analysis.head_survey import ablation_survey
from lib.claims.registry import EVERY_RUN
from lib.claims.registry import claim as register

# Measured with torch on one thread (the chapter's models are tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True)


@claim("bigrams.table-learned", "bigrams",
       "With {params:,.0f} parameters the zero-layer model learns the counted bigram table almost exactly: no "
       "entry differs by more than {gap:.3f}",
       holds=lambda x: x["gap"] < 0.05, seeded=False,
       note="largest gap between the zero-layer model's next-token table and the table counted on 20,000 rounds",
       scope=EVERY_RUN, models=('zero-layer',))
def _table(seed):
    zl = lib.load("zero-layer")
    _, counts, probs = _bigram_table()
    seen = counts.sum(1) > 0
    return {"params": zl.model.n_params(), "gap": float(np.abs(model_table(zl)[seen] - probs[seen]).max())}


@functools.lru_cache(maxsize=1)
def _bigram_table():
    return bigram_table()


@claim("bigrams.losses", "bigrams",
       "On {rounds:.0f} fresh rounds the zero-layer model loses {zl:.3f} nats per token, the same as the bigram "
       "table itself ({bi:.3f}); the two-layer calling-game model loses {cg:.3f}, close to the {rules:.3f} of "
       "the rules themselves, the floor no model can beat",
       holds=lambda x: abs(x["zl"] - x["bi"]) < 0.02 and x["cg"] - x["rules"] < 0.05 and x["cg"] < x["zl"] - 0.1,
       note="loss per token (nats) on 300 rounds drawn with seed 12345 + seed: zero-layer = table; 2-layer within "
            "0.05 of the rules' floor",
       scope=EVERY_RUN, models=('calling-game', 'zero-layer'))
def _losses(seed):
    tokens, _, probs = _bigram_table()
    rounds = held_out_rounds(300, 12345 + seed)
    return {"rounds": len(rounds), "zl": loss_per_token(lib.load("zero-layer"), rounds),
            "bi": bigram_loss_per_token(rounds, probs, tokens), "cg": loss_per_token(calling_game(), rounds),
            "rules": rules_loss_per_token(rounds)}


@claim("bigrams.epithets-need-context", "bigrams",
       "Over {n:.0f} later turns of the game, {each:.0f} for each epithet, the zero-layer model gives the right "
       "epithet a probability of at least one half on {zl:.0f} of them, the two-layer model on {lm:.0f}",
       holds=lambda x: x["zl"] <= 0.6 * x["n"] and x["lm"] >= 0.95 * x["n"],
       note="later-turn epithet prompts held (P >= 0.5): the zero-layer model at most 60%, the two-layer model 95%+",
       scope=EVERY_RUN, models=('calling-game', 'zero-layer'))
def _epithets_need_context(seed):
    zl = lib.load("zero-layer")
    groups = [sets(seed)[e] for e in EPITHETS4]
    return {"n": sum(len(g) for g in groups), "each": N,
            "zl": sum(ablation_survey(zl, g, {}).held() for g in groups), "lm": answers_held(seed, EPITHETS4)}
