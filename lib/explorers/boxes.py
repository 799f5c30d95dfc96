"""What a reader types in an explorer's boxes, read: a top-k, a top-p, a seed, a position, a number
(and the stop of its slider nearest it).

Blank means the box's default; anything else is checked with the library's own checks, so a bad
value raises `CourseError` with the sentence the explorer shows in its message line (the page's
twins, lib/explorers/js/readout.js and views.js, say the same: lib/messages.py).
"""
from __future__ import annotations

import math
from typing import Sequence

from lib.errors import CourseError, require
from lib.messages import say
from lib.model.decoding import check_min_p
from lib.model.readout import MAX_SEED, check_seed, check_top_k, check_top_p


def parse_top_k(text) -> int | None:
    """A top-k typed in a box: blank means no limit, otherwise a whole number of at least 1."""
    text = str(text).strip()
    if text.lower() in ("", "all", "none"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise CourseError(say("top_k_text", got=repr(text))) from None
    return check_top_k(value)


def parse_top_p(text) -> float | None:
    """A top-p typed in a box: blank means no limit, otherwise a number in (0, 1]."""
    text = str(text).strip()
    if text.lower() in ("", "all", "none"):
        return None
    return check_top_p(text)


def parse_min_p(text) -> float | None:
    """A min-p typed in a box: blank means off, otherwise a number above 0 and at most 1."""
    text = str(text).strip()
    if text.lower() in ("", "off", "none"):
        return None
    return check_min_p(text)


def parse_seed(text) -> int:
    """A seed typed in a box: a whole number from 0 to 2**63 - 1."""
    text = str(text).strip()
    try:
        value = int(text)
    except ValueError:
        raise CourseError(say("seed", maximum=MAX_SEED, got=repr(text))) from None
    return check_seed(value)


def parse_position(text, n_tokens: int) -> int:
    """A position typed in a box, counted from 0 (the first token); blank means the last."""
    text = str(text).strip()
    if text.lower() in ("", "last"):
        return n_tokens - 1
    try:
        value = int(text)
    except ValueError:
        value = -1
    require(0 <= value < n_tokens, say("position", last=n_tokens - 1, n=n_tokens, got=repr(text)))
    return value


def parse_number(text):
    """What a "number" control's box holds, as `compute` reads it: the number Python's float() reads in
    the text (nan, inf, 0 and negatives included: `compute` says what is allowed), else the text itself.
    The page's twin is `parseNumber` in page.js (python.js's pyParseFloat)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    try:
        return float(text)
    except (TypeError, ValueError):
        return text


def nearest_stop(stops: Sequence[float], value) -> int:
    """The index of the slider's stop nearest `value` in the logarithm (its end when `value` lies beyond
    it; the first stop for a value that is no positive number)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        return 0
    if value >= stops[-1]:
        return len(stops) - 1
    target = math.log(value)
    return min(range(len(stops)), key=lambda i: (abs(math.log(stops[i]) - target), i))
