"""The gradebook: every notebook the learners returned, run contained, its answers checked apart.

    python scripts/grade.py DIR [--cell-timeout S] [--notebook-timeout S] [--wall-timeout S] [--jobs N] [--memory MB]
    python scripts/grade.py export --otter OUT [--chapters ...]     (an Otter-Grader assignment)
    python scripts/grade.py key OUT [--chapters ...]                (the answer key, for the instructor)
    make grade SUBMISSIONS=DIR

DIR holds one folder per learner with the notebooks they returned (the student notebooks of
`make student`, under their own names, at any depth: a hub's collected `LEARNER/ASSIGNMENT/`
folders work as they are).

Three kinds of process, so that no verdict can come from a learner's notebook (scripts/grading/):
1. this one reads the returned notebooks as data (grading/reading.py; nothing of them runs here) and
   finds each answer cell by the exercise label in its metadata (`course.exercise`, written by `make
   student`);
2. grading/run.py runs one chapter's own cells once, then forks a contained run per learner at the
   first cell where their notebook departs from the chapter (grading/running.py starts it and reads
   what the runs write; grading/walls.py and grading/watch.py hold each run); after each answer cell
   the run writes down the learner's answer as plain data (grading/wire.py): the value bound to the
   stub's name, or what a function the learner wrote returned on the inputs the check gives it;
3. grading/checker.py, a fresh process that never runs a learner's line, decides each verdict with
   the checks of this copy of the course (lib.exercises) and hands it back on its own output
   (grading/checking.py starts it).

What a notebook displays, what its check call says, and anything its cells do to `lib.exercises`
count for nothing; the gradebook's notes say what was found (a verdict displayed by hand, a check
call rewritten or removed, the checks or builtins patched). DIR/gradebook.csv gets one row per
learner, one column per exercise (correct, not yet, not answered, timed out, error, missing), the count of
correct answers, and notes (grading/gradebook.py). instructors.md says what this does not protect against.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grading.chapters import assignment, chapters, chosen_chapters  # noqa: E402
from grading.checking import check_chapter  # noqa: E402
from grading.exports import export_otter, write_answer_key  # noqa: E402
from grading.gradebook import (FEEDBACK, GRADEBOOK, VERDICTS, Learner, mark_late, summary,  # noqa: E402
                               write_feedback, write_gradebook)
from grading.reading import choose, departs, returned  # noqa: E402
from grading.running import CPU, LIMITS, UNCONTAINED, WALL_FACTOR, run_chapter  # noqa: E402
from lib.budgets import BUDGETS  # noqa: E402


def grade_chapter(nb_name: str, handed: dict[str, dict], learners: dict[str, "Learner"], submissions: Path,
                  limits: dict, jobs: int, scratch_root: Path) -> None:
    """Grade one chapter for every learner. Whatever one learner returned costs only their own row:
    each step that reads or checks a learner's work catches its own failure and says so in a note."""
    spec = chapters()[nb_name]
    to_run, labels = [], {}
    for name, notebooks_of in handed.items():
        learner = learners[name]
        paths = notebooks_of.get(nb_name)
        if not paths:
            learner.verdicts.update({label: "missing" for label in spec["order"]})
            learner.notes.append(f"{nb_name} not returned")
            continue
        path = paths[0]
        try:
            path, cells, notes = choose(paths, submissions / name, spec)
        except Exception as e:     # a learner's file the reading above did not foresee: their row only
            cells, notes = None, [f"{nb_name} could not be read ({type(e).__name__})"]
        learner.notes.extend(notes)
        try:
            learner.returned_at[nb_name] = os.lstat(path).st_mtime
        except (OSError, NameError):
            pass
        if cells is None:
            learner.verdicts.update({label: "error" for label in spec["order"]})
            continue
        present = [label for label in spec["order"] if any(c["label"] == label for c in cells)]
        for label in spec["order"]:
            if label not in present:
                learner.verdicts[label] = "missing"
                learner.notes.append(f"{nb_name}: no answer cell for {label}")
        if present:
            labels[name] = present
            to_run.append({"name": name, "cells": cells, "start": departs(cells, spec["cells"])})
    if not to_run:
        return
    records = Path(tempfile.mkdtemp(prefix="records-", dir=scratch_root))
    try:
        runs = run_chapter(spec, to_run, submissions, limits, jobs, scratch_root, records)
        for name in labels:
            run = runs[name]
            if run.get("problem"):
                learners[name].notes.append(f"{nb_name}: {run['problem']}")
            missing = list(run.get("contained") or []) + list(run.get("walls") or [])
            if missing:
                learners[name].notes.append(f"{nb_name}: ran with {'; '.join(map(str, missing))}")
                UNCONTAINED.update(map(str, missing))
        items, problem = check_chapter(spec, runs, labels)
    finally:
        shutil.rmtree(records, ignore_errors=True)
    given = set()
    for item in items:
        learner = learners[item["learner"]]
        given.add((item["learner"], item["label"]))
        learner.verdicts[item["label"]] = item["verdict"] if item["verdict"] in VERDICTS else "error"
        learner.messages[item["label"]] = str(item.get("message") or "")[:1000]
        if item.get("note"):
            learner.notes.append(f"{item['label']}: {str(item['note'])[:300]}")
    for name, present in labels.items():
        lost = [label for label in present if (name, label) not in given]
        if lost:
            learners[name].verdicts.update(dict.fromkeys(lost, "error"))
            learners[name].notes.append(f"{nb_name}: {problem or 'the checker gave no verdict'} "
                                        f"({len(lost)} answers not checked)")


