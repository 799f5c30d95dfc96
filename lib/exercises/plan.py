"""A teaching plan per chapter, read from the chapters: its exercises by kind, the ones that suit
graded work, and how long the chapter takes (for the instructor page).

Exercises are being added and converted all the time, so nothing here is typed: the counts and
labels come from the catalogue, the reading time from the chapter's own words.
"""
from __future__ import annotations

import ast
import inspect
import math
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from lib.errors import CourseError
from lib import units
from lib.exercises.catalogue import KINDS, ROOT, Exercise, catalogue
from lib.exercises.site import SiteCheck
from lib.exercises.writing import WriteCheck

# How the time is estimated. Reading: careful reading of technical prose with formulas, about half
# the speed of ordinary non-fiction (about 240 words a minute). Exercises: minutes per kind, for a
# learner who has read the chapter; a write exercise means a short function and a few runs of its
# check, an investigate one a few calls of the library and some reading of what they print.
WORDS_PER_MINUTE = 120
MINUTES_PER_OUTPUT = 2   # a table, a figure or an explorer the page shows, to study
MINUTES_PER_EXERCISE = {"write": 20, "predict": 10, "investigate": 15, None: 10}
ROUND_TO = 5   # a plan's total, in minutes, is rounded up to a multiple of this

# The helpers a check of one value calls (lib/exercises/__init__.py): a number, a whole number or a
# choice, compared with what the library computes. A check that calls none of them judges something
# the learner built (a prompt, a tool) by its properties: many answers are right.
VALUE_HELPERS = frozenset({"check_number", "check_whole_number", "check_choice", "as_number",
                           "SiteCheck.judge"})   # a check declared with its page twin (lib.exercises.site)

# What a chapter's word count leaves out: its front matter, code cells (the website hides most of
# them; what they show is timed per output), and everything from the exercises heading on (timed
# per exercise instead).
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}.*?^\1[ \t]*$", re.S | re.M)
MARKUP_LINE = re.compile(r"^(?::{3,}|`{3,}|:[\w-]+:|\(.*\)=\s*$|<!--.*-->\s*$).*$", re.M)
EXERCISES_HEADING = re.compile(r"^## Exercises\s*$", re.M)
# An exercise set in the text (a predict placed before the explorer that checks it), with its answer
# cell and solution: timed as an exercise, not read as prose.
IN_TEXT_EXERCISE = re.compile(r"^:::\{exercise\}.*?^:::\{solution-end\}\n:::[ \t]*$", re.S | re.M)
CODE_CELL_TAGS = re.compile(r"^`{3,}\{code-cell\}[^\n]*\n(?P<options>(?::[^\n]*\n)*)", re.M)


def check_style(module: str, name: str) -> str:
    """How the self-check `name` of `lib.exercises.<module>` judges an answer: "function" (it runs a
    function the learner wrote against the library's), "value" (it compares one number or choice
    with the library's) or "open" (it tests the properties of something the learner built)."""
    try:
        found = getattr(units.checks(module), name)
    except (ImportError, LookupError, AttributeError):
        raise CourseError(f"the self-check {name} is not in the checks of chapter {module}") from None
    if isinstance(found, WriteCheck):
        return "function"
    return "value" if _calls(found) & VALUE_HELPERS else "open"


def _calls(fn, seen: set | None = None) -> set[str]:
    """The names of the functions `fn` calls, following those of the chapters' check modules
    (a check may lean on a helper of its own module or of another chapter's), but not into
    lib.exercises itself, whose helpers are what is looked for."""
    seen = set() if seen is None else seen
    fn = inspect.unwrap(fn)   # a helper remembered by per_model: read the function it wraps
    if fn in seen or not inspect.isfunction(fn):
        return set()
    seen.add(fn)
    names: set[str] = set()
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(fn)))):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name):          # helper(...)
            name, called = node.func.id, fn.__globals__.get(node.func.id)
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            owner = fn.__globals__.get(node.func.value.id)   # module.helper(...)
            name, called = node.func.attr, getattr(owner, node.func.attr, None)
            if isinstance(owner, SiteCheck):          # TWIN.judge(...): one value, by the twin's rule
                name = f"SiteCheck.{name}"
        else:
            continue
        names.add(name)
        if inspect.isfunction(called) and called.__module__.startswith("lib.chapters."):
            names |= _calls(called, seen)
    return names


def suits_grading(exercise: Exercise) -> bool:
    """Whether a check decides the exercise alone, the same way every time: a function to write,
    an answer committed before the page shows it, or one value the library recomputes. An open
    investigation (build a prompt, write a tool) is checked too, but many answers are right, so
    a teacher should read what the learner built before it counts for marks."""
    if exercise.kind in ("write", "predict"):
        return True
    if not exercise.checks or exercise.module is None:
        return False
    return all(check_style(exercise.module, name) in ("function", "value") for name in exercise.checks)


