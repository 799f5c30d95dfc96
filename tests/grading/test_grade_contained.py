"""The grader run by a user who is not root: every learner's run in a user namespace of its own.

The session's class (tests/grading/conftest.py) is graded as whoever runs the tests (root in CI and
in a container, where the run needs no user namespace). This file grades a small class of the same
chapter as a user without privileges, for real: the grader drops to `nobody` when the tests run as root (in a
mount namespace of its own where the interpreter is reachable, if it lives in a folder only root
can enter, such as /root/.pyenv), and runs as it is otherwise. It is skipped only where such a user
cannot make a user namespace (checked first, in a few milliseconds).

Three learners: one honest; one with right answers who, before them, tries every way out of the
run (a write to the gradebook, to another learner's folder and to a file of the grader's own
outside the class, a connection, another learner's code in memory, the grader's environment through
/proc, the grader's working folders, memory beyond the limit, no CPU limit) and keeps the answers only if every one
failed; and one who forges (patches the checks, displays a verdict of their own) on wrong answers.
"""
import csv
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from .test_grade import (DISPLAYED_VERDICT, ESCAPES, LABELS, NAME, ROOT, answer_cells, insert_above, insert_checks_patch,
                        solutions, student_notebook)

NOBODY = pwd.getpwnam("nobody").pw_uid if "nobody" in {p.pw_name for p in pwd.getpwall()} else 65534

# Run as `python -c PROBE [uid]`: can this user (or `uid`, when root) make a user namespace and map
# itself in it, as scripts/grading/walls.py does? Exit 0 if so, else print why.
PROBE = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if len(sys.argv) > 1:
    uid = int(sys.argv[1])
    os.setgroups([]); os.setgid(uid); os.setuid(uid)
uid, gid = os.geteuid(), os.getegid()
if libc.unshare(0x10000000) != 0:
    sys.exit(f"unshare(CLONE_NEWUSER) as uid {uid}: {os.strerror(ctypes.get_errno())}")
libc.prctl(4, 1, 0, 0, 0)        # PR_SET_DUMPABLE, as the grader's run: setuid left this process not dumpable
try:
    open("/proc/self/setgroups", "w").write("deny")
    open("/proc/self/uid_map", "w").write(f"0 {uid} 1")
except OSError as e:
    sys.exit(f"a user namespace was made, but its map could not be written as uid {uid}: {e.strerror}")
"""

# Run as root: `python -c AS_USER UID COMMAND...`: COMMAND as UID and its group, with no other group,
# in a mount namespace of its own where every folder on the way to the interpreter and the course
# can be entered (a folder only root enters gets an empty 0755 file system over it, with the one
# entry that leads on bound back in).
AS_USER = r"""
import ctypes, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
def check(result, what):
    if result != 0:
        raise OSError(ctypes.get_errno(), what)
