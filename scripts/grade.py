"""The gradebook: every notebook the learners returned, run afresh, read for its verdicts.

    python scripts/grade.py DIR [--cell-timeout S] [--notebook-timeout S] [--jobs N]
    make grade SUBMISSIONS=DIR

DIR holds one folder per learner with the notebooks they returned (the student notebooks of
`make student`, under their own names, at any depth: a hub's collected `LEARNER/ASSIGNMENT/`
folders work as they are). Each notebook runs in a fresh kernel, its cells one by one with a time
limit each and the whole notebook with a limit of its own; a cell that fails or runs too long is
stopped and the run goes on, so one broken notebook never stops the others.

An answer cell is found by the exercise label in its metadata (`course.exercise`, written by
`make student` from the exercise's directive), not by its position. Its verdict is what the
course's self-check printed there: the `data-verdict` of `lib.exercises.Feedback` (correct,
not yet, not answered); a cell that raised or timed out is `error`; a notebook or an answer cell
that is not there is `missing`. DIR/gradebook.csv gets one row per learner, one column per
exercise, the count of correct answers, and notes that say what went wrong where.

The learners' code runs with your rights: grade on the class's hub or in a container.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

VERDICTS = ("correct", "not yet", "not answered", "error", "missing")
VERDICT = re.compile(r'data-verdict="(correct|not yet|not answered)"')
GRADEBOOK = "gradebook.csv"


@dataclass
class Run:
    """One returned notebook after its run: the executed notebook (None if it could not be read)
    and what went wrong with the run as a whole."""
    nb: object | None
    problem: str = ""


@dataclass
class Learner:
    name: str
    verdicts: dict = field(default_factory=dict)   # label -> verdict
    notes: list = field(default_factory=list)

    def count(self, verdict: str) -> int:
        return sum(v == verdict for v in self.verdicts.values())


def assignment() -> dict[str, list[str]]:
    """Notebook name (search-by-hand.ipynb) -> its exercise labels, in the book's order."""
    import notebooks

    book = notebooks.Book.read()
    by_notebook: dict[str, list[str]] = {}
    for label, number in sorted(book.exercise_number.items(), key=lambda item: item[1]):
        doc = book.labels[label][0]
        by_notebook.setdefault(Path(doc).name + ".ipynb", []).append(label)
    return by_notebook


def returned(folder: Path) -> dict[str, Path]:
    """A learner's notebooks by file name, found at any depth (checkpoints skipped)."""
    found = {}
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in path.parts:
            found.setdefault(path.name, path)
    return found


