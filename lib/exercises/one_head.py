"""Self-checks for the chapter "Q, K, V and one head, by hand"."""
from __future__ import annotations

import math

from lib.content.worked_examples import cat_sat
from lib.exercises import Feedback, check_number


def sat_on_cat(answer) -> Feedback:
    """Exercise 1: how much "sat" attends to "cat"."""
    ex = cat_sat()
    _, cache = ex.model.run_with_cache(ex.tokens)
    expected = float(cache["blocks.0.attn.pattern"][0, 2, 1])
    unscaled = float(cache["blocks.0.attn.qk"][0, 2, :].softmax(-1)[1])
    return check_number(answer, expected, tol=0.002, what="The weight",
                        hints={unscaled: "close: that is the softmax of the raw scores; divide them by sqrt(d_k) first."})


def abc_self_weight(answer, d_k: int = 8) -> Feedback:
    """Exercise 2: C's weight on itself when the dot products stay (1, 1, 2) but d_k is 8."""
    scores = [s / math.sqrt(d_k) for s in (1.0, 1.0, 2.0)]
    e = [math.exp(s) for s in scores]
    return check_number(answer, e[2] / sum(e), tol=0.002, what="C's weight on itself")
