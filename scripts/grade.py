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
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grading.chapters import assignment, chapters, chosen_chapters  # noqa: E402
from grading.checking import check_chapter  # noqa: E402
from grading.exports import export_otter, write_answer_key  # noqa: E402
from grading.gradebook import (FEEDBACK, GRADEBOOK, POINTS_FILE, TIMED_OUT, VERDICTS, Learner, mark_late,  # noqa: E402
                               read_points, summary, write_feedback, write_gradebook, write_points)
from grading.progress import Progress  # noqa: E402
from grading.reading import Reader, choose, returned  # noqa: E402
from grading.running import CPU, LIMITS, UNCONTAINED, WALL_FACTOR, CpuBudget, clean_env, run_chapter  # noqa: E402
from lib.budgets import BUDGETS  # noqa: E402
from lib.exercises.catalogue import catalogue  # noqa: E402


# The CPU a run needs at the least to be started: a learner whose CPU for the whole grading has less
# left is not run again (their exercises timed out, with a note).
MIN_RUN_SECONDS = 1.0
# Chapters' processes at work side by side (each holds a model and the chapter's state, hundreds of MB),
# and how many more may wait on runs that wait (a sleep, a read that never ends) until the idle limit.
CHAPTERS_AT_ONCE = 2
CHAPTERS_WAITING = 2


