"""A pytest plugin: the processor seconds each test file costs, in its worker and everything it starts.

    PYTHONPATH=scripts .venv/bin/python -m pytest -p pytest_cpu -n 3 --dist loadfile ...

With `--dist loadfile` a file's tests run one after another in one worker, so a file's cost is the
worker's processor time (user and system) from its first test's setup to its last test's teardown:
the worker's own, its waited-for children's (getrusage), and that of its descendants still alive (a
browser, a kernel, JupyterLab; read from /proc), so a process that outlives the file is charged for
what it did during the file. Processor seconds, not wall time: a shared machine inflates the wall
time of everything, and processor time is what two cores cannot hide.

Each worker writes its files' figures to $PYTEST_CPU_DIR (default /tmp/pytest-cpu), one JSON file per
worker; `python scripts/pytest_cpu.py [DIR]` adds them up, longest first.
"""
from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
OUT = Path(os.environ.get("PYTEST_CPU_DIR", "/tmp/pytest-cpu"))


def _children_of(pid: int, table: dict[int, list[int]]) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in table.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def _live_descendants_cpu() -> float:
    """utime + stime (+ their waited-for children's) of every living descendant of this process."""
    table: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        pid, ppid = int(entry.name), int(fields[1])
        table.setdefault(ppid, []).append(pid)
        stats[pid] = fields
    total = 0
    for pid in _children_of(os.getpid(), table):
        f = stats[pid]
        total += sum(int(x) for x in f[11:15])      # utime, stime, cutime, cstime
    return total / TICK


def cpu_now() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime + _live_descendants_cpu()


class _Files:
    def __init__(self):
        self.current = None
        self.start = (0.0, 0.0)
        self.files: dict[str, dict] = {}
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")

    def switch(self, path: str | None):
        if path == self.current:
            return
        now = (cpu_now(), time.perf_counter())
        if self.current is not None:
            f = self.files.setdefault(self.current, {"cpu": 0.0, "wall": 0.0})
            f["cpu"] += now[0] - self.start[0]
            f["wall"] += now[1] - self.start[1]
        self.current, self.start = path, now

    def write(self):
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"{self.worker}.json").write_text(json.dumps({"files": self.files, "load": os.getloadavg()}))


_STATE = _Files()


def pytest_runtest_logstart(nodeid, location):
    _STATE.switch(nodeid.split("::")[0])


def pytest_sessionfinish(session):
    _STATE.switch(None)
    _STATE.write()


def report(folder: Path = OUT) -> None:
    files: dict[str, dict] = {}
    for path in sorted(folder.glob("*.json")):
        for name, f in json.loads(path.read_text())["files"].items():
            files[name] = {"cpu": f["cpu"], "wall": f["wall"], "worker": path.stem}
    total = sum(f["cpu"] for f in files.values())
    for name, f in sorted(files.items(), key=lambda kv: -kv[1]["cpu"]):
        print(f"{f['cpu']:8.1f} cpu-s {f['wall']:8.1f} wall-s  {f['worker']:5s} {name}")
    print(f"{len(files)} files, {total:.1f} processor seconds")


if __name__ == "__main__":
    report(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
