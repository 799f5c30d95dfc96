"""What a reader types into a check's answer box, good and bad, and what the library's check says to it.

Used by the tests that hold the page's answer boxes to the library's checks: in Node
(tests/explorers/test_twins.py, every check twin's computation and rules) and in the built site
(tests/browser/test_site_checks.py, the boxes as a reader meets them). The same texts go to both,
and the verdicts and sentences must be the same, word for word.
"""
from __future__ import annotations

from lib import chapters
from lib.exercises.site import typed_answer
from lib.messages import MESSAGES


def _typed(value) -> str:
    return repr(value) if isinstance(value, (float, tuple)) else str(value)


def _comma(value) -> str:
    """A number with a decimal comma, as much of Europe writes it."""
    return _typed(value).replace(".", ",")


def answers(twin, values) -> list[str]:
    """The texts to type: the right answer, each known wrong one, a plain wrong one and garbage (an open
    check: its examples, and garbage for its reading)."""
    out = [_typed(values.expected)]
    out += [_typed(v) for v in values.hints.values()]
    if twin.rule == "open":
        right = values.expected
        # the right answer as a learner writes it (lib.exercises.reading): a text in other case, quotes and
        # spacing, with a full stop; a number with a decimal comma, a percent, "≈" and a full stop
        learner = {"text": [f"“{str(right).upper()}.”", f"  '{str(right).lower()}'  ", str(right).replace(" ", "   ")],
                   "number": [_comma(right), f"≈ {_typed(right)}.", f"{_typed(right * 100)}%", "1,234"]
                   if isinstance(right, (int, float)) else [],
                   "tuple": []}[twin.reads]
        garbage = {"number": ["banana", "1e400", "nan", "-3", "3.5", "12345678901234567890123"],
                   "text": ["banana", "<BOS> Pietro chiama", "x" * 80],
                   "tuple": ["banana", "(1, 2", "[1, 2, 3, 4]", "1 2 3", "'L1H2', 'x'", "()", "L0H3 and 2",
                             "l0h3, 2"]}[twin.reads]
        return out + learner + garbage + [""]
    if twin.rule == "choice":
        options = list(values.options)
        right = str(values.expected)
        # As a person writes the right answer: other case, in quotes, with or without a space (MLP0, MLP 0).
        spaced = right.replace(" ", "") if " " in right else right[:-1] + " " + right[-1] if len(right) > 1 else right
        out += [next(o for o in options if o != values.expected), "banana", " " + right + " ", "<BOS> Pietro",
                right.upper(), right.lower(), f"'{right}'", spaced, right[:-1] + "x", f"“{right}”.", f"«{right.lower()}»"]
    else:
        e = values.expected
        out += [_typed(e * 1.5 + 1), _typed(-abs(e) - 7), "banana", "1e400", "nan", "3.5", "1_000",
                "12345678901234567890123", "x" * 80, f"{e:,}", "1,2", "12,34", "1,234", "1/4", "-1/3", "1/0"]
        # the right answer as a learner writes it (lib.exercises.reading): a decimal comma, a percent, "≈" or
        # "about" before it, a full stop after it, the box's unit, spaces between thousands
        out += [_comma(e), f"{_typed(e * 100)}%", f"≈ {_typed(e)}", f"about {_typed(e)}.", f"{_typed(e)}!",
                f"−{_typed(abs(e))}", f"{e:,}".replace(",", " ")]
        out += [f"{_typed(e)} {unit}" for unit in twin.units[:1]] + [f"{_typed(e)} parsecs"]
        if twin.rule == "number" and e != 0:
            tol = twin.tol if twin.tol is not None else twin.rel_tol * e
            # inside the tolerance but not the exact value, and well outside it
            out += [_typed(e + 0.5 * tol), _typed(e - 3 * tol)]
    return out + [""]


def library_says(twin, text: str, lm) -> tuple[str, str]:
    check = getattr(chapters.checks(twin.module), twin.check)
    answer = typed_answer(text, twin.reading, twin.units, twin.vocabulary)
    # An own-text check is of the learner's text: the page's box holds the twin's example, as here.
    fb = check(twin.own_example, answer) if twin.own else check(*lm, answer)
    if answer is ...:
        # The notebook's `...` has no page equivalent: an empty box says to type an answer.
        return fb.verdict(), MESSAGES["answer_empty"]
    return fb.verdict(), fb.message
