"""The read-out's and decoding's knobs, checked: temperature, seed, top-k, top-p, min-p, the repetition
penalty, beams. Plain Python (no torch), so the command line checks what it was given before it loads a
model; lib.model.readout and lib.model.decoding name them too. The sentences are lib.messages' (the page
says the same).
"""
from __future__ import annotations

import math

from lib.errors import CourseError, require
from lib.messages import say

# Below this the logits divided by the temperature can overflow a double for any model (and the
# page is already the greedy one to every printed digit).
MIN_TEMPERATURE = 1e-6
# torch's generator takes seeds up to 2**64 - 1; a reader's seed is kept to the signed range.
MAX_SEED = 2**63 - 1


def _float(x, sentence: str) -> float:
    """`x` as a number, or a CourseError saying lib.messages' `sentence` about it (a bool is no number here)."""
    if isinstance(x, bool):
        raise CourseError(say(sentence, got=repr(x)))
    try:
        return float(x)
    except (TypeError, ValueError):
        raise CourseError(say(sentence, got=repr(x))) from None


def check_temperature(t) -> float:
    t = _float(t, "temperature_number")
    require(math.isfinite(t) and t >= MIN_TEMPERATURE,
            say("temperature_range", minimum=f"{MIN_TEMPERATURE:g}", got=f"{t:g}"))
    return t


def check_seed(seed) -> int:
    """A seed is a whole number from 0 to 2**63 - 1."""
    ok = isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed <= MAX_SEED
    require(ok, say("seed", maximum=MAX_SEED, got=repr(seed)))
    return seed


def check_top_k(k, vocab_size: int | None = None) -> int | None:
    if k is None:
        return None
    require(isinstance(k, int) and not isinstance(k, bool) and k >= 1,
            say("top_k", got=repr(k)))
    return k if vocab_size is None else min(k, vocab_size)


# Top-p is compared with a running sum of probabilities, with this tolerance for its rounding: a
# smaller p cannot be told from 0 (it would keep only the best token), so it is refused.
TOP_P_FLOOR = 1e-12


def check_top_p(p) -> float | None:
    if p is None:
        return None
    p = _float(p, "top_p_number")
    require(math.isfinite(p) and 0 < p <= 1, say("top_p_range", got=repr(p)))
    require(p >= TOP_P_FLOOR, say("top_p_floor", got=repr(p), floor=f"{TOP_P_FLOOR:g}"))
    return p


MAX_BEAMS = 64
MAX_PENALTY = 100.0


def _number(x, what: str, allowed: str) -> float:
    if isinstance(x, bool):
        raise CourseError(f"{what} must be {allowed}, got {x!r}")
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise CourseError(f"{what} must be {allowed}, got {x!r}") from None
    require(math.isfinite(x), f"{what} must be {allowed}, got {x!r}")
    return x


def check_min_p(p) -> float | None:
    """min-p is None (off) or a number in (0, 1]: the share of the best token's probability a token needs."""
    if p is None:
        return None
    value = _float(p, "min_p")
    require(math.isfinite(value) and 0 < value <= 1, say("min_p", got=f"{value:g}"))
    return value


def check_repetition_penalty(x) -> float | None:
    """None (off) or a number from 1 (no penalty) to MAX_PENALTY."""
    if x is None:
        return None
    allowed = f"a number from 1 (no penalty) to {MAX_PENALTY:g}"
    x = _number(x, "the repetition penalty", allowed)
    require(1 <= x <= MAX_PENALTY, f"the repetition penalty must be {allowed}, got {x:g}")
    return x


def check_beams(n) -> int:
    ok = isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_BEAMS
    require(ok, f"the number of beams must be a whole number from 1 to {MAX_BEAMS}, got {n!r}")
    return n


def check_length_penalty(a) -> float:
    allowed = "a number from 0 (the plain sum of log-probabilities) to 2 (1: their mean per token)"
    a = _number(a, "the length penalty", allowed)
    require(0 <= a <= 2, f"the length penalty must be {allowed}, got {a:g}")
    return a


def check_max_new(n) -> int:
    ok = isinstance(n, int) and not isinstance(n, bool) and n >= 0
    require(ok, f"max_new_tokens must be a whole number, 0 or more, got {n!r}")
    return n