class Grading:
    """One grading of a class: what its chapters share (the reader, the learners' CPU, the progress,
    the places of chapters at work)."""

    def __init__(self, submissions: Path, learners: dict, limits: dict, jobs: int, wanted: list[str],
                 scratch_root: Path, progress: Progress):
        self.submissions, self.learners, self.limits, self.scratch_root = submissions, learners, limits, scratch_root
        self.side_by_side = max(1, min(CHAPTERS_AT_ONCE, jobs, len(wanted)))
        self.per_chapter = max(1, jobs // self.side_by_side)
        self.places = threading.Semaphore(self.side_by_side)
        self.budget = CpuBudget(limits["learner_seconds"])
        self.reader = Reader(env=clean_env())
        self.progress = progress

    def chapter(self, nb_name: str, handed: dict[str, dict]) -> None:
        """Grade one chapter for every learner. Whatever one learner returned costs only their own
        row: each step that reads or checks a learner's work catches its own failure and says so in a
        note; their run is held to its own limits, and to what is left of their CPU for the grading."""
        spec = chapters()[nb_name]
        to_run, labels, reserved = [], {}, {}
        work = Path(tempfile.mkdtemp(prefix="grade-", dir=self.scratch_root))
        records = Path(tempfile.mkdtemp(prefix="records-", dir=self.scratch_root))
        place = Place(self.places)
        try:
            place.take()
            for i, (name, notebooks_of) in enumerate(handed.items()):
                learner = self.learners[name]
                ran = self.read(nb_name, spec, name, notebooks_of.get(nb_name), work, str(i))
                if ran is None:
                    self.progress.ran_one()
                    continue
                give = self.budget.reserve(name, self.limits["notebook_seconds"])
                if give < MIN_RUN_SECONDS:
                    self.budget.settle(name, give, 0.0)
                    learner.verdicts.update(dict.fromkeys(ran["labels"], TIMED_OUT))
                    learner.notes.append(f"{nb_name}: not run: this learner's runs had used, or were using beside it, "
                                         f"the CPU the grading gives one learner ({self.limits['learner_seconds']:g} s, "
                                         "--learner-timeout); timed out, not wrong")
                    self.progress.ran_one()
                    continue
                reserved[name] = give
                labels[name] = ran["labels"]
                to_run.append({**ran, "name": name, "cpu_limit": give})
            if not to_run:
                return

            def heard(item: dict) -> None:
                if item.get("idle") is True:
                    place.give_back()      # only runs that wait are left: another chapter may start
                    return
                name = item.get("learner")
                if name in reserved:       # what the run set aside is free again as soon as it ends
                    cpu = item.get("cpu")
                    self.budget.settle(name, reserved.pop(name), cpu if isinstance(cpu, (int, float)) else None)
                    self.learners[name].cpu += cpu if isinstance(cpu, (int, float)) else 0.0
                self.progress.ran_one()

            runs = run_chapter(spec, to_run, self.submissions, self.limits, self.per_chapter, self.scratch_root,
                               work, records, on_event=heard)
            place.give_back()
            for name in labels:
                run = runs[name]
                if name in reserved:       # a run the chapter's process did not report (it failed)
                    self.budget.settle(name, reserved.pop(name), run.get("cpu"))
                if run.get("problem"):
                    self.learners[name].notes.append(f"{nb_name}: {run['problem']}")
                missing = list(run.get("contained") or [])
                if missing:
                    self.learners[name].notes.append(f"{nb_name}: ran with {'; '.join(map(str, missing))}")
                    UNCONTAINED.update(map(str, missing))
            place.take()
            items, problem = check_chapter(spec, runs, labels)
        finally:
            place.give_back()
            shutil.rmtree(records, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)
            self.progress.checked_chapter(handed)
        given = set()
        for item in items:
            learner = self.learners[item["learner"]]
            given.add((item["learner"], item["label"]))
            learner.verdicts[item["label"]] = item["verdict"] if item["verdict"] in VERDICTS else "error"
            learner.messages[item["label"]] = str(item.get("message") or "")[:1000]
            cases = item.get("cases")
            if isinstance(cases, list) and len(cases) == 2 and all(isinstance(n, int) and 0 <= n < 10 ** 6 for n in cases) \
                    and cases[0] <= cases[1]:
                learner.cases[item["label"]] = tuple(cases)
            if item.get("note"):
                learner.notes.append(f"{item['label']}: {str(item['note'])[:300]}")
        for name, present in labels.items():
            lost = [label for label in present if (name, label) not in given]
            if lost:
                self.learners[name].verdicts.update(dict.fromkeys(lost, "error"))
                self.learners[name].notes.append(f"{nb_name}: {problem or 'the checker gave no verdict'} "
                                                 f"({len(lost)} answers not checked)")

    def read(self, nb_name: str, spec: dict, name: str, paths: list[Path] | None, work: Path, tag: str) -> dict | None:
        """One learner's notebook of the chapter, read by the reader: what their run needs
        ({cells_file, start, copies, labels}), or None if there is nothing to run (each exercise's
        verdict and the reason set here)."""
        learner = self.learners[name]
        if not paths:
            learner.verdicts.update({label: "missing" for label in spec["order"]})
            learner.notes.append(f"{nb_name} not returned")
            return None
        path = paths[0]
        try:
            path, info = choose(paths, self.submissions / name, spec, self.reader, work, tag)
        except Exception as e:     # a learner's file the reading did not foresee: their row only
            info = {"refused": f"{nb_name} could not be read ({type(e).__name__})"}
        learner.notes.extend(info.get("notes", []))
        try:
            learner.returned_at[nb_name] = os.lstat(path).st_mtime
        except OSError:
            pass
        if "refused" in info:
            learner.notes.append(info["refused"])
            learner.verdicts.update({label: "error" for label in spec["order"]})
            return None
        present = [label for label in spec["order"] if label in info["labels"]]
        for label in spec["order"]:
            if label not in present:
                learner.verdicts[label] = "missing"
                learner.notes.append(f"{label}: no answer cell for it in {nb_name} (none labelled with it, none "
                                     "found by its content)")
        if not present:
            Path(info["cells_file"]).unlink(missing_ok=True)
            return None
        return {"cells_file": info["cells_file"], "start": info["start"], "copies": info.get("copies") or {},
                "labels": present}


class Place:
    """A chapter's place among those at work, taken and given back (at most once each time)."""

    def __init__(self, places: threading.Semaphore):
        self.places, self.held, self.lock = places, False, threading.Lock()

    def take(self) -> None:
        self.places.acquire()
        with self.lock:
            self.held = True

    def give_back(self) -> None:
        with self.lock:
            if self.held:
                self.held = False
                self.places.release()


def grade(submissions: Path, cell_timeout: float = 60, notebook_timeout: float = 300, jobs: int = 2,
          chapters_wanted: list[str] | None = None, memory_mb: int = 2048, wall_timeout: float | None = None,
          idle_timeout: float | None = None, learner_timeout: float | None = None,
          progress_stream=None) -> tuple[list[Learner], list[str]]:
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
              "memory_mb": memory_mb, "idle_seconds": idle_timeout or LIMITS["idle_seconds"],
              # By default at least a notebook's limit for each chapter at work at once: a learner's run in
              # one chapter never finds what it may use taken by their run in the chapter beside it.
              "learner_seconds": learner_timeout or max(LIMITS["learner_seconds"], CHAPTERS_AT_ONCE * notebook_timeout)}
    progress = Progress(list(handed), len(wanted), stream=progress_stream)
    # Every chapter's work folder (each learner's cells wait there for their run) in one folder of
    # the grading's own, hidden from every run: a run sees no other chapter's learners either.
    with tempfile.TemporaryDirectory(prefix="grading-") as scratch_root:
        os.chmod(scratch_root, 0o700)
        grading = Grading(submissions, learners, limits, jobs, wanted, Path(scratch_root), progress)
        with ThreadPoolExecutor(max_workers=grading.side_by_side + CHAPTERS_WAITING) as pool:
            futures = {nb_name: pool.submit(grading.chapter, nb_name, handed) for nb_name in wanted}
            for nb_name, future in futures.items():
                try:
                    future.result()
                except Exception as e:   # the grader's own failure on one chapter: that chapter's columns only
                    for learner in learners.values():
                        for label in book[nb_name]:
                            learner.verdicts.setdefault(label, "error")
                        learner.notes.append(f"{nb_name}: the grader failed on this chapter ({type(e).__name__})")
        grading.reader.close()
    progress.finish()
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
    parser.add_argument("--points", help="the points of each exercise, a CSV file as `make grade` reads it "
                        "(default: one point each)")
    try:
        args = parser.parse_args(argv)
        points = read_points(Path(args.points), [label for spec in chapters().values() for label in spec["order"]]) \
            if args.points else {}
        written = export_otter(Path(args.otter), args.chapters.split(",") if args.chapters else None, points)
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


