"""What the grader says while it works: a progress bar on the terminal, with the learners done and the
time left.

On a terminal the bar is redrawn in place (at most twice a second); elsewhere (a log, CI) a line is
written at each tenth of the work, so a long grading is never silent. The time left is the time so far
scaled by the share of the learner-chapters still to grade.
"""
from __future__ import annotations

import sys
import threading
import time
from collections import Counter

WIDTH = 24


def minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


class Progress:
    """Learner-chapters graded (a run ended, or nothing to run), learners done (every chapter of theirs
    checked), and the time left, on `stream` (stderr)."""

    def __init__(self, learners: list[str], chapters: int, stream=None):
        self.total = len(learners) * chapters
        self.chapters = chapters
        self.learners = len(learners)
        self.ran = 0
        self.checked: Counter = Counter()
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self.shown_at = 0.0
        self.tenth = -1
        self.lock = threading.Lock()

    def ran_one(self, n: int = 1) -> None:
        """A learner's run of a chapter ended (or there was nothing of theirs to run)."""
        with self.lock:
            self.ran += n
            self.show()

    def checked_chapter(self, names) -> None:
        """A chapter's verdicts are in for these learners."""
        with self.lock:
            self.checked.update(list(names))
            self.show()

    def done_learners(self) -> int:
        return sum(n >= self.chapters for n in self.checked.values())

    def line(self) -> str:
        share = self.ran / self.total if self.total else 1.0
        bar = "#" * round(WIDTH * share) + "-" * (WIDTH - round(WIDTH * share))
        elapsed = time.monotonic() - self.start
        if share >= 1:
            left = f"done in {minutes(elapsed)}" if self.done_learners() >= self.learners else "checking the last answers"
        elif share > 0 and elapsed > 5:
            left = f"about {minutes(elapsed * (1 - share) / share)} left"
        else:
            left = "time left: measuring"
        return (f"grading [{bar}] {self.ran}/{self.total} learner-chapters, {self.done_learners()}/{self.learners} "
                f"learners done, {left}")

    def show(self, final: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if final or now - self.shown_at >= 0.5:
                self.shown_at = now
                self.stream.write("\r" + self.line() + ("\n" if final else ""))
                self.stream.flush()
            return
        tenth = int(10 * self.ran / self.total) if self.total else 10
        if final or tenth > self.tenth:
            self.tenth = tenth
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def finish(self) -> None:
        with self.lock:
            self.ran = self.total
            self.show(final=True)
