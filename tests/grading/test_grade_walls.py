"""Each wall of a learner's run, tried with it and without it: the attack fails with the wall and gets
through without it (so none of these tests could pass with the wall gone).

A helper process contains a forked process exactly as scripts/grading/run.py contains a learner's run
(its control groups, then `contain`), with one wall taken away or none, and that process tries: to
open /proc/sys/kernel/core_pattern for writing (never writing it), to keep the host's UTS namespace,
to leave System V shared memory behind, to connect to a Unix socket outside the run, to start 100
processes (limit 48), and to hold 3 x 150 MB at once in three processes (limit 256 MB for the run).
The watch from outside is tried on a real cell that ignores its CPU timer and loops.

Needs root (as the grader in CI), for the control groups and the namespaces without a user
namespace; skipped otherwise, and a wall this machine cannot raise is skipped with its reason.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HELPER = r"""
import ctypes, json, os, socket, sys, time
from pathlib import Path
sys.path.insert(0, SCRIPTS)
from grading import walls
libc = ctypes.CDLL(None, use_errno=True)


def trial(without, folder):
    scratch, hidden, outside = (Path(folder, name) for name in ("scratch", "class", "outside"))
    for f in (scratch, hidden, outside):
        f.mkdir(parents=True)
    limits = {"memory_mb": 256, "notebook_seconds": 30, "scratch_mb": 8, "processes": 48, "without": without}
    host_ns = {name: os.readlink(f"/proc/self/ns/{name}") for name in ("uts", "ipc")}
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(outside / "sock"))
    server.listen(1)
    groups = walls.Cgroups(f"grading-walltest-{os.getpid()}", limits)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        groups.join()
        report = {"missing": groups.missing + walls.contain(scratch, [str(hidden)], limits), "reached": []}
        try:
            os.close(os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY))   # opened, never written
            report["reached"].append("proc_sys")
        except OSError:
            pass
        for name, host in host_ns.items():        # the host's name, its System V shared memory
            if os.readlink(f"/proc/self/ns/{name}") == host:
                report["reached"].append(name)
        report["shm"] = libc.shmget(0x67726164 + len(without), 4096, 0o1000 | 0o600)   # IPC_CREAT: left behind?
        try:
            client = socket.socket(socket.AF_UNIX)
            client.connect(str(outside / "sock"))
            report["reached"].append("unix_sockets")
        except OSError:
            pass
        children = []
        for _ in range(100):
            try:
                child = os.fork()
            except OSError:
                break
            if child == 0:
                time.sleep(30)
                os._exit(0)
            children.append(child)
        if len(children) == 100:
            report["reached"].append("pids")
        for child in children:
            os.kill(child, 9)
            os.waitpid(child, 0)
        held_r, held_w = os.pipe()
        for _ in range(3):                      # three processes, 150 MB each, touched, held together
            if os.fork() == 0:
                block = b"\1" * (150 * 2 ** 20)
                os.write(held_w, b"k")
                time.sleep(1.5)
                os._exit(0)
        os.close(held_w)
        held = b""
        while chunk := os.read(held_r, 16):
            held += chunk
        if len(held) == 3:
            report["reached"].append("memory")
        os.write(w, json.dumps(report).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.waitpid(pid, 0)
    groups.remove()
    report = json.loads(data)
    # By key and id: another process on the machine may hold a segment of the same id (ids start at 0).
    left = [tuple(line.split()[:2]) for line in open("/proc/sysvipc/shm").read().splitlines()[1:]]
    report["shm_left"] = report["shm"] >= 0 and (str(0x67726164 + len(without)), str(report["shm"])) in left
    if report["shm_left"]:
        libc.shmctl(report["shm"], 0, None)                                 # IPC_RMID: the test leaves nothing
    report["groups_left"] = [str(p) for p in groups.paths if p.exists()]
    return report


# Every trial at once, each in a process of its own (the module imported once).
trials = json.loads(sys.argv[1])
pipes = {}
for i, without in enumerate(trials):
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(r)
        os.write(w, json.dumps(trial(without, Path(sys.argv[2], str(i)))).encode())
        os._exit(0)
    os.close(w)
    pipes[i] = r
out = []
for i, r in pipes.items():
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    out.append(json.loads(data))
print(json.dumps(out))
"""

WALLS = ["proc_sys", "uts", "ipc", "unix_sockets", "pids", "memory"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("the walls as root (control groups, namespaces without a user namespace) need root")
    tmp_path = tmp_path_factory.mktemp("walls")
    helper = tmp_path / "helper.py"
    helper.write_text(HELPER.replace("SCRIPTS", repr(str(ROOT / "scripts"))))
    # One run with every wall, and one run per wall without it, side by side.
    trials = [[], *[[wall] for wall in WALLS]]
    result = subprocess.run([sys.executable, str(helper), json.dumps(trials), str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    return {None: found[0], **dict(zip(WALLS, found[1:]))}


def test_with_every_wall_no_attack_gets_through_and_nothing_is_left(reports):
    report = reports[None]
    # Every wall was raised (the control groups where the machine has them: their tests skip otherwise).
    assert [m for m in report["missing"] if not m.startswith(("no limit on", "no CPU"))] == [], report
    assert report["reached"] == [], report
    assert report["groups_left"] == [] and not report["shm_left"]


@pytest.mark.parametrize("wall", WALLS)
def test_each_wall_removed_lets_its_attack_through(reports, wall):
    report = reports[wall]
    if wall in ("pids", "memory") and any(m.startswith("no limit on") for m in reports[None]["missing"]):
        pytest.skip("this machine has no control groups to limit a run's " + wall)
    assert wall in report["reached"], report


WATCHED = r'''
import os, signal, sys, time
sys.path.insert(0, SCRIPTS)
from grading import run
from grading.watch import Watch
from IPython.core.interactiveshell import InteractiveShell
without = sys.argv[1:]
shell = InteractiveShell.instance()
r, w = os.pipe()
os.set_blocking(r, False)
pid = os.fork()
if pid == 0:
    os.write(w, b"s")
    run.run_cell(shell, "import signal\nsignal.signal(signal.SIGPROF, signal.SIG_IGN)\nwhile True:\n    pass\n", 0.2)
    os._exit(0)
running = {pid: {"deadline": time.monotonic() + 60, "watch": r}}
watch = Watch(running, {"cell_cpu_seconds": 0.2, "without": without})     # stopped past 1.3 s of CPU
start = time.monotonic()
used = 0.0
# Until the cell is stopped, or has used a second of CPU past the watch's limit (however busy the machine).
while time.monotonic() - start < 100 and not running[pid].get("killed") and used < watch.cell_cpu + 1:
    watch.check()
    used = Watch.cpu(pid) or used
    time.sleep(0.1)
alive = not running[pid].get("killed")
os.kill(pid, 9)
os.waitpid(pid, 0)
print(f"alive after {used:.1f} s of CPU" if alive else f"stopped after {used:.1f} s of CPU")
'''


def test_a_cell_that_ignores_its_cpu_timer_is_stopped_from_outside(tmp_path):
    """The watch stops it; with the watch taken away, the cell is still looping a second of CPU past its limit."""
    helper = tmp_path / "watched.py"
    helper.write_text(WATCHED.replace("SCRIPTS", repr(str(ROOT / "scripts"))))
    runs = {name: subprocess.Popen([sys.executable, str(helper), *without], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
            for name, without in (("with", []), ("without", ["outside_timer"]))}
    out = {name: p.communicate(timeout=120) for name, p in runs.items()}
    assert out["with"][0].startswith("stopped after"), out["with"]
    assert out["without"][0].startswith("alive after"), out["without"]
