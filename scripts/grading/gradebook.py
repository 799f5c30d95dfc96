"""What a gradebook says: a row per learner, the feedback each learner gets, the terminal's summary.

Each exercise's verdict (correct, not yet, not answered, timed out, error, missing), the exercises a
person should read (`to review`), the notebooks returned late, and the notes, the grader's own words.
A cell a spreadsheet would run as a formula is written as text.
"""
from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from grading.chapters import ROOT
from lib.exercises.catalogue import catalogue

VERDICTS = ("correct", "not yet", "not answered", "timed out", "error", "missing")
TIMED_OUT = "timed out"        # a time limit stopped it: not wrong, to grade again (grading/watch.py)
GRADEBOOK = "gradebook.csv"
FEEDBACK = "feedback"          # DIR/feedback/LEARNER.md


@dataclass
class Learner:
    name: str
    verdicts: dict = field(default_factory=dict)   # label -> verdict
    notes: list = field(default_factory=list)
    messages: dict = field(default_factory=dict)   # label -> the check's message (what the kernel shows)
    returned_at: dict = field(default_factory=dict)  # notebook name -> the graded file's modification time
    late: list = field(default_factory=list)       # notebook names returned after the due date

    def count(self, verdict: str) -> int:
        return sum(v == verdict for v in self.verdicts.values())


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def as_text(value) -> str:
    """A CSV cell that a spreadsheet shows as text: one that starts like a formula (= + - @, or a tab
    or carriage return before one) gets a leading apostrophe (OWASP's advice for CSV injection)."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def open_answers(columns: list[str]) -> set[str]:
    """The exercises whose answer is an investigation (kind `investigate`): the check reads the value
    the learner found; the reasoning behind it is for a person to read."""
    return {e.label for e in catalogue(ROOT) if e.kind == "investigate" and e.label in columns}


FLAGS = ("writes verdict HTML", "check call", "redefines the check", "patches", "graded the value",
         "notebooks named", "a second answer cell", "link")


def to_review(learner: "Learner", columns: list[str], open_labels: set[str]) -> str:
    """What a person should read in this learner's notebooks: their answered open exercises, every
    exercise a time limit stopped (to grade again), and every exercise a note flags (a forgery
    found, an answer taken from below its cell)."""
    answered = [c for c in columns if (c in open_labels and learner.verdicts.get(c) not in ("missing", "not answered"))
                or learner.verdicts.get(c) == TIMED_OUT]
    flagged = [c for c in columns if any(note.startswith(c + ":") and any(f in note for f in FLAGS)
                                         for note in learner.notes)]
    whole = any(any(f in note for f in FLAGS) and not any(note.startswith(c + ":") for c in columns)
                for note in learner.notes)
    return " ".join(dict.fromkeys(answered + flagged + (["notebook"] if whole else [])))


def mark_late(learners: list["Learner"], due: datetime | None) -> None:
    """A notebook whose file was last changed after the due date is late: noted, and counted in the
    `late` column (the file's time, as the returned folder keeps it: collect with a tool that keeps
    it, such as a hub's collect, `cp -p` or `rsync -t`)."""
    if due is None:
        return
    for learner in learners:
        for name, when in learner.returned_at.items():
            if when > due.timestamp():
                hours = (when - due.timestamp()) / 3600
                learner.late.append(name)
                learner.notes.append(f"{name}: late, changed {datetime.fromtimestamp(when, due.tzinfo):%Y-%m-%d %H:%M}, "
                                     f"{hours:.1f} h after the due date")


def write_gradebook(path: Path, learners: list[Learner], columns: list[str]) -> None:
    """One row per learner: each exercise's verdict (a point each when correct: no check has degrees,
    so there is no partial credit), the points, the exercises to read by hand, the notebooks
    returned late, and the notes."""
    open_labels = open_answers(columns)
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow([as_text(c) for c in ["learner", *columns, "correct", "of", "to review", "late", "notes"]])
        for learner in learners:
            out.writerow([as_text(c) for c in [learner.name, *(learner.verdicts.get(c, "missing") for c in columns),
                          learner.count("correct"), len(columns), to_review(learner, columns, open_labels),
                          " ".join(learner.late), "; ".join(learner.notes)]])


def write_feedback(folder: Path, learners: list[Learner], columns: list[str]) -> None:
    """FOLDER/LEARNER.md for each learner: per exercise, the verdict and the check's message (the
    sentence their own kernel shows for that answer), and the notes about it."""
    folder.mkdir(exist_ok=True)
    titles = {e.label: e for e in catalogue(ROOT)}
    for learner in learners:
        lines = [f"# Feedback for {learner.name}", "",
                 f"{learner.count('correct')} of {len(columns)} exercises correct.", ""]
        chapter = None
        for label in columns:
            exercise = titles.get(label)
            if exercise and exercise.title != chapter:
                chapter = exercise.title
                lines += [f"## {chapter}", ""]
            verdict = learner.verdicts.get(label, "missing")
            message = learner.messages.get(label)
            lines.append(f"- **{label}**: {verdict}" + (f": {message}" if message else ""))
            lines += [f"  - {note.split(': ', 1)[1]}" for note in learner.notes if note.startswith(label + ": ")]
        general = [note for note in learner.notes if not any(note.startswith(c + ": ") for c in columns)]
        if general:
            lines += ["", "## Notes", "", *[f"- {note}" for note in general]]
        (folder / f"{learner.name}.md").write_text("\n".join(lines) + "\n")


def summary(learners: list[Learner], columns: list[str]) -> str:
    lines = []
    for learner in learners:
        counts = Counter(learner.verdicts.get(c, "missing") for c in columns)
        rest = ", ".join(f"{counts[v]} {v}" for v in VERDICTS[1:] if counts[v])
        lines.append(f"  {learner.name}: {counts['correct']}/{len(columns)} correct" + (f" ({rest})" if rest else ""))
    per_exercise = ", ".join(f"{c} {sum(l.verdicts.get(c) == 'correct' for l in learners)}" for c in columns)
    lines.append(f"  correct per exercise: {per_exercise}")
    return "\n".join(lines)