def run(path: Path, cell_timeout: float, notebook_timeout: float) -> Run:
    """Execute a returned notebook in a fresh kernel, in an empty folder, with time limits."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as e:  # not JSON, not a notebook: the learner's file, not our bug
        return Run(None, f"{path.name} is not a readable notebook ({type(e).__name__})")
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    with tempfile.TemporaryDirectory(prefix="grade-") as work:
        client = NotebookClient(nb, kernel_name="python3", timeout=cell_timeout, allow_errors=True,
                                interrupt_on_timeout=True, resources={"metadata": {"path": work}})
        try:
            # The kernels' own log lines would bury the summary: their stderr goes nowhere.
            asyncio.run(asyncio.wait_for(client.async_execute(stderr=subprocess.DEVNULL), notebook_timeout))
        except (asyncio.TimeoutError, TimeoutError):
            return Run(nb, f"{path.name} stopped after {notebook_timeout:g} s (the time limit of a notebook)")
        except DeadKernelError:
            return Run(nb, f"{path.name}: the kernel died (the notebook ended Python)")
        except Exception as e:
            return Run(nb, f"{path.name}: the run stopped: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}")
    return Run(nb)


def answer_verdict(cell) -> tuple[str, str]:
    """The verdict of one executed answer cell, and a note when it is not a plain verdict."""
    if cell.get("execution_count") is None:
        return "error", "did not run"
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            ename = output.get("ename", "Error")
            why = "ran too long (the time limit of a cell)" if ename == "KeyboardInterrupt" else f"raised {ename}"
            return "error", why
    found = VERDICT.findall(" ".join(str(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", [])))
    if not found:
        return "error", "printed no verdict (was the check removed?)"
    if all(v == "correct" for v in found):
        return "correct", ""
    if all(v == "not answered" for v in found):
        return "not answered", ""
    return "not yet", ""


def grade_notebook(learner: Learner, labels: list[str], result: Run, name: str) -> None:
    if result.problem:
        learner.notes.append(result.problem)
    cells = {}
    if result.nb is not None:
        for cell in result.nb.cells:
            meta = cell.get("metadata", {}).get("course", {})
            if cell.cell_type == "code" and meta.get("role") == "answer":
                cells.setdefault(meta.get("exercise"), cell)
    for label in labels:
        if result.nb is None:
            learner.verdicts[label] = "error"
        elif label not in cells:
            learner.verdicts[label] = "missing"
            learner.notes.append(f"{name}: no answer cell for {label}")
        else:
            verdict, why = answer_verdict(cells[label])
            learner.verdicts[label] = verdict
            if why:
                learner.notes.append(f"{label}: {why}")


def grade(submissions: Path, cell_timeout: float = 60, notebook_timeout: float = 300, jobs: int = 2,
          chapters: list[str] | None = None) -> tuple[list[Learner], list[str]]:
    """Grade every learner's folder; returns the learners and the exercise labels (the columns)."""
    folders = sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise SystemExit(f"{submissions} holds no learner's folder (one folder per learner, with their notebooks)")
    book = assignment()
    handed = {name: returned(folder) for name, folder in ((f.name, f) for f in folders)}
    if chapters:
        wanted = [c if c.endswith(".ipynb") else c + ".ipynb" for c in chapters]
        unknown = [c for c in wanted if c not in book]
        if unknown:
            raise SystemExit(f"no exercises in {', '.join(unknown)}; chapters with exercises: "
                             + ", ".join(n.removesuffix(".ipynb") for n in book))
    else:  # the chapters that anyone returned
        wanted = [n for n in book if any(n in notebooks for notebooks in handed.values())]
    if not wanted:
        raise SystemExit(f"no learner in {submissions} returned a notebook with exercises "
                         "(expected the names `make student` writes, e.g. search-by-hand.ipynb)")
    columns = [label for name in wanted for label in book[name]]
    learners = {name: Learner(name) for name in handed}
    jobs_list = [(name, nb_name, handed[name].get(nb_name)) for name in handed for nb_name in wanted]

    def work(job):
        name, nb_name, path = job
        return job, (run(path, cell_timeout, notebook_timeout) if path else None)

    # One arithmetic thread per kernel: kernels side by side share the machine's cores.
    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    os.environ.pop("COURSE_STATIC_EXPLORERS", None)   # a learner's kernel, not the book's build
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for (name, nb_name, path), result in pool.map(work, jobs_list):
            learner = learners[name]
            if result is None:
                learner.verdicts.update({label: "missing" for label in book[nb_name]})
                learner.notes.append(f"{nb_name} not returned")
            else:
                grade_notebook(learner, book[nb_name], result, nb_name)
    return list(learners.values()), columns


def write_gradebook(path: Path, learners: list[Learner], columns: list[str]) -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["learner", *columns, "correct", "of", "notes"])
        for learner in learners:
            out.writerow([learner.name, *(learner.verdicts.get(c, "missing") for c in columns),
                          learner.count("correct"), len(columns), "; ".join(learner.notes)])


def summary(learners: list[Learner], columns: list[str]) -> str:
    lines = []
    for learner in learners:
        counts = Counter(learner.verdicts.get(c, "missing") for c in columns)
        rest = ", ".join(f"{counts[v]} {v}" for v in VERDICTS[1:] if counts[v])
        lines.append(f"  {learner.name}: {counts['correct']}/{len(columns)} correct" + (f" ({rest})" if rest else ""))
    per_exercise = ", ".join(f"{c} {sum(l.verdicts.get(c) == 'correct' for l in learners)}" for c in columns)
    lines.append(f"  correct per exercise: {per_exercise}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade", description="Run the notebooks learners returned; write a gradebook.")
    parser.add_argument("submissions", help="a folder with one folder per learner")
    parser.add_argument("--cell-timeout", type=float, default=60, help="seconds one cell may run (default 60)")
    parser.add_argument("--notebook-timeout", type=float, default=300, help="seconds one notebook may run (default 300)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run side by side (default 2)")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: those returned)")
    args = parser.parse_args(argv)
    folder = Path(args.submissions)
    if not folder.is_dir():
        print(f"error: {folder} is not a folder; give the folder that holds one folder per learner", file=sys.stderr)
        return 2
    if args.cell_timeout <= 0 or args.notebook_timeout <= 0 or args.jobs < 1:
        print("error: time limits must be positive numbers of seconds, and --jobs at least 1", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        learners, columns = grade(folder, args.cell_timeout, args.notebook_timeout, args.jobs,
                                  args.chapters.split(",") if args.chapters else None)
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    write_gradebook(folder / GRADEBOOK, learners, columns)
    print(f"graded {len(learners)} learners on {len(columns)} exercises in {time.perf_counter() - start:.0f} s")
    print(summary(learners, columns))
    print(f"gradebook: {folder / GRADEBOOK}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
