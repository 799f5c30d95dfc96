"""How long `make grade` takes for a class: LEARNERS learners x every chapter with exercises.

    python scripts/grade_bench.py [--learners 30] [--jobs 2] [--chapters a,b] [--keep DIR]
    make bench-grade

Builds a class from the chapters' own code cells (what `make student` hands out): two learners in
three answer every exercise with the chapter's worked solution, the third leaves a wrong value or a
function that returns -1 (so the checks also run their diagnoses). Grades it with scripts/grade.py
and prints the wall time, the CPU time of every process the grading ran and where it went (the
grader's own account: the chapters' processes, the learners' runs, the checkers), the grader's own
peak memory, and the budgets (lib/budgets.py: 10 minutes on a 2-core machine, 300 MB). On a busy
machine the wall time says little: the CPU time divided by two is what two idle cores would take.
A benchmark, not a test: it exits 1 only if grading failed.
"""
from __future__ import annotations

import argparse
import csv
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import notebooks  # noqa: E402
from grading.chapters import chapters  # noqa: E402
from lib.budgets import BUDGETS  # noqa: E402

BUDGET_SECONDS = BUDGETS["grade_class"]


def solutions(doc: str) -> dict[str, str]:
    """Each exercise's worked solution code, from the chapter's source."""
    return notebooks.solution_code(ROOT / (doc + ".md"))


def make_class(folder: Path, learners: int, wanted: list[str] | None) -> int:
    specs = chapters()
    names = [n for n in specs if not wanted or n.removesuffix(".ipynb") in wanted]
    for name in names:
        spec = specs[name]
        worked = solutions(spec["doc"])
        for i in range(learners):
            cells = []
            for c in spec["cells"]:
                source = c["source"]
                if c["label"]:
                    source = worked.get(c["label"], source) if i % 3 != 2 else \
                        source.replace("= ...", "= -1").replace("    ...", "    return -1")
                cells.append(nbformat.v4.new_code_cell(
                    source, metadata={"course": {"exercise": c["label"], "role": "answer"}} if c["label"] else {}))
            out = folder / f"learner{i:02d}"
            out.mkdir(parents=True, exist_ok=True)
            nbformat.write(nbformat.v4.new_notebook(cells=cells), out / name)
    return len(names)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: every one)")
    parser.add_argument("--keep", help="build the class in this folder and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        chapters = make_class(folder, args.learners, args.chapters.split(",") if args.chapters else None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run([sys.executable, str(HERE / "grade.py"), str(folder), "--jobs", str(args.jobs)],
                                capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if result.returncode != 0:
            print(result.stderr[-2000:], file=sys.stderr)
            return 1
        with (folder / "gradebook.csv").open() as f:
            rows = list(csv.DictReader(f))
        columns = [c for c in rows[0] if c not in ("learner", "correct", "of", "to review", "late", "notes")]
        verdicts = [row[c] for row in rows for c in columns]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    print(f"graded {args.learners} learners x {chapters} chapters ({len(columns)} exercises, "
          f"{len(verdicts)} verdicts: {counts}) with --jobs {args.jobs}")
    print(f"wall {wall:.0f} s (budget {BUDGET_SECONDS:.0f} s on 2 cores), CPU of every process {cpu:.0f} s "
          f"({cpu / 2:.0f} s on 2 idle cores; {cpu / args.learners:.1f} s per learner)")
    for line in result.stdout.splitlines():
        if line.startswith(("CPU time:", "graded ")):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