def mount(source, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else str(s).encode()
    check(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")
uid, command, reach = int(sys.argv[1]), sys.argv[2:], os.environ.pop("REACH").split(os.pathsep)
check(libc.unshare(0x00020000), "unshare")
mount(None, "/", None, 16384 | (1 << 18))                 # MS_REC | MS_PRIVATE
closed = {}                                                 # folder only root enters -> the entries to keep
for path in reach:
    parts = os.path.realpath(path).split("/")[1:]
    for i in range(len(parts) - 1):
        folder = "/" + "/".join(parts[:i + 1])
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            closed.setdefault(folder, set()).add(parts[i + 1])
for folder in sorted(closed, key=len):
    kept = {name: os.open(os.path.join(folder, name), os.O_PATH) for name in closed[folder]}
    mount("tmpfs", folder, "tmpfs", 2 | 4, "mode=0755,size=64k")          # MS_NOSUID | MS_NODEV
    for name, fd in kept.items():
        os.mkdir(os.path.join(folder, name))
        mount(f"/proc/self/fd/{fd}", os.path.join(folder, name), None, 4096 | 16384)   # MS_BIND | MS_REC
        os.close(fd)
os.setgroups([]); os.setgid(uid); os.setuid(uid)
os.execvp(command[0], command)
"""


def as_unprivileged() -> list[str]:
    """The command prefix that runs a command as a user without privileges (nothing when the tests
    already run as one); skips the module when that user cannot make a user namespace."""
    root = os.geteuid() == 0
    probe = subprocess.run([sys.executable, "-c", PROBE, *([str(NOBODY)] if root else [])],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("this machine does not let a user without privileges make a user namespace ("
                    + (probe.stderr.strip().splitlines() or ["no reason given"])[-1] + "), so the grader's "
                    "runs there would not be contained: nothing to test")
    return [sys.executable, "-c", AS_USER, str(NOBODY)] if root else []


EXTRA = r'''
import mmap, resource
uid_map = open("/proc/self/uid_map").read().split()
if uid_map[:2] == ["0", "0"]:
    escaped.append("no user namespace of its own")
top = {}                                   # each mount point's uppermost mount: all read-only but its own
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    top[fields[4]] = fields[5].split(",")
writable = [p for p, options in top.items() if "rw" in options
            and p not in (os.getcwd(), str(class_dir), os.path.dirname(os.getcwd()), "/proc")]
if writable:
    escaped.append(f"writable: {writable}")
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if b"s3cret" in open(f"/proc/{pid}/environ", "rb").read():
            escaped.append("the grader's environment")
    except OSError:
        pass
if os.listdir(os.path.dirname(os.getcwd())) != [os.path.basename(os.getcwd())] \
        or os.path.dirname(os.getcwd()) not in top:   # an empty file system over them, not a listing of one
    escaped.append("the grader's folders")  # every chapter's work folder, each learner's cells in it
if resource.getrlimit(resource.RLIMIT_CPU)[0] == resource.RLIM_INFINITY:
    escaped.append("no CPU limit")
try:                                       # address space beyond --memory (mapped, never touched)
    mmap.mmap(-1, 3 * 2 ** 30)
    escaped.append("memory")
except (OSError, MemoryError, OverflowError):
    pass
'''

@pytest.fixture(scope="module")
def graded_unprivileged():
    prefix = as_unprivileged()
    student = student_notebook()
    worked = solutions()
    base = Path(tempfile.mkdtemp(prefix="grade-unprivileged-"))
    class_dir, outside = base / "class", base / "outside"
    try:
        class_dir.mkdir()
        outside.mkdir()
        own_file = outside / "course-file.py"          # a file of the grader's own, outside the class
        own_file.write_text("# the grader's\n")

        def hand_in(learner, change):
            nb = nbformat.reads(nbformat.writes(student), 4)
            change(nb)
            (class_dir / learner).mkdir()
            nbformat.write(nb, class_dir / learner / NAME)

        def right(nb):
            for label, cell in answer_cells(nb).items():
                cell.source = worked[label] + "\n# ada-own-work"

        def tries_to_escape(nb):
            for label, cell in answer_cells(nb).items():
                cell.source = worked[label] + ("\nif escaped or not os.path.exists('scratch.txt'):\n"
                                               "    raise SystemExit(f'escaped: {escaped}')\n")
            insert_above(nb, ESCAPES.format(class_dir=str(class_dir), check_file=str(own_file)) + EXTRA)

        def forges(nb):
            for cell in answer_cells(nb).values():
                cell.source = cell.source.replace("= ...", "= -1").replace("    ...", "    return -1") + (
                    "\n" + DISPLAYED_VERDICT)
            insert_checks_patch(nb)

        hand_in("ada", right)
        hand_in("=lee", tries_to_escape)
        hand_in("jon", forges)
        ada_before = (class_dir / "ada" / NAME).read_bytes()
        if prefix:
            shutil.chown(base, NOBODY, NOBODY)
            for path in base.rglob("*"):
                shutil.chown(path, NOBODY, NOBODY)
            base.chmod(0o755)
        reach = os.pathsep.join([sys.executable, sys.base_prefix, sys.prefix, str(ROOT),
                                 *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
        env = {**os.environ, "GRADER_TEST_SECRET": "s3cret", "REACH": reach, "HOME": str(base)}
        result = subprocess.run([*prefix, sys.executable, str(ROOT / "scripts" / "grade.py"), str(class_dir),
                                 "--cell-timeout", "20", "--notebook-timeout", "240"],
                                capture_output=True, text=True, timeout=900, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        assert own_file.read_text() == "# the grader's\n"
        assert (class_dir / "ada" / NAME).read_bytes() == ada_before
        assert sorted(p.name for p in (class_dir / "ada").iterdir()) == [NAME]
        with (class_dir / "gradebook.csv").open() as f:
            text = f.read()
            f.seek(0)
            rows = {row["learner"]: row for row in csv.DictReader(f)}
        yield rows, text
    finally:
        shutil.rmtree(base, ignore_errors=True)


# What the notes say of a run that has no control group of its own (grading/walls.py, grading/run.py).
WITHOUT_GROUPS = (r"(search-by-hand.ipynb: )?ran with no limit on the memory of all its processes together \([^)]*\); "
                  r"its number of processes limited with every other process of your user's \([^)]*\), no control "
                  r"group of its own; no CPU share of its own \([^)]*\); no CPU count of all its processes together "
                  r"\([^)]*\)")


def test_a_run_as_a_user_without_privileges_is_contained(graded_unprivileged):
    """Every way out failed (the answers of the learner who tried count only if so), an honest
    notebook is counted in full, and a forged verdict earns nothing."""
    rows, text = graded_unprivileged
    every = dict.fromkeys(LABELS, "correct")
    for name in ("ada", "'=lee"):       # a learner's name a spreadsheet would run is written as text
        assert {label: rows[name][label] for label in LABELS} == every, rows[name]["notes"]
        # Every step of containment worked but the control groups, which a user without privileges cannot
        # make (the notes say so: the memory limit is per process, the process limit the user's own, no
        # CPU share of its own, the CPU counted from /proc).
        notes = rows[name]["notes"]
        assert "ran with no limit on the memory of all its processes together" in notes, notes
        assert "ran with" not in re.sub(WITHOUT_GROUPS, "", notes), notes
    assert re.sub(WITHOUT_GROUPS, "", rows["ada"]["notes"]).strip("; ") == "", rows["ada"]["notes"]
    assert {label: rows["jon"][label] for label in LABELS} == dict.fromkeys(LABELS, "not yet"), rows["jon"]["notes"]
    assert rows["jon"]["correct"] == "0"
    assert "patches lib.exercises" in rows["jon"]["notes"] and "writes verdict HTML" in rows["jon"]["notes"]
    assert "s3cret" not in text and "learner,forged" not in text


# Run as root: `python HELPER drop SCRATCH HIDDEN OUTSIDE` gives up CAP_SYS_ADMIN for good (as root in
# a container does not have it) and runs itself again with `run`, which contains a forked process as
# the grader's run does and reports what that process can reach, as JSON.
HELPER = r'''
import ctypes, json, os, socket, sys
from pathlib import Path
libc = ctypes.CDLL(None, use_errno=True)
mode, scratch, hidden, outside = sys.argv[1:5]
if mode == "drop":
    if libc.prctl(24, 21, 0, 0, 0) != 0:                     # PR_CAPBSET_DROP, CAP_SYS_ADMIN
        sys.exit("could not drop CAP_SYS_ADMIN")
    os.execv(sys.executable, [sys.executable, *sys.argv[:1], "run", *sys.argv[2:]])
sys.path.insert(0, SCRIPTS)
from grading import walls
pid = os.fork()
if pid == 0:                                                 # can this process make a user namespace at all?
    os._exit(0 if libc.unshare(0x10000000) == 0 else 1)
if os.waitpid(pid, 0)[1] != 0:
    print(json.dumps({"skip": "this root without CAP_SYS_ADMIN cannot make a user namespace"}))
    sys.exit(0)
effective = next(l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff"))
pid = os.fork()
if pid == 0:
    report = {"missing": walls.contain(Path(scratch), [hidden], {"memory_mb": 64, "notebook_seconds": 30,
                                                                    "scratch_mb": 8}),
              "sys_admin_before": bool(int(effective, 16) & (1 << 21)),
              "uid_map": open("/proc/self/uid_map").read().split(), "reached": []}
    for name, attempt in (("outside", lambda: Path(outside, "x").write_text("x")),
                          ("hidden", lambda: Path(hidden, "gradebook.csv").read_text()),
                          ("network", lambda: socket.create_connection(("1.1.1.1", 53), timeout=2))):
        try:
            attempt()
            report["reached"].append(name)
        except Exception:
            pass
    Path("scratch.txt").write_text("the working folder is writable")
    print(json.dumps(report), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
'''


def test_root_without_cap_sys_admin_is_contained_through_a_user_namespace(tmp_path):
    """Root in a container lacks CAP_SYS_ADMIN: its runs go through a user namespace as a user's do."""
    if os.geteuid() != 0:
        pytest.skip("playing a container's root (root without CAP_SYS_ADMIN) needs root")
    scratch, hidden, outside = tmp_path / "scratch", tmp_path / "class", tmp_path / "outside"
    for folder in (scratch, hidden, outside):
        folder.mkdir()
    (hidden / "gradebook.csv").write_text("learner\n")
    helper = tmp_path / "helper.py"
    helper.write_text(HELPER.replace("SCRIPTS", repr(str(ROOT / "scripts"))))
    result = subprocess.run([sys.executable, str(helper), "drop", str(scratch), str(hidden), str(outside)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if "skip" in report:
        pytest.skip(report["skip"])
    assert report["sys_admin_before"] is False
    assert report["missing"] == [] and report["reached"] == [], report
    assert report["uid_map"] == ["0", "0", "1"]               # root only, in a user namespace of its own
    assert not list(outside.iterdir()) and not list(scratch.iterdir())   # the scratch was a file system of its own


# `python -c NO_NAMESPACES COMMAND...`: COMMAND as root of a user namespace of its own (your user
# mapped to 0) where no further user namespace may be made and CAP_SYS_ADMIN is given up: a machine
# where the grader's runs can make no namespace at all.
NO_NAMESPACES = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.geteuid(), os.getegid()
if libc.unshare(0x10000000) != 0:
    sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
open("/proc/self/setgroups", "w").write("deny")
open("/proc/self/uid_map", "w").write(f"0 {uid} 1")
open("/proc/self/gid_map", "w").write(f"0 {gid} 1")
open("/proc/sys/user/max_user_namespaces", "w").write("0")
if libc.prctl(24, 21, 0, 0, 0) != 0:                       # PR_CAPBSET_DROP, CAP_SYS_ADMIN
    sys.exit("prctl: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])
"""


def test_where_no_namespace_can_be_made_the_grader_says_so(tmp_path):
    """The honest answers still count, and both the notes and the terminal say the runs were not contained."""
    as_unprivileged()     # the same condition: a user namespace (the one that forbids the others) can be made
    class_dir = tmp_path / "class"
    (class_dir / "ada").mkdir(parents=True)
    nb = student_notebook()
    worked = solutions()
    for label, cell in answer_cells(nb).items():
        cell.source = worked[label]
    nbformat.write(nb, class_dir / "ada" / NAME)
    result = subprocess.run([sys.executable, "-c", NO_NAMESPACES, sys.executable, str(ROOT / "scripts" / "grade.py"),
                             str(class_dir), "--notebook-timeout", "240"], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    with (class_dir / "gradebook.csv").open() as f:
        ada = next(csv.DictReader(f))
    assert {label: ada[label] for label in LABELS} == dict.fromkeys(LABELS, "correct"), ada["notes"]
    assert "ran with no namespaces" in ada["notes"], ada["notes"]
    assert "warning: learners' runs were not fully contained here" in result.stderr, result.stderr[-2000:]
