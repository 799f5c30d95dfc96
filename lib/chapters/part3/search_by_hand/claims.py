"""The claims of the chapter `chapters/part3/search-by-hand.md`, each with its measurement."""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.analysis.search import model_query
from lib.claims.registry import EVERY_RUN, claim
from lib.claims.words import Q
from lib.content.prompt_sets import fixed_and_open


@functools.lru_cache(maxsize=None)
def _query_length_numbers(seed):
    lm = lib.load("calling-game")
    fixed, open_ = fixed_and_open(seed, lm.model.cfg.n_ctx)
    fixed_len = np.array([np.linalg.norm(model_query(lm, p)) for p in fixed])
    open_len = np.array([np.linalg.norm(model_query(lm, p)) for p in open_])
    return {"n_fixed": len(fixed), "n_open": len(open_), "fixed_median": float(np.median(fixed_len)),
            "open_median": float(np.median(open_len)), "open_hi": float(open_len.max()),
            "fixed_above": int((fixed_len > open_len.max()).sum()),
            "ratio": float(np.median(fixed_len) / np.median(open_len)),
            "fixed_above_share": float((fixed_len > open_len.max()).mean())}


claim("search-by-hand.long-when-sure", "search-by-hand",
      "On {runs}, over labelled prompts, the query is more than three times as long where the rules fix the next "
      "word as where they leave the callee open (the medians' ratio {ratio:.1f}, over {n_fixed:.0f} and {n_open:.0f} "
      "prompts), and {fixed_above_share:.0%} of the fixed prompts, 90% or more, have a query longer than the "
      "longest open one",
      words={"more than three times as long": Q("ratio") > 3,
             "90% or more, have a query longer than the longest open one": Q("fixed_above_share") >= 0.9},
      others="the medians' ratio is {ratio:.1f} and {fixed_above_share:.0%} of the fixed prompts outrun the longest "
             "open one",
      note="median query length on fixed-word prompts exceeds 3 times that on open-choice prompts, and 90% "
           "of fixed prompts exceed the longest open one",
      scope=EVERY_RUN, models=('calling-game',))(
    _query_length_numbers)
