"""What a gradebook says: a row per learner, the feedback each learner gets, the terminal's summary.

Each exercise's verdict (correct, not yet, not answered, timed out, error, missing) and points, the
exercises a person should read (`to review`), the notebooks returned late, and the notes, the grader's
own words. Points per exercise are the instructor's, in one file (`read_points`; one each by default);
a write check that runs several cases gives the share of its points for the cases the function gets
right. A cell a spreadsheet would run as a formula is written as text.
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
    cases: dict = field(default_factory=dict)      # label -> (cases right, cases) of a write check
    cpu: float = 0.0                               # CPU seconds all their runs used

    def count(self, verdict: str) -> int:
        return sum(v == verdict for v in self.verdicts.values())

    def earned(self, label: str, points: dict) -> float:
        """The points of one exercise: all of them when correct; for a write check that was not, the
        share of the cases its function got right; else none."""
        worth = points.get(label, 1.0)
        verdict = self.verdicts.get(label)
        if verdict == "correct":
            return worth
        right, cases = self.cases.get(label, (0, 0))
        if verdict in ("not yet", TIMED_OUT) and cases:
            return worth * right / cases
        return 0.0

    def total(self, columns: list[str], points: dict) -> float:
        return sum(self.earned(label, points) for label in columns)


POINTS_FILE = "points.csv"


def number(value: float) -> str:
    """Points as a person writes them: 3, 2.5, 2.67."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def read_points(path: Path, labels: list[str]) -> dict[str, float]:
    """The instructor's points per exercise: a CSV file with the columns `exercise` (its label) and
    `points` (a number, 0 or more); an exercise it does not list is worth 1. A mistake in it stops the
    grading with one line that says where (`python scripts/grade.py points FILE` writes one to edit)."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise SystemExit(f"the points file {path} could not be read ({getattr(e, 'strerror', None) or type(e).__name__})")
    rows = list(csv.reader(text.splitlines()))
    if not rows or [c.strip() for c in rows[0][:2]] != ["exercise", "points"]:
        raise SystemExit(f"{path}: the first line should be `exercise,points` (then one exercise a line)")
    known, points = set(labels), {}
    for n, row in enumerate(rows[1:], 2):
        if not row or not "".join(row).strip():
            continue
        label, value = (row + [""])[:2]
        label = label.strip()
        if label not in known:
            raise SystemExit(f"{path}, line {n}: no exercise is labelled {label!r} (the labels are the "
                             "gradebook's columns, and the answer key's)")
        try:
            worth = float(value)
        except ValueError:
            worth = float("nan")
        if not 0 <= worth < 1e6:
            raise SystemExit(f"{path}, line {n}: the points of {label} should be a number, 0 or more; got {value.strip()!r}")
        if label in points:
            raise SystemExit(f"{path}, line {n}: {label} is listed twice")
        points[label] = worth
    return points


def write_points(path: Path, exercises: list, points: dict | None = None) -> None:
    """A points file to edit: every exercise, one point each (or the points given), with its chapter
    and kind beside it for the reader (the grader reads the first two columns)."""
    points = points or {}
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["exercise", "points", "chapter", "kind"])
        for e in exercises:
            out.writerow([e.label, number(points.get(e.label, 1.0)), e.title, e.kind or ""])


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
         "notebooks named", "a second answer cell", "link", "found by its content", "run, not read")


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


def write_gradebook(path: Path, learners: list[Learner], columns: list[str], points: dict | None = None) -> None:
    """One row per learner: each exercise's verdict, then each exercise's points (a write check's share
    of them for the cases right, said in the notes), the count of correct answers, the points and
    the points possible, the exercises to read by hand, the notebooks returned late, and the notes."""
    points = points or {}
    open_labels = open_answers(columns)
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow([as_text(c) for c in ["learner", *columns, *(f"{c} points" for c in columns), "correct", "of",
                                           "points", "of points", "to review", "late", "notes"]])
        for learner in learners:
            out.writerow([as_text(c) for c in [
                learner.name, *(learner.verdicts.get(c, "missing") for c in columns),
                *(number(learner.earned(c, points)) for c in columns),
                learner.count("correct"), len(columns), number(learner.total(columns, points)),
                number(sum(points.get(c, 1.0) for c in columns)), to_review(learner, columns, open_labels),
                " ".join(learner.late), "; ".join(learner.notes)]])


def partial(learner: Learner, label: str, points: dict) -> str:
    """'2.67 of 4 points' and, for a write check, the cases right: what the feedback says of an exercise."""
    worth = points.get(label, 1.0)
    said = f"{number(learner.earned(label, points))} of {number(worth)} point{'s' if worth != 1 else ''}"
    right, cases = learner.cases.get(label, (0, 0))
    if cases and learner.verdicts.get(label) != "correct" and right:
        said += f": right on {right} of {cases} inputs"
    return said


def write_feedback(folder: Path, learners: list[Learner], columns: list[str], points: dict | None = None) -> None:
    """FOLDER/LEARNER.md for each learner: per exercise, the verdict, the points (and a write check's
    cases right) and the check's message (the sentence their own kernel shows for that answer), and
    the notes about it."""
    points = points or {}
    folder.mkdir(exist_ok=True)
    titles = {e.label: e for e in catalogue(ROOT)}
    possible = sum(points.get(c, 1.0) for c in columns)
    for learner in learners:
        lines = [f"# Feedback for {learner.name}", "",
                 f"{learner.count('correct')} of {len(columns)} exercises correct; "
                 f"{number(learner.total(columns, points))} of {number(possible)} points.", ""]
        chapter = None
        for label in columns:
            exercise = titles.get(label)
            if exercise and exercise.title != chapter:
                chapter = exercise.title
                lines += [f"## {chapter}", ""]
            verdict = learner.verdicts.get(label, "missing")
            message = learner.messages.get(label)
            lines.append(f"- **{label}**: {verdict} ({partial(learner, label, points)})" + (f": {message}" if message else ""))
            lines += [f"  - {note.split(': ', 1)[1]}" for note in learner.notes if note.startswith(label + ": ")]
        general = [note for note in learner.notes if not any(note.startswith(c + ": ") for c in columns)]
        if general:
            lines += ["", "## Notes", "", *[f"- {note}" for note in general]]
        (folder / f"{learner.name}.md").write_text("\n".join(lines) + "\n")


def summary(learners: list[Learner], columns: list[str], points: dict | None = None) -> str:
    points = points or {}
    possible = number(sum(points.get(c, 1.0) for c in columns))
    lines = []
    for learner in learners:
        counts = Counter(learner.verdicts.get(c, "missing") for c in columns)
        rest = ", ".join(f"{counts[v]} {v}" for v in VERDICTS[1:] if counts[v])
        lines.append(f"  {learner.name}: {counts['correct']}/{len(columns)} correct" + (f" ({rest})" if rest else "")
                     + f", {number(learner.total(columns, points))}/{possible} points")
    per_exercise = ", ".join(f"{c} {sum(l.verdicts.get(c) == 'correct' for l in learners)}" for c in columns)
    lines.append(f"  correct per exercise: {per_exercise}")
    return "\n".join(lines)
