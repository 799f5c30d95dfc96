"""The claims of the chapter `chapters/part3/practice.md`, each with its measurement."""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.analysis.signs import read_signs
from lib.claims.registry import EVERY_RUN, claim
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
    return out


claim("practice.context-decides", "practice",
      "On later turns that end in a call to Paolo, the model answers Tarso on {peer_right:.0f} of {peer_n:.0f} "
      "prompts where Pietro is calling (median probability {peer_median:.4f}) and vice on {number_right:.0f} "
      "of {number_n:.0f} where a numbered player is calling (median {number_median:.4f})",
      holds=lambda x: x["peer_right"] >= 0.9 * x["peer_n"] and x["number_right"] >= 0.9 * x["number_n"],
      note="who is calling, read from the context, decides the epithet on at least 90% of each set",
      scope=EVERY_RUN, models=('calling-game',))(
    _context_numbers)
