"""The grader's side of the learners' runs: one chapter's process (grading/run.py) started per chapter,
each learner's cells handed to it in a file of their own, and what each run writes back read in pieces
on a pipe of its own, to a file (the checker reads the answers from there).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter, deque
from pathlib import Path

HERE = Path(__file__).resolve().parent

def clean_env() -> dict:
    """What the runs and the checker see of the grader's environment: no token or key of the
    instructor's, only what Python needs."""
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV") if k in os.environ}
    return {**keep, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}


def run_chapter(spec: dict, learners: list[dict], submissions: Path, limits: dict, jobs: int,
                scratch_root: Path, work: Path, records: Path, on_event=None) -> dict[str, dict]:
    """Every learner's contained run of one chapter: learner name -> {records, contained, done, crash,
    problem, stopped, cpu}, `records` the file (in `records`, a folder of the grader's own) that holds
    what the run wrote down, line by line.

    `learners`: [{name, start, cells_file, copies, cpu_limit}], each learner's cells in a file of
    their own (written by the reader into `work`, the chapter's work folder in `scratch_root`, the
    grading's own folder; a run reads its own file, then sees neither folder, nor the class's).
    `jobs` runs at work at once, and a few more that wait (grading/run.py). `on_event(item)` hears,
    as it comes, each run that ended ({"learner", "cpu", ...}) and the chapter left to waiting runs
    ({"idle": true}).

    Each learner's answers come back on a pipe of their own, read here in pieces: a record longer
    than `record_bytes` is dropped as it comes, and a run that writes more than `run_bytes` in all is
    read no further, so whatever a run writes, the grader holds at most one record of it in memory
    (the records go to a file; the checker reads them from there)."""
    runs = {learner["name"]: {"records": str(records / f"records-{i}.jsonl"), "contained": None, "done": False,
                              "crash": None, "problem": None, "dropped": 0, "stopped": None, "cpu": None}
            for i, learner in enumerate(learners)}
    readers, ends = [], []

    def take(run, line: bytes, first: bool, out) -> None:
        if len(line) <= 2 ** 16:          # the run's own short records: what containment did, done, crash
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                record = None
            if isinstance(record, dict):
                if first and isinstance(record.get("contained"), list):   # written before any learner's line ran
                    run["contained"] = [str(item)[:200] for item in record["contained"][:12]]
                if record.get("done") is True:
                    run["done"] = True
                if "crash" in record:
                    run["crash"] = re.sub(r"[^\w.]", "", str(record.get("crash_type", "")))[:60] or "unknown"
        out.write(line + b"\n")

    def read(fd, name):
        run = runs[name]
        buffer, dropping, total, first = bytearray(), False, 0, True
        with os.fdopen(fd, "rb", buffering=0) as pipe, open(run["records"], "wb") as out:
            while True:
                try:
                    chunk = pipe.read(2 ** 16)
                except OSError:
                    break
                if not chunk:
                    break
                total += len(chunk)
                if total > limits["run_bytes"]:
                    run["problem"] = (f"the run wrote more than the grader reads ({limits['run_bytes'] // 2 ** 20} MB): "
                                      "the rest was not read")
                    break
                start = 0
                while start < len(chunk):
                    nl = chunk.find(b"\n", start)
                    end = len(chunk) if nl < 0 else nl
                    if not dropping:
                        if len(buffer) + end - start > limits["record_bytes"]:
                            dropping = True
                            buffer.clear()
                            run["dropped"] += 1
                        else:
                            buffer += chunk[start:end]
                    if nl < 0:
                        break
                    if not dropping:
                        take(run, bytes(buffer), first, out)
                        first = False
                    buffer.clear()
                    dropping = False
                    start = nl + 1

    placed = []
    for learner in learners:
        read_end, write_end = os.pipe()
        ends.append(write_end)
        readers.append(threading.Thread(target=read, args=(read_end, learner["name"]), daemon=True))
        placed.append({"name": learner["name"], "start": learner["start"], "cells_file": learner["cells_file"],
                       "copies": learner.get("copies") or {}, "cpu_limit": learner["cpu_limit"], "fd": write_end})
    job = {"cells": [c["source"] for c in spec["cells"]], "learners": placed, "answers": spec["answers"],
           "limits": limits, "jobs": jobs, "most": jobs + WAITING_RUNS, "workdir": str(work),
           "hide": [str(submissions.resolve()), str(Path(scratch_root).resolve())]}
    env = {**clean_env(), "HOME": str(work)}
    for thread in readers:
        thread.start()
    try:
        process = subprocess.Popen([sys.executable, str(HERE / "run.py")], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                   cwd=work, pass_fds=ends)
    finally:
        for fd in ends:
            os.close(fd)
    errors: deque = deque(maxlen=20)      # the chapter's own process's last words, if it fails
    drain = threading.Thread(target=lambda: errors.extend(process.stderr), daemon=True)
    drain.start()
    # The chapter's process ends its runs itself (their limits); this only ends a chapter's process
    # that outlived every limit of all its runs together.
    deadline = threading.Timer(limits["notebook_wall_seconds"] * (len(learners) + 2) + 600, process.kill)
    deadline.start()
    try:
        process.stdin.write(json.dumps(job))
        process.stdin.close()
    except OSError:
        pass
    for line in process.stdout:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("timing"), dict):
            CPU.add_chapter(item["timing"])
        run = runs.get(item.get("learner"))
        if run is not None:
            if item.get("problem"):
                run["problem"] = str(item["problem"])[:400]
            if item.get("stopped") in ("notebook", "cell", "wall", "idle"):
                run["stopped"] = item["stopped"]
            if isinstance(item.get("cpu"), (int, float)):
                run["cpu"] = float(item["cpu"])
        if on_event is not None and (run is not None or item.get("idle") is True):
            on_event(item)
    process.wait()
    deadline.cancel()
    drain.join(30)
    for thread in readers:
        thread.join(30)
    for name, run in runs.items():
        if run["crash"]:
            run["problem"] = f"the grader's run failed ({run['crash']})"
        elif not run["problem"] and not run["done"]:
            run["problem"] = ("the run ended before the notebook did (the notebook ended Python, "
                              "or used up its memory, processes or CPU time)")
        if run["dropped"]:
            run["problem"] = "; ".join(filter(None, [run["problem"], f"{run['dropped']} records longer than the "
                                                     f"grader reads ({limits['record_bytes'] // 2 ** 20} MB) dropped"]))
    if process.returncode != 0 and not any(run["done"] or run["contained"] is not None for run in runs.values()):
        last = (("".join(errors)).strip().splitlines() or ["no message"])[-1][:300]
        for run in runs.values():
            run["problem"] = f"the chapter's own run failed ({last})"
    return runs


