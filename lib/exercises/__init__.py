"""Self-checks for the chapters' exercises, one module per chapter.

Each check takes the learner's answer and returns a `Feedback`: right, or what is wrong and a
hint, never the answer itself. An answer still left as `...` gets "not answered yet", so a
student notebook runs from top to bottom before any exercise is done.

This module holds the checks of a value (a number, a count, a choice) that predict and investigate
exercises use; `writing` holds the machinery for exercises where the learner writes a function.
CONTRIBUTING.md, at the top of the repository, is the convention both follow.
"""
from __future__ import annotations

import functools
import html
import math
from dataclasses import dataclass

from lib import units
from lib.messages import say
from lib.errors import CourseError
from lib.exercises.reading import READING, Unread, answer_number, read_text, unquoted


@dataclass(frozen=True)
class Feedback:
    ok: bool
    message: str
    answered: bool = True
    # For a right numeric answer, the interval the check accepts. Only a correct verdict carries
    # it (as data-accepts), so a test can tell whether the page printed an accepted value above
    # the exercise; a wrong verdict never gives the answer away.
    accepts: tuple[float, float] | None = None

    def __bool__(self) -> bool:
        return self.ok

    def _mark(self) -> str:
        return "Correct" if self.ok else ("Not answered yet" if not self.answered else "Not yet")

    def __repr__(self) -> str:
        return f"{self._mark()}: {self.message}"

    def verdict(self) -> str:
        """correct, not yet, or not answered: what a gradebook reads (the HTML's data-verdict)."""
        return "correct" if self.ok else ("not answered" if not self.answered else "not yet")

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.ok else ("#6e7781" if not self.answered else "#bc4c00")
        accepts = f' data-accepts="{self.accepts[0]!r} {self.accepts[1]!r}"' if self.ok and self.accepts else ""
        return (f'<div class="course-feedback" data-verdict="{self.verdict()}"{accepts} style="border-left:4px solid {colour};padding:4px 8px">'
                f"<strong>{self._mark()}</strong>: {html.escape(self.message)}</div>")


NOT_ANSWERED = "replace the ... with your answer, then run the cell again."


def per_model(fn):
    """Remember what `fn(lm, *args)` computed for each model: a check's right answer is worked out
    once, however often a learner runs the check."""
    store: dict = {}

    @functools.wraps(fn)
    def remembered(lm, *args):
        key = (getattr(lm, "name", None), id(getattr(lm, "model", lm)), args)
        if key not in store:
            store[key] = fn(lm, *args)
        return store[key]
    return remembered


def unanswered(answer) -> bool:
    return answer is ... or answer is None


def as_number(answer):
    """The answer as a float, or None if it is not a single finite number.

    A one-element numpy array or torch tensor counts as its number; a longer array, a string, a
    number too large for a float (10**400) or an infinity does not."""
    if isinstance(answer, (bool, str, bytes)):
        return None
    if hasattr(answer, "shape") and hasattr(answer, "reshape"):      # a numpy array or a torch tensor
        if math.prod(answer.shape) != 1:
            return None
        answer = answer.reshape(())    # numpy 2 no longer turns a one-element array into a float
        if hasattr(answer, "detach"):
            answer = answer.detach()   # a tensor that carries gradients converts with a warning
    try:
        value = float(answer)
    except Exception:   # TypeError, ValueError, OverflowError, torch's RuntimeError: not one number
        return None
    return value if math.isfinite(value) else None


