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
import tempfile
import threading
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent

def clean_env() -> dict:
    """What the runs and the checker see of the grader's environment: no token or key of the
    instructor's, only what Python needs."""
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV") if k in os.environ}
    return {**keep, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}


def run_chapter(spec: dict, learners: list[dict], submissions: Path, limits: dict, jobs: int,
                scratch_root: Path, records: Path) -> dict[str, dict]:
    """Every learner's contained run of one chapter: learner name -> {records, contained, done, crash,
    problem}, `records` the file (in `records`, a folder of the grader's own) that holds what the run
    wrote down, line by line.

    The chapter's work folder is made in `scratch_root` (the grading's own folder, which holds the
    other chapters' work folders too); a run sees neither it nor the class's folder.

    Each learner's cells go to the run in a file of their own (read by their run only, then hidden
    under its working folder), and their answers come back on a pipe of their own, read here in
    pieces: a record longer than `record_bytes` is dropped as it comes, and a run that writes more
    than `run_bytes` in all is read no further, so whatever a run writes, the grader holds at most
    one record of it in memory (the records go to a file; the checker reads them from there)."""
    runs = {learner["name"]: {"records": str(records / f"records-{i}.jsonl"), "contained": None, "done": False,
                              "crash": None, "problem": None, "dropped": 0, "stopped": None}
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

    with tempfile.TemporaryDirectory(prefix="grade-", dir=scratch_root) as work:
        work_path = Path(work)
        os.chmod(work, 0o700)
        placed = []
        for i, learner in enumerate(learners):
            cells_file = work_path / f"cells-{i}.json"
            cells_file.write_text(json.dumps(learner["cells"]))
            read_end, write_end = os.pipe()
            ends.append(write_end)
            readers.append(threading.Thread(target=read, args=(read_end, learner["name"]), daemon=True))
            placed.append({"name": learner["name"], "start": learner["start"], "cells_file": str(cells_file),
                           "fd": write_end})
        job = {"cells": [c["source"] for c in spec["cells"]], "learners": placed, "answers": spec["answers"],
               "limits": limits, "jobs": jobs, "workdir": str(work_path),
               "hide": [str(submissions.resolve()), str(Path(scratch_root).resolve())]}
        env = {**clean_env(), "HOME": work}
        for thread in readers:
            thread.start()
        try:
            process = subprocess.Popen([sys.executable, str(HERE / "run.py")], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                       cwd=work, pass_fds=ends)
        finally:
            for fd in ends:
                os.close(fd)
        try:
            stdout, stderr = process.communicate(json.dumps(job),
                                                 timeout=limits["notebook_wall_seconds"] * (len(learners) + 2) + 600)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        for thread in readers:
            thread.join(30)
    walls = None
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and "walls" in item:
            walls = item["walls"]
        if isinstance(item, dict) and isinstance(item.get("timing"), dict):
            CPU.add_chapter(item["timing"])
        if isinstance(item, dict) and item.get("learner") in runs and item.get("problem"):
            runs[item["learner"]]["problem"] = str(item["problem"])[:400]
        if isinstance(item, dict) and item.get("learner") in runs and item.get("stopped") in ("notebook", "cell", "wall"):
            runs[item["learner"]]["stopped"] = item["stopped"]
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
        last = (stderr.strip().splitlines() or ["no message"])[-1][:300]
        for run in runs.values():
            run["problem"] = f"the chapter's own run failed ({last})"
    if walls:
        for run in runs.values():
            run["walls"] = walls
    return runs


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
        return (f"CPU time: the chapters' own processes {chapters:.0f} s (start-up {s['chapter start']:.0f} s, "
                f"claims {s['chapter claims']:.0f} s, cells {s['chapter cells']:.0f} s), the learners' runs "
                f"{s['runs']:.0f} s ({self.runs} runs, {s['runs'] / max(self.runs, 1):.1f} s each), the checkers "
                f"{s['checkers']:.0f} s")


CPU = CpuTime()

# A learner's run may take WALL_FACTOR times its notebook's CPU limit on the clock: the CPU limit is
# what stops a notebook that computes too long, whatever else loads the machine; the clock's stops
# only one that waits, and what it stops is timed out, not wrong (grading/watch.py).
WALL_FACTOR = 4
LIMITS = {"cell_cpu_seconds": 60, "chapter_cell_cpu_seconds": 600, "notebook_seconds": 300, "memory_mb": 2048,
          "scratch_mb": 256, "record_bytes": 8 * 2 ** 20, "run_bytes": 64 * 2 ** 20, "processes": 128}