def grade(submissions: Path, cell_timeout: float = 60, notebook_timeout: float = 300, jobs: int = 2,
          chapters_wanted: list[str] | None = None, memory_mb: int = 2048, wall_timeout: float | None = None) -> tuple[list[Learner], list[str]]:
    """Grade every learner's folder; returns the learners and the exercise labels (the columns)."""
    folders = sorted(p for p in submissions.iterdir()
                     if p.is_dir() and not p.name.startswith(".") and p.name != FEEDBACK)   # the grader's own folder
    if not folders:
        raise SystemExit(f"{submissions} holds no learner's folder (one folder per learner, with their notebooks)")
    book = assignment()
    wanted = chosen_chapters(chapters_wanted) if chapters_wanted else None   # a name no chapter has: one line, first
    handed, found_notes = {}, {}
    for f in folders:
        handed[f.name], found_notes[f.name] = returned(f, book)
    if not wanted:  # the chapters that anyone returned
        wanted = [n for n in book if any(n in notebooks_of for notebooks_of in handed.values())]
    if not wanted:
        raise SystemExit(f"no learner in {submissions} returned a notebook with exercises "
                         "(expected the names `make student` writes, e.g. search-by-hand.ipynb)")
    columns = [label for name in wanted for label in book[name]]
    learners = {name: Learner(name, notes=list(found_notes[name])) for name in handed}
    limits = {**LIMITS, "cell_cpu_seconds": cell_timeout, "notebook_seconds": notebook_timeout,
              "notebook_wall_seconds": wall_timeout or WALL_FACTOR * notebook_timeout,
              "memory_mb": memory_mb}
    # Chapters side by side when there are several (each runs its learners one at a time); one
    # chapter runs its learners side by side.
    side_by_side = max(1, min(jobs, len(wanted)))
    per_chapter = max(1, jobs // side_by_side)
    # Every chapter's work folder (each learner's cells wait there for their run) in one folder of
    # the grading's own, hidden from every run: a run sees no other chapter's learners either.
    with tempfile.TemporaryDirectory(prefix="grading-") as scratch_root, \
            ThreadPoolExecutor(max_workers=side_by_side) as pool:
        os.chmod(scratch_root, 0o700)
        futures = {nb_name: pool.submit(grade_chapter, nb_name, handed, learners, submissions, limits, per_chapter,
                                        Path(scratch_root)) for nb_name in wanted}
        for nb_name, future in futures.items():
            try:
                future.result()
            except Exception as e:   # the grader's own failure on one chapter: that chapter's columns only
                for learner in learners.values():
                    for label in book[nb_name]:
                        learner.verdicts.setdefault(label, "error")
                    learner.notes.append(f"{nb_name}: the grader failed on this chapter ({type(e).__name__})")
    return list(learners.values()), columns


def own_peak_mb() -> float:
    """This process's peak resident memory in MB. VmHWM, not ru_maxrss: the rusage peak is kept across
    exec, so a grader started from a process that once held a large model would report that peak."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def export_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade export", description="Export the exercises for another grader.")
    parser.add_argument("--otter", required=True, metavar="OUT", help="write Otter-Grader autograders into OUT")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: every chapter with exercises)")
    try:
        args = parser.parse_args(argv)
        written = export_otter(Path(args.otter), args.chapters.split(",") if args.chapters else None)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(f"error: {e.code}", file=sys.stderr)
            return 2
        return int(e.code or 0)
    print(f"wrote {len(written)} Otter-Grader autograders in {args.otter} (see its README.md)")
    return 0


def key_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade key", description="Write the answer key for the instructor.")
    parser.add_argument("out", help="the folder to write answer-key.md in (keep it away from learners)")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: every chapter with exercises)")
    args = parser.parse_args(argv)
    try:
        path = write_answer_key(Path(args.out), args.chapters.split(",") if args.chapters else None)
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"answer key: {path}")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    if argv[:1] == ["key"]:
        return key_main(argv[1:])
    parser = argparse.ArgumentParser(prog="grade", description="Run the notebooks learners returned; write a gradebook.")
    parser.add_argument("submissions", help="a folder with one folder per learner")
    parser.add_argument("--cell-timeout", type=float, default=60,
                        help="CPU seconds one of a learner's cells may run (default 60)")
    parser.add_argument("--notebook-timeout", type=float, default=300,
                        help="CPU seconds one notebook may run (default 300)")
    parser.add_argument("--wall-timeout", type=float, help=f"seconds on the clock one notebook may take (default "
                        f"{WALL_FACTOR} times --notebook-timeout): what it stops is marked timed out, not wrong")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run side by side (default 2)")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: those returned)")
    parser.add_argument("--due", help="the due date, as 2026-12-01T23:59 (local time) or with an offset: a notebook "
                        "changed after it is marked late")
    parser.add_argument("--memory", type=int, default=2048,
                        help="MB of address space a learner's run may add to the chapter's (default 2048)")
    args = parser.parse_args(argv)
    folder = Path(args.submissions)
    if not folder.is_dir():
        print(f"error: {folder} is not a folder; give the folder that holds one folder per learner", file=sys.stderr)
        return 2
    if args.cell_timeout <= 0 or args.notebook_timeout <= 0 or (args.wall_timeout is not None and args.wall_timeout <= 0) \
            or args.jobs < 1 or args.memory < 64:
        print("error: time limits must be positive numbers of seconds, --jobs at least 1 and --memory at least 64 (MB)",
              file=sys.stderr)
        return 2
    due = None
    if args.due:
        try:
            due = datetime.fromisoformat(args.due)
        except ValueError:
            print(f"error: --due {args.due!r} is not a date; give it as 2026-12-01T23:59 or 2026-12-01", file=sys.stderr)
            return 2
        due = due if due.tzinfo else due.astimezone()
    start = time.perf_counter()
    try:
        learners, columns = grade(folder, args.cell_timeout, args.notebook_timeout, args.jobs,
                                  args.chapters.split(",") if args.chapters else None, args.memory, args.wall_timeout)
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    mark_late(learners, due)
    write_gradebook(folder / GRADEBOOK, learners, columns)
    write_feedback(folder / FEEDBACK, learners, columns)
    if UNCONTAINED:
        unwalled = any(m.startswith(("no namespaces", "files not walled off")) for m in UNCONTAINED)
        print("warning: learners' runs were not fully contained here (" + "; ".join(sorted(UNCONTAINED)) + "); "
              + ("a run could reach what it was not walled off from (without namespaces: every file your account "
                 "can write, the course's checks and this gradebook among them, and the network), so these marks "
                 "are not protected" if unwalled else "a run was held only by the walls it had")
              + ": see 'What is contained where' in instructors.md", file=sys.stderr)
    print(f"graded {len(learners)} learners on {len(columns)} exercises in {time.perf_counter() - start:.0f} s; "
          f"the grader's own peak memory {own_peak_mb():.0f} MB (budget {BUDGETS['grade_memory_mb']:.0f} MB, "
          "its runs not counted)")
    print(summary(learners, columns))
    print(CPU.summary())
    print(f"gradebook: {folder / GRADEBOOK}; each learner's feedback: {folder / FEEDBACK}/LEARNER.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
