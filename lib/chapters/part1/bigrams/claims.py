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
from lib.claims.words import Q

# Measured with torch on one thread (the chapter's models are tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True)


@claim("bigrams.table-learned", "bigrams",
       "On {runs}, the zero-layer model ({params:,.0f} parameters) learns the counted bigram table almost exactly: "
       "its entries differ from the table's by {gap:max:.3f} at most",
       words={"almost exactly: its entries differ from the table's by {gap:max:.3f} at most": Q("gap") < 0.05},
       others="the largest gap from the table is {gap:.3f}", seeded=False,
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
       "On {runs}, on {rounds:.0f} fresh rounds, the zero-layer model's loss per token is within {zl_gap:max:.3f} nats "
       "of the bigram table's own {bi:.3f}, the same; the two-layer calling-game model's is {cg_gap:.3f} nats above "
       "the {rules:.3f} of the rules themselves, close to the floor no model can beat on average",
       words={"within {zl_gap:max:.3f} nats of the bigram table's own {bi:.3f}, the same": Q("zl_gap") < 0.02,
              "{cg_gap:.3f} nats above the {rules:.3f} of the rules themselves": Q("cg_gap") > -0.01,
              "close to the floor no model can beat on average": Q("cg_gap") < 0.05},
       others="the zero-layer model is {zl_gap:.3f} nats from the table, and the two-layer model's loss minus the "
              "rules' is {cg_gap:.3f}",
       note="loss per token (nats) on 300 rounds drawn with seed 12345 + seed: zero-layer = table; 2-layer within "
            "0.05 of the rules' floor",
       scope=EVERY_RUN, models=('calling-game', 'zero-layer'))
def _losses(seed):
    tokens, _, probs = _bigram_table()
    rounds = held_out_rounds(300, 12345 + seed)
    zl, bi = loss_per_token(lib.load("zero-layer"), rounds), bigram_loss_per_token(rounds, probs, tokens)
    cg, rules = loss_per_token(calling_game(), rounds), rules_loss_per_token(rounds)
    return {"rounds": len(rounds), "zl": zl, "bi": bi, "cg": cg, "rules": rules, "zl_gap": abs(zl - bi),
            "cg_gap": cg - rules}


@claim("bigrams.epithets-need-context", "bigrams",
       "On {runs}, over {n:.0f} later turns of the game ({each:.0f} for each epithet), the two-layer model gives the "
       "right epithet a probability of at least one half on {lm:.0f} of them, 95% or more, and the zero-layer model "
       "on only {zl:.0f}, 60% or fewer",
       words={"at least one half on {lm:.0f} of them, 95% or more": Q("lm") >= 0.95 * Q("n"),
              "on only {zl:.0f}, 60% or fewer": Q("zl") <= 0.6 * Q("n")},
       others="the two-layer model holds {lm:.0f} of them and the zero-layer model {zl:.0f}",
       note="later-turn epithet prompts held (P >= 0.5): the zero-layer model at most 60%, the two-layer model 95%+",
       scope=EVERY_RUN, models=('calling-game', 'zero-layer'))
def _epithets_need_context(seed):
    zl = lib.load("zero-layer")
    groups = [sets(seed)[e] for e in EPITHETS4]
    return {"n": sum(len(g) for g in groups), "each": N,
            "zl": sum(ablation_survey(zl, g, {}).held() for g in groups), "lm": answers_held(seed, EPITHETS4)}