def points_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade points", description="Write a points file to edit: every exercise, "
                                     "one point each (or the points of an existing file).")
    parser.add_argument("out", help=f"the file to write (a CSV file; name it {POINTS_FILE} in the class's folder, or "
                        "give it to `grade.py DIR --points FILE`)")
    args = parser.parse_args(argv)
    exercises = catalogue()
    out = Path(args.out)
    try:
        points = read_points(out, [e.label for e in exercises]) if out.exists() else {}
        write_points(out, exercises, points)
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {out} could not be written ({e.strerror})", file=sys.stderr)
        return 2
    print(f"points: {out} ({len(exercises)} exercises; edit the second column)")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    if argv[:1] == ["key"]:
        return key_main(argv[1:])
    if argv[:1] == ["points"]:
        return points_main(argv[1:])
    parser = argparse.ArgumentParser(prog="grade", description="Run the notebooks learners returned; write a gradebook.")
    parser.add_argument("submissions", help="a folder with one folder per learner")
    parser.add_argument("--cell-timeout", type=float, default=LIMITS["cell_cpu_seconds"],
                        help="CPU seconds one of a learner's cells may use (default %(default)g)")
    parser.add_argument("--notebook-timeout", type=float, default=LIMITS["notebook_seconds"],
                        help="CPU seconds one notebook's run may use, all its processes together (default %(default)g)")
    parser.add_argument("--learner-timeout", type=float,
                        help=f"CPU seconds all of one learner's runs may use together, in the whole grading: what one "
                             f"learner can cost the class (default {LIMITS['learner_seconds']:g}, or twice "
                             "--notebook-timeout if that is more)")
    parser.add_argument("--idle-timeout", type=float, default=LIMITS["idle_seconds"],
                        help="seconds a run may wait without using the CPU (a sleep, a read that never ends) before "
                             "it is stopped (default %(default)g)")
    parser.add_argument("--wall-timeout", type=float, help=f"seconds on the clock one notebook may take (default "
                        f"{WALL_FACTOR} times --notebook-timeout): what it stops is marked timed out, not wrong")
    parser.add_argument("--jobs", type=int, default=2, help="learners' runs at work at once (default 2; a run that "
                        "waits leaves its place to another)")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: those returned)")
    parser.add_argument("--due", help="the due date, as 2026-12-01T23:59 (local time) or with an offset: a notebook "
                        "changed after it is marked late")
    parser.add_argument("--memory", type=int, default=LIMITS["memory_mb"],
                        help="MB of memory a learner's run may use, all its processes together (default %(default)g)")
    parser.add_argument("--points", help=f"the points of each exercise, a CSV file (default: {POINTS_FILE} in the "
                        "class's folder if there is one, else one point each; `grade.py points FILE` writes one)")
    args = parser.parse_args(argv)
    folder = Path(args.submissions)
    if not folder.is_dir():
        print(f"error: {folder} is not a folder; give the folder that holds one folder per learner", file=sys.stderr)
        return 2
    if min(args.cell_timeout, args.notebook_timeout, args.learner_timeout or 1, args.idle_timeout) <= 0 \
            or (args.wall_timeout is not None and args.wall_timeout <= 0) or args.jobs < 1 or args.memory < 64:
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
    points_file = Path(args.points) if args.points else folder / POINTS_FILE
    try:
        points = read_points(points_file, [label for spec in chapters().values() for label in spec["order"]]) \
            if args.points or points_file.is_file() else {}
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        learners, columns = grade(folder, args.cell_timeout, args.notebook_timeout, args.jobs,
                                  args.chapters.split(",") if args.chapters else None, args.memory, args.wall_timeout,
                                  args.idle_timeout, args.learner_timeout)
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    mark_late(learners, due)
    write_gradebook(folder / GRADEBOOK, learners, columns, points)
    write_feedback(folder / FEEDBACK, learners, columns, points)
    if UNCONTAINED:
        unwalled = any(m.startswith(("no namespaces", "files not walled off")) for m in UNCONTAINED)
        print("warning: learners' runs were not fully contained here (" + "; ".join(sorted(UNCONTAINED)) + "); "
              + ("a run could reach what it was not walled off from (without namespaces: every file your account "
                 "can write, the course's checks and this gradebook among them, and the network), so these marks "
                 "are not protected" if unwalled else "a run was held only by the walls it had")
              + ": see 'What is contained where' in instructors.md", file=sys.stderr)
    print(f"graded {len(learners)} learners on {len(columns)} exercises in {time.perf_counter() - start:.0f} s; "
          f"the grader's own peak memory {own_peak_mb():.0f} MB (budget {BUDGETS['grade_memory_mb']:.0f} MB, "
          "its runs not counted)" + (f"; points from {points_file}" if points else ""))
    print(summary(learners, columns, points))
    print(CPU.summary())
    costliest = sorted(learners, key=lambda l: -l.cpu)[:3]
    print("  costliest learners' runs: " + ", ".join(f"{l.name} {l.cpu:.0f} s" for l in costliest)
          + f" (each learner at most {args.learner_timeout or max(LIMITS['learner_seconds'], CHAPTERS_AT_ONCE * args.notebook_timeout):g} s: --learner-timeout)")
    print(f"gradebook: {folder / GRADEBOOK}; each learner's feedback: {folder / FEEDBACK}/LEARNER.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