def shown(answer, limit: int = 60) -> str:
    """The learner's answer for a message, cut short (a huge array or string must not flood it)."""
    try:
        text = repr(answer)
    except Exception:
        text = f"a {type(answer).__name__}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_number(answer, expected: float, *, tol: float, what: str, hints: dict | None = None,
                 units=()) -> Feedback:
    """Compare a numeric answer; on a miss, say whether it is too high or too low, and by how much
    in order of magnitude, plus an optional hint for a known mistake (`hints`: value -> text). A text
    answer is read as a learner writes a number (lib.exercises.reading: 0,482, 48.2%, 1/4; `units`: the
    words it may carry)."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    answer = answer_number(answer, units=units)
    if isinstance(answer, Unread):
        return Feedback(False, answer.message)
    value = as_number(answer)
    if value is None:
        return Feedback(False, say("answer_number", what=what, got=shown(answer)))
    if abs(value - expected) <= tol:
        return Feedback(True, say("answer_is", what=what, value=f"{value:.4g}"), accepts=(expected - tol, expected + tol))
    for wrong, hint in (hints or {}).items():
        if abs(value - wrong) <= tol:
            return Feedback(False, hint)
    direction = "too high" if value > expected else "too low"
    return Feedback(False, say("answer_off", what=what, value=f"{value:.4g}", direction=direction))


def check_choice(answer, options, expected, *, right: str, wrong: str, hints: dict | None = None) -> Feedback:
    """Compare an answer that must be one of `options` (a token, a stage name, True/False).

    `right` and `wrong` are the messages; `wrong` must not name the expected answer. `hints`
    (wrong option -> text) name the reasoning behind a known wrong choice.
    """
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    options = list(options)
    chosen = read_option(answer, options)
    if chosen is _NO_OPTION:
        listed = ", ".join(repr(o) for o in closest_first(answer, options)[:12]) + (", ..." if len(options) > 12 else "")
        return Feedback(False, say("answer_one_of", listed=listed, got=shown(answer)))
    if same_option(chosen, expected):
        return Feedback(True, right)
    hint = next((text for option, text in (hints or {}).items() if same_option(chosen, option)), None)
    return Feedback(False, hint or wrong)


_NO_OPTION = object()


def spelled(text: str) -> str:
    """A word as a person may type it, reduced to what identifies it: no quotes around it (straight or
    typographic), no full stop after it, no case, no spaces ("'Vice'" -> "vice", "“L0H3”." -> "l0h3",
    "MLP 0" -> "mlp0"). (rules.js: spelled; the rule is lib.exercises.reading's.)"""
    s = unquoted(text)
    bare = s.rstrip(READING["trailing"])
    if bare:
        s = unquoted(bare)
    return "".join(s.split()).lower()


def read_option(answer, options):
    """The option the answer names: the one equal to it, else, for a text, the one option spelled the
    same (case, quotes and spaces aside); `_NO_OPTION` when none is, or when two options are spelled
    alike and the answer is neither exactly."""
    exact = next((o for o in options if same_option(answer, o)), _NO_OPTION)
    if exact is not _NO_OPTION or not isinstance(answer, str):
        return exact
    alike = [o for o in options if isinstance(o, str) and spelled(o) == spelled(answer)]
    return alike[0] if len(alike) == 1 else _NO_OPTION


def edit_distance(a: str, b: str) -> int:
    """Levenshtein's distance: the fewest insertions, deletions and substitutions from a to b."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def closest_first(answer, options) -> list:
    """The options, those spelled closest to a text answer first (ties in their own order); for an
    answer that is not a text, in their own order. (rules.js: closestFirst.)"""
    if not isinstance(answer, str):
        return list(options)
    typed = spelled(answer)
    return sorted(options, key=lambda o: edit_distance(typed, spelled(o) if isinstance(o, str) else spelled(repr(o))))


def same_option(answer, option) -> bool:
    """answer == option for answers of any type: an array or tensor compared with a word is simply
    not equal (numpy and torch would answer with an array, whose truth is ambiguous)."""
    try:
        return bool(answer == option)
    except Exception:
        return False


def check_whole_number(answer, expected: int, *, what: str, hints: dict | None = None, units=()) -> Feedback:
    """A count or an index: exact, and a whole number; `hints` (wrong count -> text) name the
    reasoning behind a known wrong count. A text answer is read as a learner writes a count
    (lib.exercises.reading: 27,126 or 27 126; `units`: the words it may carry)."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    answer = answer_number(answer, whole=True, units=units)
    value = as_number(answer)
    if value is None or value != int(value):
        return Feedback(False, say("answer_whole", what=what, got=shown(answer)))
    if int(value) == expected:
        return Feedback(True, say("answer_is", what=what, value=f"{int(value)}"), accepts=(float(expected), float(expected)))
    if int(value) in (hints or {}):
        return Feedback(False, hints[int(value)])
    told = f"{int(value)}" if abs(value) < 1e15 else f"{value:.3g}"   # 1e308 would print 309 digits
    return Feedback(False, say("answer_off", what=what, value=told, direction="too high" if value > expected else "too low"))


# What a check that takes a prompt as its answer says when the model cannot read it (its page twin
# declares these texts too: lib.exercises.site, rule "open").
PROMPT_TEXTS = {"not_a_prompt": "the answer should be a prompt, as a string of tokens; got {shown}.",
                "unreadable": "the model cannot read that prompt: {error}"}


def prompt_signs(lm, answer):
    """A prompt given as an answer, read by the model: its `Signs`, or the `Feedback` saying why not."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    if not isinstance(answer, str):
        return Feedback(False, PROMPT_TEXTS["not_a_prompt"].format(shown=shown(answer)))
    answer = read_text(answer, lm.vocab.tokens)        # case, spaces and quotes as a learner writes them
    # deferred: torch (the grader reads the catalogue of exercises without it, within its memory budget)
    from lib.analysis.signs import read_signs

    try:
        return read_signs(lm, answer)
    except CourseError as e:
        return Feedback(False, PROMPT_TEXTS["unreadable"].format(error=e))


def __getattr__(name: str):
    """`from lib.exercises import results_page as check`, the stubs' line before the chapters had a
    folder each, still gives that chapter's checks (lib/chapters/part3/results_page/checks.py), so a
    notebook handed out earlier runs and grades as before."""
    try:
        return units.checks(name)
    except LookupError:
        raise AttributeError(f"module 'lib.exercises' has no attribute {name!r}") from None
