"""The list of every exercise in the book, read from the chapter sources (for the instructor page)."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from lib.errors import CourseError

ROOT = Path(__file__).resolve().parents[2]
# An exercise directive: its options (":label: ...", ":class: ...", in any order), a blank line,
# the task, and the closing fence.
EXERCISE = re.compile(r":::\{exercise\}[^\n]*\n(?P<options>(?::[\w-]+:[^\n]*\n)+)\n(?P<text>.*?)\n:::", re.S)
OPTION = re.compile(r"^:([\w-]+):[ \t]*(.*)$", re.M)
TITLE = re.compile(r"^# (.+)$", re.M)
STUB = re.compile(r"```\{code-cell\} ipython3\n:tags: \[remove-cell, exercise-stub\]\n(?P<code>.*?)```", re.S)
# The check module a stub calls as `check`: the chapter's first stub imports it, later stubs reuse it.
CHECK_MODULE = re.compile(r"^from lib\.chapters\.part\d+\.(\w+) import checks as check\b", re.M)

# The three kinds of exercise, by the name a directive's :class: gives them, and how the website
# labels each (the same words _assets/course.css shows above the task).
KINDS = {"write": "Write a function", "predict": "Predict, then check", "investigate": "Investigate"}


@dataclass(frozen=True)
class Exercise:
    chapter: str      # the chapter's path without extension, e.g. chapters/part3/lever
    title: str        # the chapter's title
    label: str
    kind: str | None  # write, predict or investigate; None for an exercise not yet given a kind
    task: str         # the task, on one line
    checks: tuple[str, ...]   # the self-check functions its answer cell calls
    module: str | None = None  # the chapter unit whose checks they are (lib.units.checks(module))

    @property
    def kind_label(self) -> str:
        return KINDS.get(self.kind, "") if self.kind else ""


def exercise_kind(classes: str, where: str) -> str | None:
    """The kind named among a directive's classes. Two kinds, or a class that looks like a misspelt
    kind ("wirte"), is an error: the website would show no label and the catalogue no kind."""
    named = [c for c in classes.split() if c in KINDS]
    if len(named) > 1:
        raise CourseError(f"{where}: an exercise has one kind, got {' and '.join(named)}")
    for c in classes.split():
        close = difflib.get_close_matches(c, KINDS, n=1, cutoff=0.7)
        if c not in KINDS and close:
            raise CourseError(f"{where}: the class {c!r} is not a kind of exercise; did you mean {close[0]!r}? "
                              f"The kinds are {', '.join(KINDS)}")
    return named[0] if named else None


def catalogue(root: Path = ROOT) -> list[Exercise]:
    """Every exercise, in the order of the table of contents."""
    toc = (root / "_toc.yml").read_text()
    out = []
    for name in re.findall(r"file:\s*(\S+)", toc):
        path = root / (name + ".md")
        if not path.exists():
            continue
        text = path.read_text()
        title = TITLE.search(text)
        for m in EXERCISE.finditer(text):
            options = dict(OPTION.findall(m["options"]))
            label = options.get("label")
            if not label:
                raise CourseError(f"{name}: an exercise has no :label:")
            stub = STUB.search(text, m.end())
            checks = tuple(dict.fromkeys(re.findall(r"check\.(\w+)\(", stub["code"]))) if stub else ()
            imports = CHECK_MODULE.findall(text, 0, stub.end()) if stub else []
            out.append(Exercise(name, title.group(1) if title else name, label,
                                exercise_kind(options.get("class", ""), f"{name}, {label}"),
                                " ".join(m["text"].split()), checks, imports[-1] if imports else None))
    return out
