"""How an answer is read as a learner writes it: one rule, for the website's answer boxes and the checks.

A learner writes a probability as 0.482, 0,482, 48.2 %, "about 0.48" or "≈ 0.48."; a count as 27126,
27,126 or 27 126; a token as Vice, vice or "vice"; a round as tokens with any case and spacing. The
checks (lib.exercises: check_number, check_whole_number, check_choice and the chapters' open checks)
read a text answer with these functions, and the page's answer boxes read what is typed with their
twins in lib/explorers/js/rules.js (readNumber, readText, spelled). The rule's lists (`READING`) are
written here only and generated into the page's constants.js; tests/exercises/test_reading.py holds the
two readings equal, text by text, on a battery of the forms a learner writes (Node, fast tier).

Numbers (a box read as a number or a whole number):
- white space, sentence punctuation after the number (. ! ? ; : ,) and a sign of approximation before it
  (≈ ~ about roughly ...) are left out;
- a percent sign (or "percent") divides by 100: 48.2% is 0.482; a fraction a/b is a divided by b;
- the box's own units (a check declares them: "GB", "tokens") may follow the number;
- a decimal point or a decimal comma: 0.482 and 0,482 are the same number. Thousands may be separated by
  commas (27,126), spaces (27 126) or, with a decimal comma, points (27.126,5). A lone comma followed by
  exactly three digits after 1 to 3 digits other than 0 ("1,234") could be either: a whole-number box
  (a count) reads it as thousands (1234); a number box (a probability, a logit) asks which was meant;
- the minus sign "−" is "-"; otherwise Python's own spelling (1e-3, 1_000, nan, inf: the checks then
  refuse what is not finite).
A text that is no number reaches the check as text, which says what it should be.

Texts (a box read as a text, a choice or the items of a tuple): outer white space and quotes (straight
or typographic) are left out, runs of white space are one space; where the check names the words it
reads (a round's tokens), a word that is one of them in another case is that word, and a full stop
after the last word is left out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lib.messages import say

# The rule's lists, shared with the page (lib.explorers.web generates them into constants.js).
READING = {
    # before a number: signs and words of approximation (compared in lower case; longest first)
    "approx": ["approximately", "approx.", "approx", "roughly", "around", "about", "circa", "ca.", "≈", "≃", "~", "="],
    # after a number: sentence punctuation
    "trailing": ".!?;:,",
    # a percent (compared in lower case; longest first)
    "percent": ["per cent", "percent", "%"],
    # minus signs a keyboard or a word processor writes for "-"
    "minus": "−–",
    # pairs of quotes around an answer
    "quotes": [["'", "'"], ['"', '"'], ["`", "`"], ["‘", "’"], ["“", "”"], ["„", "“"], ["«", "»"], ["»", "«"],
               ["‹", "›"], ["「", "」"]],
    # white space between groups of three digits (a space, a no-break space, a thin space, a narrow no-break space)
    "group_spaces": " \u00a0\u2009\u202f",
}

# Regular expressions written once, in the syntax Python's re and JavaScript's RegExp read alike (ASCII
# digits only: Python's int() would read other scripts' digits, the page would not).
PATTERNS = {
    # Python's int and float literals as int() and float() read them (underscores between digits)
    "int": r"^[+-]?[0-9](?:_?[0-9])*$",
    "float": r"^[+-]?(?:(?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*|[0-9](?:_?[0-9])*\.?)(?:[eE][+-]?[0-9](?:_?[0-9])*)?$",
    "float_word": r"^[+-]?(?:inf|infinity|nan)$",
    # thousands separated by spaces: 27 126, 1 234,5 (the spaces are READING's group_spaces)
    "space_groups": r"^[+-]?[1-9][0-9]{0,2}(?:[ \u00a0\u2009\u202f][0-9]{3})+(?:[.,][0-9]+)?$",
    # thousands separated by commas, a decimal point or none: 27,126  1,234.5  1,234,567
    "comma_groups": r"^[+-]?[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]*)?$",
    # thousands separated by points with a decimal comma, or several points: 1.234,5  1.234.567
    "point_groups": r"^[+-]?[1-9][0-9]{0,2}(?:(?:\.[0-9]{3})+,[0-9]*|(?:\.[0-9]{3}){2,})$",
    # a decimal comma: 0,482  ,5  12,34  1,5e-3
    "decimal_comma": r"^[+-]?[0-9]*,[0-9]+(?:[eE][+-]?[0-9]+)?$",
    # the one ambiguous form: 1 to 3 digits (not 0), a comma, three digits
    "ambiguous": r"^[+-]?[1-9][0-9]{0,2},[0-9]{3}$",
}
_RE = {name: re.compile(p, re.I if name == "float_word" else 0) for name, p in PATTERNS.items()}


@dataclass(frozen=True)
class Unread:
    """A text the reading refuses with a sentence of its own (a comma that could be read two ways)."""
    text: str
    message: str


def _strip(s: str) -> str:
    return s.strip()


def _float(v) -> float:
    """float(v), a whole number too large for a float being an infinity (as the page's Number() makes it)."""
    try:
        return float(v)
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def _numeral(s: str, whole: bool):
    """A numeral without sign words or units: an int, a float, an Unread, or None (no number)."""
    if _RE["int"].match(s):
        return int(s)
    if _RE["float"].match(s) or _RE["float_word"].match(s):
        return float(s)
    if _RE["space_groups"].match(s):
        for c in READING["group_spaces"]:
            s = s.replace(c, "")
        return _numeral(s, whole)
    if _RE["ambiguous"].match(s) and not whole:
        digits = s.lstrip("+-")
        sign = s[:len(s) - len(digits)]
        return Unread(s, say("answer_comma", got=s, thousands=sign + digits.replace(",", ""),
                             decimal=sign + digits.replace(",", ".")))
    if _RE["comma_groups"].match(s):
        s = s.replace(",", "")
        return int(s) if _RE["int"].match(s) else float(s)
    if _RE["point_groups"].match(s):
        s = s.replace(".", "").replace(",", ".")
        return int(s) if _RE["int"].match(s) else float(s)
    if _RE["decimal_comma"].match(s):
        return float(s.replace(",", "."))
    return None


def _cut_end(s: str, endings) -> tuple[str, bool]:
    low = s.lower()
    for e in endings:
        if low.endswith(e.lower()) and len(s) > len(e):
            return _strip(s[:len(s) - len(e)]), True
    return s, False


def read_number(text: str, whole: bool = False, units=()):
    """A number as a learner writes it (the module's rule): an int or a float, an `Unread` for a comma
    that could be read two ways in a box that is not a count, or the text (stripped) when it is no number.
    `whole`: the box asks for a whole number (a count). `units`: the words the box's number may carry."""
    original = _strip(text)
    s = original.rstrip(READING["trailing"])
    s = _strip(s)
    low = s.lower()
    for a in READING["approx"]:
        if low.startswith(a) and len(s) > len(a):
            s = _strip(s[len(a):])
            break
    s, percent = _cut_end(s, READING["percent"])
    if not percent:
        s, _ = _cut_end(s, sorted(units, key=len, reverse=True))
    for c in READING["minus"]:
        s = s.replace(c, "-")
    if "/" in s:
        top, _, bottom = s.partition("/")
        top, bottom = _numeral(_strip(top), True), _numeral(_strip(bottom), True)
        if isinstance(top, (int, float)) and isinstance(bottom, (int, float)) and bottom != 0:
            value = _float(top) / _float(bottom)
        else:
            return original
    else:
        value = _numeral(s, whole)
        if value is None:
            return original
        if isinstance(value, Unread):
            return value
    return _float(value) / 100 if percent else value


def unquoted(text: str) -> str:
    """The text without its outer white space and any pairs of quotes around it."""
    s = _strip(text)
    changed = True
    while changed and len(s) >= 2:
        changed = False
        for left, right in READING["quotes"]:
            if s.startswith(left) and s.endswith(right):
                s = _strip(s[len(left):len(s) - len(right)])
                changed = True
                break
    return s


def read_text(text: str, words=None) -> str:
    """A text as a learner writes it: no outer quotes, one space between words; with `words` (the
    tokens the check reads), a word that is one of them in another case is that word, and sentence
    punctuation after the last word is left out when what remains is one of them."""
    parts = unquoted(text).split()
    if words is None or not parts:
        return " ".join(parts)
    known = set(words)
    folded: dict[str, list[str]] = {}
    for w in words:
        folded.setdefault(w.lower(), []).append(w)
    if parts[-1] not in known:
        bare = parts[-1].rstrip(READING["trailing"])
        if bare and (bare in known or len(folded.get(bare.lower(), [])) == 1):
            parts[-1] = bare
    out = []
    for p in parts:
        same = folded.get(p.lower(), [])
        out.append(same[0] if p not in known and len(same) == 1 else p)
    return " ".join(out)


def answer_number(answer, whole: bool = False, units=()):
    """What a check compares: the learner's answer, a text among them read by the rule (an `Unread`
    stays one: the check says its sentence)."""
    return read_number(answer, whole, units) if isinstance(answer, str) else answer