# Runs that wait (no CPU for a second) beside the `jobs` at work, in one chapter's process: each holds
# memory, so there are not many; the watch ends each at the idle limit.
WAITING_RUNS = 4


class CpuBudget:
    """Each learner's CPU for the whole grading (`learner_seconds`), so that whatever one learner
    returns costs the class at most that: a chapter's run of theirs may use the notebook's limit or
    what is left, whichever is less. What a chapter may use is set aside when it starts (chapters run
    side by side) and settled with what its run used when it ends."""

    def __init__(self, learner_seconds: float):
        self.seconds = learner_seconds
        self.used: Counter = Counter()
        self.held: Counter = Counter()
        self.lock = threading.Lock()

    def reserve(self, name: str, notebook_seconds: float) -> float:
        with self.lock:
            give = max(0.0, min(notebook_seconds, self.seconds - self.used[name] - self.held[name]))
            self.held[name] += give
            return give

    def settle(self, name: str, reserved: float, used: float | None) -> None:
        with self.lock:
            self.held[name] -= reserved
            self.used[name] += reserved if used is None else min(max(used, 0.0), reserved + 10)


UNCONTAINED: set[str] = set()   # what some run could not be walled off from, in words (for the warning)


class CpuTime:
    """Where the grading's CPU time went, as its processes report it (the grader's own summary)."""

    def __init__(self):
        self.seconds: Counter = Counter()
        self.runs = 0
        self.lock = threading.Lock()

    def add(self, what: str, seconds) -> None:
        if isinstance(seconds, (int, float)) and 0 <= seconds < 1e7:
            with self.lock:
                self.seconds[what] += seconds

    def add_chapter(self, timing: dict) -> None:
        for what in ("start", "claims", "cells"):
            self.add(f"chapter {what}", timing.get(what))
        runs = [r for r in timing.get("runs", []) if isinstance(r, (int, float))] if isinstance(timing.get("runs"), list) else []
        self.add("runs", sum(runs))
        with self.lock:
            self.runs += len(runs)

    def summary(self) -> str:
        s = self.seconds
        chapters = s["chapter start"] + s["chapter claims"] + s["chapter cells"]
        return (f"CPU time: {chapters + s['runs'] + s['checkers']:.0f} s in all: the chapters' own processes "
                f"{chapters:.0f} s (start-up {s['chapter start']:.0f} s, claims and own-text checks' model loaded once {s['chapter claims']:.0f} s, cells "
                f"{s['chapter cells']:.0f} s), the learners' runs {s['runs']:.0f} s ({self.runs} runs, "
                f"{s['runs'] / max(self.runs, 1):.1f} s each, every process of each counted), the checkers "
                f"{s['checkers']:.0f} s")


CPU = CpuTime()

# A learner's run may take WALL_FACTOR times its notebook's CPU limit on the clock: the CPU limit is
# what stops a notebook that computes too long, whatever else loads the machine; the clock's stops
# only one that waits, and what it stops is timed out, not wrong (grading/watch.py).
WALL_FACTOR = 4
LIMITS = {"cell_cpu_seconds": 60, "chapter_cell_cpu_seconds": 600, "notebook_seconds": 300, "memory_mb": 2048,
          "scratch_mb": 256, "record_bytes": 8 * 2 ** 20, "run_bytes": 64 * 2 ** 20, "processes": 128,
          "idle_seconds": 20, "learner_seconds": 600}
