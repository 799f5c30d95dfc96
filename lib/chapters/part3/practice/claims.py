"""The claims of the chapter `chapters/part3/practice.md`, each with its measurement."""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.analysis.signs import read_signs
from lib.claims.registry import EVERY_RUN, claim
from lib.claims.words import Min, Q
from lib.content.prompt_sets import PER_KIND, prompt_set


@functools.lru_cache(maxsize=None)
def _context_numbers(seed):
    lm = lib.load("calling-game")
    out = {}
    for key, epithet in (("peer", "Tarso"), ("number", "vice")):
        judged = [read_signs(lm, p.text) for p in prompt_set("epithet-later-turn", PER_KIND, seed,
                                                             max_tokens=lm.model.cfg.n_ctx, target=epithet)]
        out[f"{key}_n"] = len(judged)
        out[f"{key}_right"] = sum(s.top == epithet for s in judged)
        out[f"{key}_median"] = float(np.median([s.top_prob for s in judged]))
        out[f"{key}_share"] = out[f"{key}_right"] / out[f"{key}_n"]
    return out


claim("practice.context-decides", "practice",
      "On {runs}, on later turns that end in a call to Paolo, the model answers Tarso on {peer_share:.0%} of the "
      "prompts where Pietro is calling (median probability {peer_median:.4f}) and vice on {number_share:.0%} of those "
      "where a numbered player is calling (median {number_median:.4f}), 90% or more of each",
      words={"90% or more of each": Min("peer_share", "number_share") >= 0.9},
      others="it answers Tarso on {peer_share:.0%} and vice on {number_share:.0%}",
      note="who is calling, read from the context, decides the epithet on at least 90% of each set",
      scope=EVERY_RUN, models=('calling-game',))(
    _context_numbers)
