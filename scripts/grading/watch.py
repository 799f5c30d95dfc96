"""Time limits kept from outside a learner's run, by the chapter's process: no signal handling inside
the run can defeat them.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

class Watch:
    """Stops, from outside, a run past one of its time limits: its notebook's CPU time (the whole
    run's learner process and the children it waited for), one cell's CPU time (its own CPU timer
    defeated: SIGPROF ignored or blocked), or its wall-clock time. Each run tells it, on a pipe of its
    own, when a cell starts ("s") and ends ("e"); the CPU is read from /proc, for the run's first
    process (the learner's, in its process namespace) and the children it waited for. The chapter's
    process calls `check` on a timer of its own every half second, also while the chapter's cells run.

    The notebook's limit counts CPU seconds, not wall-clock seconds, so that a busy machine (other
    work, or the grader's own runs side by side) does not stop an honest notebook: a run that gets a
    tenth of a core takes ten times as long on the clock and the same CPU time. The wall-clock limit
    (`notebook_wall_seconds`, by default 4 times the CPU limit: grading/running.py) only stops a run that waits
    (a `time.sleep`, an `input()`) or a machine far too busy, and a run it stops is reported apart
    ("wall"), with the CPU it had used: its exercises are timed out, not wrong.

    `running`: pid -> {"deadline" (the wall clock's), "watch" (the pipe's reading end), ...}; `check`
    marks each run it kills with what ran over ("notebook", "cell" or "wall") and keeps the CPU it
    last read in "cpu"."""

    TICKS = os.sysconf("SC_CLK_TCK")

    def __init__(self, running: dict, limits: dict):
        self.running = running
        self.enabled = "outside_timer" not in set(limits.get("without", ()))
        # The cell's CPU limit, with room for the in-run timer to fire first.
        self.cell_cpu = 1.5 * limits["cell_cpu_seconds"] + 1
        self.notebook_cpu = limits.get("notebook_seconds")

    @classmethod
    def cpu(cls, pid: int) -> float | None:
        """CPU seconds of the run's learner process (the middle process's child, when there is one)
        and of the children it waited for."""
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            inner = int(children[0]) if children else pid
            text = Path(f"/proc/{inner}/stat").read_text()
            fields = text[text.rindex(")") + 2:].split()
            return sum(int(f) for f in fields[11:15]) / cls.TICKS
        except (OSError, ValueError, IndexError):
            return None

    def check(self, *_) -> None:
        now = time.monotonic()
        for pid, entry in list(self.running.items()):
            try:
                marks = os.read(entry["watch"], 4096)
            except OSError:
                marks = b""
            used = self.cpu(pid)
            if used is not None:
                entry["cpu"] = used
            if marks:
                entry["cell_cpu0"] = used if marks.endswith(b"s") else None
            over = "wall" if now > entry["deadline"] else None
            if over is None and self.enabled and used is not None:
                if self.notebook_cpu and used > self.notebook_cpu:
                    over = "notebook"
                elif entry.get("cell_cpu0") is not None and used - entry["cell_cpu0"] > self.cell_cpu:
                    over = "cell"
            if over and not entry.get("killed"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                entry["killed"] = over

    def stopped(self, entry: dict, limits: dict) -> str | None:
        """What a run the watch killed was stopped by, in the grader's words."""
        over = entry.get("killed")
        if over == "notebook":
            return f"stopped after {self.notebook_cpu:g} s of CPU (the time limit of a notebook)"
        if over == "cell":
            return (f"stopped from outside: one cell used more than {self.cell_cpu:g} s of CPU (the time "
                    "limit of a cell; the notebook's later cells did not run)")
        if over == "wall":
            return (f"stopped after {limits['notebook_wall_seconds']:g} s on the clock, having used "
                    f"{entry.get('cpu') or 0:.0f} s of CPU of its {self.notebook_cpu:g}: the machine was too busy, "
                    "or the notebook waited; what it did not reach is timed out, not wrong (grade it again "
                    "on a quieter machine)")
        return None
