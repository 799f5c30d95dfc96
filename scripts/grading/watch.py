"""Time limits kept from outside a learner's run, by the chapter's process: no signal handling inside
the run can defeat them.

Every limit but one counts CPU, not the clock, so that a busy machine (other work, or the grader's own
runs side by side) never stops an honest notebook: a run that gets a tenth of a core takes ten times as
long on the clock and the same CPU time. The CPU is the whole run's: every process it started, those
that ended included (its control group's count, or, where the machine keeps none, the run's process
tree read from /proc). The clock stops only a run that waits: one that uses no CPU for `idle_seconds`
(a sleep, a read of a pipe no one writes, a process stopped), soon, or one past a generous ceiling
(`notebook_wall_seconds`). What a time limit stops is timed out, not wrong.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

# CPU a run must use in an idle window to count as working (seconds): a run given even a hundredth of
# a core by a loaded machine uses more.
PROGRESS_CPU = 0.05
# A run that has used no CPU, and had no process ready to run, for this long is waiting: it holds no
# place among the runs at work (the chapter's process starts another beside it), though it is still
# watched.
WAITING_AFTER = 1.0
# A run that has used this much CPU is a long one: it goes on within its limits, at its share of the
# processor, but holds no place among the runs at work either, so that one learner's long run (a
# heavy notebook, or 100 spinning processes) never holds up the learners after it.
LONG_CPU = 10.0
# At most this many processes of a run read from /proc where no control group counts them.
MAX_TREE = 4096


def tree(pid: int) -> tuple[float | None, bool]:
    """CPU seconds of a process and all its descendants still alive, with the children each has waited
    for (/proc: user and system time, and the children's), or None if the process is gone; and whether
    one of them is running or ready to run (state R, or D: in the kernel on its behalf), as a process
    starved by a busy machine is, and one that waits (a sleep, a read, stopped) is not."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, stack, seen, runnable = 0, [pid], 0, False
    while stack and seen < MAX_TREE:
        p = stack.pop()
        seen += 1
        try:
            text = Path(f"/proc/{p}/stat").read_text()
            fields = text[text.rindex(")") + 2:].split()
            total += sum(int(f) for f in fields[11:15])
            runnable = runnable or fields[0] in ("R", "D")
        except (OSError, ValueError, IndexError):
            if p == pid:
                return None, False
            continue
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                stack += [int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split()]
                if not runnable and task != str(p):     # a thread of it at work
                    state = Path(f"/proc/{p}/task/{task}/stat").read_text()
                    runnable = state[state.rindex(")") + 2:state.rindex(")") + 3] in ("R", "D")
        except (OSError, ValueError):
            pass
    return total / ticks, runnable


def tree_cpu(pid: int) -> float | None:
    """CPU seconds of a process and all its descendants (`tree`)."""
    return tree(pid)[0]


class Watch:
    """Stops, from outside, a run past one of its time limits, each counted on the whole run:
    - "notebook": its CPU past the notebook's limit (`cpu_limit` in its entry: the notebook's limit, or
      less when the learner's CPU budget for the whole grading has less left);
    - "cell": one cell's CPU past the cell's limit, its own CPU timer defeated (SIGPROF ignored or
      blocked, or the CPU spent in other processes);
    - "idle": no CPU used for `idle_seconds` (a run that waits forever);
    - "wall": the clock past `notebook_wall_seconds` (a ceiling that only a run that mostly waits, or a
      machine far too busy, reaches).
    Each run tells it, on a pipe of its own, when a cell starts ("s") and ends ("e"). The chapter's
    process calls `check` on a timer of its own every half second, also while the chapter's cells run.

    `running`: pid -> {"deadline" (the clock's ceiling), "watch" (the pipe's reading end), "cgroups"
    (the run's, for its CPU count), "cpu_limit", ...}; `check` marks each run it kills with what ran
    over in "killed" and keeps the CPU it last read in "cpu"."""

    def __init__(self, running: dict, limits: dict):
        self.running = running
        self.enabled = "outside_timer" not in set(limits.get("without", ()))
        # The cell's CPU limit, with room for the in-run timer to fire first.
        self.cell_cpu = 1.5 * limits["cell_cpu_seconds"] + 1
        self.notebook_cpu = limits.get("notebook_seconds")
        self.idle = limits.get("idle_seconds")
        self.last_check = None

    @staticmethod
    def cpu(pid: int, cgroups=None) -> float | None:
        """CPU seconds of the whole run: its control group's count where there is one (it also counts
        processes that ended unwaited), else its process tree read from /proc."""
        return Watch.reading(pid, cgroups)[0]

    @staticmethod
    def reading(pid: int, cgroups=None) -> tuple[float | None, bool]:
        """(CPU seconds of the whole run, whether a process of it is at work or ready to be)."""
        counted = cgroups.usage() if cgroups is not None else None
        used, runnable = tree(pid)
        if counted is not None:
            used = max(counted, used or 0.0)
        return used, runnable

    def check(self, *_) -> None:
        now = time.monotonic()
        # A pause of the watch itself (this process starved, the machine suspended) is no one's idleness.
        stalled = self.last_check is not None and now - self.last_check > 2.0
        self.last_check = now
        for pid, entry in list(self.running.items()):
            try:
                marks = os.read(entry["watch"], 4096)
            except OSError:
                marks = b""
            used, runnable = self.reading(pid, entry.get("cgroups"))
            if used is not None:
                entry["cpu"] = used
                # A run is at work while it uses CPU, or has a process ready to run that a busy machine
                # has not yet given any: only a run that waits is idle, never one the load holds back.
                if "progress_at" not in entry or stalled or runnable or used - entry["progress_cpu"] >= PROGRESS_CPU:
                    entry["progress_at"], entry["progress_cpu"] = now, used
            if marks:
                entry["cell_cpu0"] = used if marks.endswith(b"s") else None
            over = "wall" if now > entry["deadline"] else None
            limit = entry.get("cpu_limit", self.notebook_cpu)
            if over is None and self.enabled and used is not None:
                if limit and used > limit:
                    over = "notebook"
                elif entry.get("cell_cpu0") is not None and used - entry["cell_cpu0"] > self.cell_cpu:
                    over = "cell"
            if over is None and self.idle and now - entry.get("progress_at", now) > self.idle:
                over = "idle"
            if over and not entry.get("killed"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                entry["killed"] = over

    @staticmethod
    def waiting(entry: dict) -> bool:
        """The run has used no CPU for a while: it waits, and holds no place among the runs at work."""
        return time.monotonic() - entry.get("progress_at", time.monotonic()) > WAITING_AFTER

    @staticmethod
    def at_work(entry: dict) -> bool:
        """The run holds a place among the runs at work: it neither waits nor has run long."""
        return not Watch.waiting(entry) and (entry.get("cpu") or 0.0) < LONG_CPU

    def stopped(self, entry: dict, limits: dict) -> str | None:
        """What a run the watch killed was stopped by, in the grader's words."""
        over = entry.get("killed")
        limit = entry.get("cpu_limit", self.notebook_cpu)
        if over == "notebook":
            budget = " (what was left of the learner's CPU for the whole grading)" \
                if limit is not None and self.notebook_cpu is not None and limit < self.notebook_cpu else ""
            return (f"stopped after {limit:g} s of CPU, counted over all its processes (the time limit of a "
                    f"notebook{budget})")
        if over == "cell":
            return (f"stopped from outside: one cell used more than {self.cell_cpu:g} s of CPU, counted over all "
                    "its processes (the time limit of a cell; the notebook's later cells did not run)")
        if over == "idle":
            return (f"stopped after waiting {self.idle:g} s without using the CPU (a sleep, a read that "
                    "never ends, a process stopped), having used "
                    f"{entry.get('cpu') or 0:.1f} s of CPU: what it did not reach is timed out, not wrong")
        if over == "wall":
            return (f"stopped after {limits['notebook_wall_seconds']:g} s on the clock, having used "
                    f"{entry.get('cpu') or 0:.0f} s of CPU of its {limit:g}: the machine was too busy, "
                    "or the notebook waited; what it did not reach is timed out, not wrong (grade it again "
                    "on a quieter machine)")
        return None
