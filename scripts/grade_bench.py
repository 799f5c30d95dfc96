"""How long `make grade` takes for a class: LEARNERS learners x every chapter with exercises, hostile
learners among them.

    python scripts/grade_bench.py [--learners 30] [--jobs 2] [--chapters a,b] [--no-hostile] [--keep DIR]
    make bench-grade

Builds a class from the chapters' own code cells (what `make student` hands out): of the honest
learners two in three answer every exercise with the chapter's worked solution, the third leaves a
wrong value or a function that returns -1 (so the checks also run their diagnoses). Three of the
LEARNERS are hostile in every chapter (issue 48's attacks), their answers the worked solutions:
- `hostile-cpu` forks 100 spinning children and sleeps, or (every other chapter) runs a fork bomb that
  keeps trying once the process limit refuses it: its CPU is counted over all its processes and stops
  at the limits of a cell, a notebook and a learner (`--learner-timeout`, 600 s for the whole grading);
- `hostile-wait` sleeps, or (every other chapter) reads a FIFO no one writes: each run ends at the
  idle limit and, waiting, holds no place among the runs at work;
- `hostile-memory` returns four cells of a 1 MiB list literal after its answers: the reader does not
  parse them and the grader's own memory stays within its budget; the run compiles them, within the
  run's limits.
Grades it with scripts/grade.py and prints the wall time and the load average of the machine around it,
the CPU time of every process the grading ran and where it went (the grader's own account: the
chapters' processes, the learners' runs, the checkers, the costliest learners), the grader's own peak
memory, and the budgets (lib/budgets.py: 10 minutes on a 2-core machine, 300 MB). On a busy machine the
wall time says little: the CPU time divided by two is about what two idle cores would take.
A benchmark, not a test: it exits 1 only if grading failed, or an honest learner lost a mark.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
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
from grading.walls import Cgroups  # noqa: E402
from lib.budgets import BUDGETS  # noqa: E402

BUDGET_SECONDS = BUDGETS["grade_class"]
SPINS = ("import os, time\nfor _ in range(100):\n    if os.fork() == 0:\n        while True:\n            pass\n"
         "time.sleep(10 ** 6)")
FORK_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
SLEEPS = "import time\ntime.sleep(10 ** 6)"
FIFO = "import os\nos.mkfifo('nobody-writes')\nopen('nobody-writes').read()"
LITERAL_CHARS = 1_048_006


def literal(i: int) -> str:
    """A cell of LITERAL_CHARS characters: a list literal, within the grader's 1 MiB a cell."""
    head = f"x{i} = ["
    source = head + "1," * ((LITERAL_CHARS - len(head) - 2) // 2) + "1]"
    return source + " " * (LITERAL_CHARS - len(source))


def hostile_cells(kind: str, n: int, fork_bombs: bool) -> tuple[list[str], list[str]]:
    """The cells a hostile learner adds above its answers and after them, in the chapter numbered n."""
    if kind == "hostile-cpu":
        return [FORK_BOMB if n % 2 and fork_bombs else SPINS], []
    if kind == "hostile-wait":
        return [FIFO if n % 2 else SLEEPS], []
    return [], [literal(i) for i in range(4)]


HOSTILE = ("hostile-cpu", "hostile-wait", "hostile-memory")


def make_class(folder: Path, learners: int, wanted: list[str] | None, hostile: bool) -> tuple[int, list[str]]:
    """The class's notebooks in `folder`; the number of chapters and the names of the hostile learners."""
    specs = chapters()
    names = [n for n in specs if not wanted or n.removesuffix(".ipynb") in wanted]
    # Without a process limit per run (a pids control group) a fork bomb is held only by its CPU limit:
    # too late for a shared machine, so the bench leaves it out there.
    fork_bombs = "pids" in Cgroups.own() and os.geteuid() == 0
    attackers = list(HOSTILE[:learners]) if hostile else []
    people = [f"learner{i:02d}" for i in range(learners - len(attackers))] + attackers
    for n, name in enumerate(names):
        spec = specs[name]
        worked = notebooks.solution_code(ROOT / (spec["doc"] + ".md"))
        for i, person in enumerate(people):
            above, after = hostile_cells(person, n, fork_bombs) if person in attackers else ([], [])
            cells = []
            for c in spec["cells"]:
                source = c["source"]
                if c["label"]:
                    if above:
                        cells += [nbformat.v4.new_code_cell(s) for s in above]
                        above = []
                    source = worked.get(c["label"], source) if i % 3 != 2 or person in attackers else \
                        source.replace("= ...", "= -1").replace("    ...", "    return -1")
                cells.append(nbformat.v4.new_code_cell(
                    source, metadata={"course": {"exercise": c["label"], "role": "answer"}} if c["label"] else {}))
            cells += [nbformat.v4.new_code_cell(s) for s in after]
            out = folder / person
            out.mkdir(parents=True, exist_ok=True)
            nbformat.write(nbformat.v4.new_notebook(cells=cells), out / name)
    return len(names), attackers


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: every one)")
    parser.add_argument("--no-hostile", action="store_true", help="every learner honest")
    parser.add_argument("--keep", help="build the class in this folder and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        count, attackers = make_class(folder, args.learners, args.chapters.split(",") if args.chapters else None,
                                      not args.no_hostile)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_before = os.getloadavg()
        start = time.perf_counter()
        result = subprocess.run([sys.executable, str(HERE / "grade.py"), str(folder), "--jobs", str(args.jobs)],
                                stdout=subprocess.PIPE, text=True)
        wall = time.perf_counter() - start
        load_after = os.getloadavg()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if result.returncode != 0:
            return 1
        with (folder / "gradebook.csv").open() as f:
            rows = list(csv.DictReader(f))
    columns = [c for c in rows[0] if c not in ("learner", "correct", "of", "points", "of points", "to review", "late",
                                                "notes") and not c.endswith(" points")]
    verdicts = [row[c] for row in rows for c in columns]
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    waited = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # The processes the kernel ends with a run (its spinning children, a fork bomb's) are waited for by
    # no one, so their CPU is missing from the rusage of the processes waited for; the grader's own
    # account counts every process of each run (its control group): the larger of the two.
    found = re.search(r"CPU time: (\d+) s in all", result.stdout)
    cpu = max(waited, float(found.group(1)) if found else 0.0)
    worked = [row for row in rows if row["learner"] in attackers or int(row["learner"][-2:]) % 3 != 2]
    lost = [(row["learner"], c, row[c]) for row in worked if row["learner"] not in attackers for c in columns
            if row[c] != "correct"]
    print(f"graded {args.learners} learners x {count} chapters ({len(columns)} exercises, {len(verdicts)} verdicts: "
          f"{counts}) with --jobs {args.jobs}; hostile learners: {', '.join(attackers) or 'none'}")
    print(f"wall {wall:.0f} s (budget {BUDGET_SECONDS:.0f} s on 2 idle cores), load average {load_before[0]:.1f} "
          f"before and {load_after[0]:.1f} after (2 cores; the hostile learners' own processes count in it); CPU of "
          f"every process {cpu:.0f} s ({waited:.0f} s of it in the processes waited for), so about {cpu / 2:.0f} s on "
          f"2 idle cores ({cpu / args.learners:.1f} s per learner)")
    for line in result.stdout.splitlines():
        if line.startswith(("CPU time:", "graded ", "  costliest")):
            print(line)
    for row in rows:
        if row["learner"] in attackers:
            print(f"  {row['learner']}: {row['correct']}/{len(columns)} correct; {row['notes'][:300]}")
    if lost:
        print(f"an honest learner lost {len(lost)} marks, for example {lost[:3]}", file=sys.stderr)
        return 1
    print("every honest learner's worked solution was graded correct")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