def reading_words(text: str) -> int:
    """The words a reader reads in a chapter's source, before its exercises: prose, headings,
    captions and formulas; not code cells, directive fences and options, or labels."""
    text = FRONT_MATTER.sub("", text)
    text = EXERCISES_HEADING.split(text, maxsplit=1)[0]
    text = IN_TEXT_EXERCISE.sub("", text)
    text = CODE_CELL.sub("", text)
    text = MARKUP_LINE.sub("", text)
    return sum(1 for token in text.split() if re.search(r"\w", token))   # not "#", "-" or "$$"


def shown_outputs(text: str) -> int:
    """The code cells a reader sees something of before the exercises: every one not removed."""
    before = IN_TEXT_EXERCISE.sub("", EXERCISES_HEADING.split(FRONT_MATTER.sub("", text), maxsplit=1)[0])
    return sum("remove-cell" not in m["options"] for m in CODE_CELL_TAGS.finditer(before))


def count_by_kind(exercises: list[Exercise]) -> dict[str | None, int]:
    """How many exercises of each kind, in the order of KINDS (None: not yet given a kind). A kind
    the book does not know is an error, not a new column."""
    counts: dict[str | None, int] = {}
    for e in exercises:
        if e.kind is not None and e.kind not in KINDS:
            raise CourseError(f"{e.chapter}, {e.label}: {e.kind!r} is not a kind of exercise; "
                              f"the kinds are {', '.join(KINDS)}")
        counts[e.kind] = counts.get(e.kind, 0) + 1
    return {k: counts[k] for k in (*KINDS, None) if k in counts}


@dataclass(frozen=True)
class ChapterPlan:
    chapter: str                      # the chapter's path without extension
    title: str
    words: int                        # words read before the exercises
    outputs: int                      # tables, figures and explorers shown before them
    counts: dict[str | None, int]     # exercises by kind
    graded: tuple[str, ...]           # labels of the exercises that suit graded work

    @property
    def reading_minutes(self) -> int:
        return max(1, round(self.words / WORDS_PER_MINUTE + self.outputs * MINUTES_PER_OUTPUT))

    @property
    def exercise_minutes(self) -> int:
        return sum(MINUTES_PER_EXERCISE[kind] * n for kind, n in self.counts.items())

    @property
    def minutes(self) -> int:
        return ROUND_TO * math.ceil((self.reading_minutes + self.exercise_minutes) / ROUND_TO)


def chapter_plans(root: Path = ROOT) -> list[ChapterPlan]:
    """One plan per chapter that has exercises, in the order of the table of contents."""
    by_chapter: dict[str, list[Exercise]] = {}
    for e in catalogue(root):
        by_chapter.setdefault(e.chapter, []).append(e)
    plans = []
    for chapter, exercises in by_chapter.items():
        text = (root / (chapter + ".md")).read_text()
        plans.append(ChapterPlan(chapter, exercises[0].title, reading_words(text), shown_outputs(text),
                                 count_by_kind(exercises),
                                 tuple(e.label for e in exercises if suits_grading(e))))
    return plans


def plan_of(chapter: str, plans: list[ChapterPlan] | None = None) -> ChapterPlan:
    """The plan of one chapter, named by its path without extension (chapters/part1/one-head),
    among `plans` (by default, the book's)."""
    for plan in chapter_plans() if plans is None else plans:
        if plan.chapter == chapter:
            return plan
    raise CourseError(f"{chapter} is not a chapter with exercises in the table of contents")


def kind_phrase(kind: str | None, n: int) -> str:
    """"2 write", "1 investigate", "3 without a kind yet": a count in the words of :class:."""
    return f"{n} {kind}" if kind else f"{n} without a kind yet"


def plan_markdown(plan: ChapterPlan) -> str:
    """The computed half of a chapter's entry on the instructor page, as MyST Markdown."""
    per_kind = " + ".join(f"{n} × {MINUTES_PER_EXERCISE[k]} min" for k, n in plan.counts.items())
    # By label, linked: the label is the exercise's column in the gradebook.
    graded = ", ".join(f"{{ref}}`{label} <{label}>`" for label in plan.graded) or "none yet"
    shown = {0: "", 1: ", 1 table, figure or explorer"}.get(
        plan.outputs, f", {plan.outputs} tables, figures or explorers")
    return "\n".join([
        f"- **Time:** about {plan.minutes} minutes: {plan.reading_minutes} min of reading ({plan.words:,} "
        f"words{shown}), {plan.exercise_minutes} min of exercises ({per_kind}).",
        f"- **Exercises:** {', '.join(kind_phrase(k, n) for k, n in plan.counts.items())}.",
        f"- **Suit graded work:** {graded}.",
    ])
