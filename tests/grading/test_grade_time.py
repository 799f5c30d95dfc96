"""Time limits that a busy machine cannot turn into wrong answers.

A notebook's limit counts the CPU its run used, so a run that gets a tenth of a core is not stopped
for taking ten times as long on the clock; the clock's own limit (four times the CPU limit by
default) stops only a run that waits, and what a time limit stops is marked `timed out`, not wrong,
with a note that says which limit and how much CPU the run had used.

Forced cheaply: the watch on real processes with limits of a fraction of a second, and an honest
notebook graded for real with a clock limit of one second while the run stalls (a learner's cell
that sleeps stands for a machine that gives the run no CPU).
"""
import csv
import os
import subprocess
import sys
import time

import nbformat

from .test_grade import LABELS, NAME, ROOT, answer_cells, insert_above, solutions, student_notebook

sys.path.insert(0, str(ROOT / "scripts"))

from grading import checker  # noqa: E402
from grading.watch import Watch  # noqa: E402


def watched(commands: dict, limits: dict, seconds: float, held_back: str | None = None,
            started=None) -> tuple[Watch, dict, dict]:
    """Real processes (name -> (command, clock limit)) under the watch, checked every tenth of a second
    until every one but `held_back` is stopped, and a second more, or `seconds` pass; then killed. The
    watch, its entries by name, and the seconds each took to be stopped. `started` hears the pids."""
    processes = {name: subprocess.Popen([sys.executable, "-c", command]) for name, (command, _) in commands.items()}
    if started:
        started({name: process.pid for name, process in processes.items()})
    running = {}
    for name, process in processes.items():
        r, w = os.pipe()
        os.close(w)
        os.set_blocking(r, False)
        running[process.pid] = {"deadline": time.monotonic() + commands[name][1], "watch": r}
    watch = Watch(running, limits)
    start, took = time.monotonic(), {}
    try:
        while time.monotonic() - start < seconds:
            watch.check()
            for name, process in processes.items():
                if running[process.pid].get("killed") and name not in took:
                    took[name] = time.monotonic() - start
            if set(took) >= set(processes) - {held_back} and time.monotonic() - start > max(took.values()) + 1:
                break
            time.sleep(0.1)
    finally:
        for process in processes.values():
            process.kill()
            process.wait()
            os.close(running[process.pid]["watch"])
    return watch, {name: running[process.pid] for name, process in processes.items()}, took


def test_the_watch_stops_a_waiting_run_on_the_clock_and_a_computing_one_on_its_cpu():
    """A run asleep past its clock limit is stopped as "wall" (its CPU said, its answers not wrong); a
    run that computes is stopped at its CPU limit, however long the busy machine makes that on the
    clock (its clock limit here is ten minutes)."""
    limits = {"cell_cpu_seconds": 60, "notebook_seconds": 0.3, "notebook_wall_seconds": 1.0}
    watch, runs, _ = watched({"asleep": ("import time; time.sleep(120)", 1.0), "computing": ("while True: pass", 600.0)},
                             limits, 300)
    asleep, computing = runs["asleep"], runs["computing"]
    assert asleep["killed"] == "wall" and computing["killed"] == "notebook", runs
    assert asleep["cpu"] < 0.3                      # stopped by the clock, not by its CPU
    note = watch.stopped(asleep, limits)
    assert "stopped after 1 s on the clock" in note and "timed out, not wrong" in note, note
    assert watch.stopped(computing, limits) == ("stopped after 0.3 s of CPU, counted over all its processes (the "
                                                "time limit of a notebook)")


def test_a_run_that_waits_is_stopped_at_the_idle_limit_and_one_the_machine_holds_back_is_not(monkeypatch):
    """A run whose processes all wait (here a sleep) is stopped after the idle limit, long before its
    clock's ceiling; a run with a process ready to run that a busy machine gives no CPU (its CPU count
    standing still; a stand-in for /proc says it is ready to run) is at work, not idle, however long."""
    from grading import watch as watching

    limits = {"cell_cpu_seconds": 60, "notebook_seconds": 60, "notebook_wall_seconds": 600, "idle_seconds": 1.0}
    real, ready = watching.tree, set()
    monkeypatch.setattr(watching, "tree", lambda pid: (real(pid)[0], pid in ready))
    sleep = "import time; time.sleep(120)"
    watch, runs, took = watched({"sleeper": (sleep, 600.0), "held back": (sleep, 600.0)}, limits, 60, "held back",
                                started=lambda pids: ready.add(pids["held back"]))
    assert runs["sleeper"]["killed"] == "idle" and 1.0 < took["sleeper"] < 30, (runs, took)
    assert not runs["held back"].get("killed"), runs
    note = watch.stopped(runs["sleeper"], limits)
    assert note.startswith("stopped after waiting 1 s without using the CPU") and "timed out, not wrong" in note


def test_an_answer_a_time_limit_stopped_is_timed_out_not_wrong():
    spec = {"module": "part3/search_by_hand", "check": "logit_of_cefa",
            "args": [{"role": "answer", "name": "answer"}]}
    assert checker.check_one(spec, None, {}, stopped="wall")["verdict"] == "timed out"
    assert checker.check_one(spec, None, {}, stopped="cell")["verdict"] == "timed out"
    assert checker.check_one(spec, None, {})["verdict"] == "error"       # a run that ended for another reason
    cell = {"label": "ex-search-score", "problem": "ran too long (the time limit of a cell)"}
    assert checker.check_one(spec, cell, {})["verdict"] == "timed out"
    assert checker.check_one(spec, {**cell, "problem": "raised ValueError"}, {})["verdict"] == "error"


def test_an_honest_notebook_the_clock_stops_is_timed_out_and_listed_to_review(tmp_path):
    """Graded for real with a clock limit of one second: the run stalls two seconds before the first
    answer (as on a machine that gives it no CPU), so the clock stops it; every answer is `timed out`,
    none `error` or `not yet`, the note says which limit, and the exercises are listed to review."""
    nb = student_notebook()
    worked = solutions()
    for label, cell in answer_cells(nb).items():
        cell.source = worked[label]
    insert_above(nb, "import time\ntime.sleep(3)")
    (tmp_path / "ada").mkdir()
    nbformat.write(nb, tmp_path / "ada" / NAME)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), str(tmp_path), "--wall-timeout", "1"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    with (tmp_path / "gradebook.csv").open() as f:
        ada = next(csv.DictReader(f))
    assert {label: ada[label] for label in LABELS} == dict.fromkeys(LABELS, "timed out"), ada["notes"]
    assert "stopped after 1 s on the clock" in ada["notes"] and "timed out, not wrong" in ada["notes"], ada["notes"]
    assert ada["to review"].split() == LABELS
    assert f"ada: 0/{len(LABELS)} correct ({len(LABELS)} timed out)" in result.stdout
