"""The learners' runs, contained: one chapter, every learner who returned it.

    python scripts/grade_run.py < job.json > runs.jsonl     (started by scripts/grade.py, never by hand)

This process runs the chapter's own code cells (the instructor's, as `make student` hands them out)
in an IPython shell, and where a learner's notebook first departs from them it forks: the child
carries on with that learner's cells, contained, and after each answer cell writes down the learner's
answer as plain data (scripts/grade_wire.py): the value bound to the stub's name, or, for a function,
what it returned for every input the chapter's check gave it. Nothing here decides a verdict: the
answers go to scripts/grade_check.py, a fresh process that no learner's code ever ran in.

The child, before it runs a learner's line (where the operating system allows it; each step that
fails is reported and the run goes on with the rest):
- enters new mount, network and process namespaces (a user namespace of its own first when not
  root, or root without CAP_SYS_ADMIN, as in a container): no network at all, no process of the
  grader's to see or signal, and every learner's process ends with the run;
- mounts every file system read-only, an empty one over the class's folder and over the grading's
  own folder (no other learner's notebook or cells, no gradebook) and a small writable one as its
  working folder and home;
- gives up every capability (root without capabilities cannot remount, trace or write through
  the read-only mounts) and sets limits: address space, CPU time, file size, open files.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import io
import json
import os
import re
import resource
import signal
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import grade_wire  # noqa: E402
import lib  # noqa: E402
from lib import chapters  # noqa: E402
from lib.exercises import writing  # noqa: E402
from lib.exercises.writing import TimeUp, describe_exception, is_empty_stub  # noqa: E402

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
CLONE_NEWUTS, CLONE_NEWIPC = 0x04000000, 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_DUMPABLE = 1, 38, 24, 4

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source, target, fstype, flags, data=None) -> None:
    enc = (lambda s: s.encode() if s is not None else None)
    _check(_libc.mount(enc(source), enc(str(target)), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)), "prctl")


def drop_capabilities() -> None:
    """No capability left: effective, permitted, inheritable and bounding sets emptied."""
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0 and ctypes.get_errno() == 22:
            break   # EINVAL: past the last capability the kernel knows
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)      # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.syscall(126 if os.uname().machine == "x86_64" else 91, header, data), "capset")
    prctl(PR_SET_NO_NEW_PRIVS, 1)


MOUNT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": 8, "noatime": 1024, "nodiratime": 2048,
               "relatime": 1 << 21, "strictatime": 1 << 24}


def mount_points() -> list[tuple[str, int]]:
    """Every mount point and the flags it has (a remount must keep them: in a user namespace the
    kernel refuses to clear a flag the mount was locked with)."""
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            flags = 0
            for option in fields[5].split(","):
                flags |= MOUNT_FLAGS.get(option, 0)
            points.append((fields[4].replace("\\040", " "), flags))
    return points


# ----------------------------------------------------------------------------- containment
SECCOMP_SET_MODE_FILTER, PR_SET_SECCOMP = 1, 22
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
# Per architecture: its audit number, and the numbers of socket() and io_uring_setup().
SYSCALLS = {"x86_64": (0xC000003E, 41, 425), "aarch64": (0xC00000B7, 198, 425)}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def forbid_unix_sockets() -> None:
    """No new Unix socket (socket(AF_UNIX, ...) fails with EPERM) and no io_uring, in this process and
    all it starts: a read-only mount does not stop a connection to a socket file outside the run (an
    abstract socket is already out of reach in the run's network namespace). A seccomp filter, which
    needs no privilege once no_new_privs is set."""
    arch = SYSCALLS.get(os.uname().machine)
    if arch is None:
        raise OSError(95, f"no seccomp filter written for {os.uname().machine}")
    audit, sys_socket, sys_io_uring = arch
    ld, jeq, ret = 0x20, 0x15, 0x06       # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
    deny = SECCOMP_RET_ERRNO | 1          # EPERM
    program = [
        (ld, 0, 0, 4), (jeq, 1, 0, audit), (ret, 0, 0, SECCOMP_RET_ALLOW),    # another ABI (x32, i386): let be
        (ld, 0, 0, 0), (0x35, 0, 1, 0x40000000), (ret, 0, 0, deny),           # x32's numbers: none allowed
        (jeq, 0, 1, sys_io_uring), (ret, 0, 0, deny),
        (jeq, 0, 3, sys_socket), (ld, 0, 0, 16), (jeq, 0, 1, 1), (ret, 0, 0, deny),   # args[0] == AF_UNIX
        (ret, 0, 0, SECCOMP_RET_ALLOW)]
    filters = (SockFilter * len(program))(*[SockFilter(*item) for item in program])
    prog = SockFprog(len(program), filters)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    _check(_libc.prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(2), ctypes.byref(prog), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)), "seccomp")


class Cgroups:
    """A run's own control groups: a memory limit that counts every process of the run together,
    and a limit on its number of processes (threads count). Made by the chapter's process, joined by
    the run before it runs a learner's line, emptied and removed when the run ends. Version 1
    (a hierarchy per controller) or version 2 (one hierarchy), under this process's own groups, so
    the run also stays within whatever limits the grader itself runs under."""

    def __init__(self, name: str, limits: dict):
        self.paths: list[Path] = []
        self.missing: list[str] = []
        without = set(limits.get("without", ()))
        own = {}
        try:
            for line in Path("/proc/self/cgroup").read_text().splitlines():
                _, controllers, path = line.split(":", 2)
                for controller in (controllers.split(",") if controllers else [""]):
                    own[controller] = path.lstrip("/")
        except (OSError, ValueError):
            pass
        memory = limits["memory_mb"] * 2 ** 20
        wanted = [("memory", "memory.limit_in_bytes", memory, "the memory of all its processes together"),
                  ("pids", "pids.max", limits["processes"], "its number of processes")]
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        for controller, knob, value, what in wanted:
            if controller in without:
                continue
            try:
                if v2.exists() and "" in own:     # one hierarchy: the controller must be on for our children
                    base = Path("/sys/fs/cgroup", own[""])
                    if controller not in (base / "cgroup.subtree_control").read_text().split():
                        raise OSError(95, f"the {controller} controller is not enabled below this process's group")
                    knob = {"memory": "memory.max"}.get(controller, knob)
                    folder = base / name
                    if folder not in self.paths:
                        folder.mkdir()
                        self.paths.append(folder)
                else:
                    if controller not in own:
                        raise OSError(2, f"no {controller} control group here")
                    folder = Path("/sys/fs/cgroup", controller, own[controller], name)
                    folder.mkdir()
                    self.paths.append(folder)
                (folder / knob).write_text(str(value))
                if controller == "memory":
                    for swap in ("memory.memsw.limit_in_bytes", "memory.swap.max"):
                        if (folder / swap).exists():
                            try:
                                (folder / swap).write_text(str(value) if "memsw" in swap else "0")
                            except OSError:
                                pass
            except OSError as e:
                self.missing.append(f"no limit on {what} ({e.strerror}; each process limited alone)"
                                    if controller == "memory" else f"no limit on {what} ({e.strerror})")

    @staticmethod
    def sweep() -> None:
        """Remove the groups a chapter's process left when it was killed before it could (the grader
        stopped by hand): every `grading-PID-...` group under this process's own whose PID is gone."""
        try:
            own = [line.split(":", 2) for line in Path("/proc/self/cgroup").read_text().splitlines()]
        except OSError:
            return
        bases = {Path("/sys/fs/cgroup", *([c] if c and c != "" else []), path.lstrip("/"))
                 for _, controllers, path in own for c in (controllers.split(",") if controllers else [""])}
        for base in bases:
            try:
                stale = [p for p in base.glob("grading-*") if p.is_dir() and p.name.split("-")[1].isdigit()
                         and not Path("/proc", p.name.split("-")[1]).exists()]
            except OSError:
                continue
            if stale:
                leftover = Cgroups.__new__(Cgroups)
                leftover.paths = stale
                leftover.remove()

    def join(self) -> None:
        """Put this process (and so all it starts) in the run's groups."""
        for folder in self.paths:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        """Kill whatever is left in the groups, then remove them."""
        for folder in self.paths:
            for _ in range(100):
                try:
                    pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.02)
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def enter_user_namespace() -> None:
    """A user namespace of this process's own, in which it is root (its user and group mapped to 0,
    nothing else mapped): what lets a user without privileges make the other namespaces."""
    uid, gid = os.geteuid(), os.getegid()
    unshare(CLONE_NEWUSER)
    # A process that is not dumpable (main() made the chapter's process so, and a fork inherits it)
    # has its /proc/self files owned by root: it could not write its own maps.
    prctl(PR_SET_DUMPABLE, 1)
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
        Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
    finally:
        prctl(PR_SET_DUMPABLE, 0)


def contain(scratch: Path, hide: list[str], limits: dict) -> list[str]:
    """Contain this (forked, single-threaded) process; returns what could not be done, in words.

    Called in the child; forks once more so that the learner's code runs as the first process of
    a new process namespace (when it ends, everything it started ends); the middle process waits
    and passes the exit status on, and dies with its parent."""
    missing = []
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass
    namespaced = False
    without = set(limits.get("without", ()))     # walls a test takes away, to see its attack get through
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID
    flags |= 0 if "ipc" in without else CLONE_NEWIPC     # System V shared memory, semaphores, queues: the run's own
    flags |= 0 if "uts" in without else CLONE_NEWUTS     # the host name: the run's own
    try:
        try:   # root with CAP_SYS_ADMIN needs no user namespace; root without it (a container) does
            if os.geteuid() != 0:
                raise PermissionError
            unshare(flags)
        except PermissionError:
            enter_user_namespace()
            unshare(flags)
        namespaced = True
    except OSError as e:
        missing.append(f"no namespaces ({e.strerror}): network, other processes and files not walled off")
    if namespaced:
        pid = os.fork()
        if pid:   # the middle process: wait, pass the status on
            _, status = os.waitpid(pid, 0)
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 1)
        try:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except OSError:
            pass
        try:
            mount(None, "/", None, MS_REC | MS_PRIVATE)
            writable = []
            for point, flags in reversed(mount_points()):
                try:
                    mount(point, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | flags)
                except OSError:
                    writable.append(point)
            # /proc, /sys and the like may refuse; a file system that holds the course or the class may not.
            held = [p for p in writable if p in ("/", "/home", "/work", "/root", "/tmp", "/srv", "/opt")]
            if held:
                missing.append(f"{', '.join(held)} left writable")
            for path in hide:
                mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=16k,mode=0555")
            scratch.mkdir(parents=True, exist_ok=True)   # its place, when a hidden folder holds it
            mount("tmpfs", str(scratch), "tmpfs", MS_NOSUID | MS_NODEV,
                  f"size={limits['scratch_mb']}m,mode=0777")
            try:
                mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)
            except OSError as e:   # the old /proc shows every process, and the environment of your own
                missing.append(f"no /proc of its own ({e.strerror}): your processes in sight")
            # The kernel's settings (/proc/sys: core_pattern runs a command as root at a core dump) and
            # its trigger files, read-only: root without capabilities may still write them.
            for path in ([] if "proc_sys" in without else ["/proc/sys", "/proc/sysrq-trigger"]):
                if not os.path.exists(path):
                    continue
                try:
                    mount(path, path, None, MS_BIND | MS_REC)
                    mount(path, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | 8)
                except OSError as e:
                    missing.append(f"{path} left writable ({e.strerror})")
        except OSError as e:
            missing.append(f"files not walled off ({e})")
    try:
        drop_capabilities()
    except OSError as e:
        missing.append(f"capabilities kept ({e.strerror})")
    if "unix_sockets" not in without:
        try:
            forbid_unix_sockets()
        except OSError as e:
            missing.append(f"Unix sockets outside the run reachable ({e.strerror})")
    vm = next((int(line.split()[1]) * 1024 for line in Path("/proc/self/status").read_text().splitlines()
               if line.startswith("VmSize:")), 0)
    for what, value in ((resource.RLIMIT_AS, vm + limits["memory_mb"] * 2 ** 20),
                        # a backstop: the watch stops the run at its notebook's CPU limit, with a clear note
                        (resource.RLIMIT_CPU, int(limits["notebook_seconds"]) + 5),
                        (resource.RLIMIT_FSIZE, limits["scratch_mb"] * 2 ** 20),
                        (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(what, (value, value + (5 if what == resource.RLIMIT_CPU else 0)))
        except (ValueError, OSError) as e:
            missing.append(f"limit {what} not set ({e})")
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update({"HOME": str(scratch), "TMPDIR": str(scratch), "PATH": "/usr/bin:/bin",
                       "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                       "MPLBACKEND": "Agg"})
    return missing


# ----------------------------------------------------------------------------- the learner's cells
class CellTimeUp(KeyboardInterrupt):
    """A cell used up its CPU time."""


def _prof_alarm(signum, frame):
    raise CellTimeUp()


def run_cell(shell, source: str, cpu_seconds: float) -> str | None:
    """Run one cell; None, or what went wrong in a few words."""
    signal.signal(signal.SIGPROF, _prof_alarm)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
    try:
        result = shell.run_cell(source, store_history=False, silent=False)
    except KeyboardInterrupt:
        return "ran too long (the time limit of a cell)"
    except Exception as e:    # raised by IPython itself, before the cell ran (a cell nested too deep to compile)
        return f"raised {type(e).__name__}"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    error = result.error_before_exec or result.error_in_exec
    if error is None:
        return None
    if isinstance(error, KeyboardInterrupt):
        return "ran too long (the time limit of a cell)"
    return f"raised {type(error).__name__}"


class Recorder:
    """Stands in for the learner's function while the chapter's check drives it in the run: every
    call's inputs and what came back (or what it raised). Only the record leaves the run."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def __repr__(self):
        return "a function"

    def __call__(self, *args, **kwargs):
        record = {"args": grade_wire.encode(args), "kwargs": grade_wire.encode(kwargs)}
        try:
            out = self.fn(*args, **kwargs)
        except TimeUp:
            record["timeup"] = True
            self.calls.append(record)
            raise
        except BaseException as e:
            record["raised"] = type(e).__name__[:60]
            record["detail"] = describe_exception(self.fn, e)[:300]
            self.calls.append(record)
            raise
        try:
            record["out"] = grade_wire.encode(out)
        except ValueError:
            record["out"] = {"__opaque__": "answer too large"}
        self.calls.append(record)
        return out


def capture(shell, label: str, spec: dict, cell_problem: str | None) -> dict:
    """The learner's answer to one exercise, as plain data."""
    record = {"label": label, "problem": cell_problem}
    name = next(a["name"] for a in spec["args"] if a["role"] == "answer")
    value = shell.user_ns.get(name, _MISSING)
    if value is _MISSING:
        record["absent"] = name
        return record
    if callable(value) and not isinstance(value, type):
        record["function"] = True
        record["empty"] = bool(is_empty_stub(value))
        if not record["empty"]:
            recorder = Recorder(value)
            try:
                check = getattr(chapters.checks(spec['module']), spec["check"])
                args = [recorder if a["role"] == "answer" else lib.load(a["model"]) for a in spec["args"]]
                check(*args)
            except BaseException:   # the learner's function may do anything; only the record counts
                pass
            record["calls"] = recorder.calls
        return record
    try:
        record["value"] = grade_wire.encode(value)
    except ValueError:
        record["value"] = {"__opaque__": "answer too large"}
    return record


_MISSING = object()


def learner_child(shell, learner: dict, job: dict) -> None:
    """In the forked child: read this learner's cells (and only theirs), contain, run them from where
    they depart from the chapter, and write the answers straight to the grader (a pipe of the
    grader's own: this process never holds another learner's answers, or their code)."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)     # the chapter's watch is not this process's
    cgroups = learner.pop("cgroups", None)
    try:
        if cgroups is not None:
            cgroups.join()
    except OSError:
        cgroups.missing.append("the run could not join its control groups")
    # The answers' pipe as descriptor 3 and the watch's as 4; nothing else of the chapter's stays open.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 1000) for fd in (learner["fd"], learner["watch_fd"])]
    os.dup2(high[0], 3)
    os.dup2(high[1], 4)
    with open(learner["cells_file"]) as f:
        cells = json.load(f)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(5, 65536)
    out = os.fdopen(3, "w", buffering=1)
    for other in job["learners"]:    # the other learners' names and places: nothing of theirs stays
        if other is not learner:
            other.clear()

    def send(record):
        out.write(json.dumps(record, allow_nan=False) + "\n")
        out.flush()

    def beat(mark: bytes):
        try:
            os.write(4, mark)
        except OSError:
            pass

    try:
        _run_learner(shell, cells, learner["start"], job, send, beat,
                     cgroups.missing if cgroups is not None else [])
    except BaseException as e:    # the grader's own failure: its type only (its text may quote the learner)
        try:
            send({"crash": True, "crash_type": type(e).__name__})
        except BaseException:
            pass
    try:
        out.close()
    except BaseException:
        pass
    os._exit(0)


def answer_name(spec: dict) -> str:
    return next(a["name"] for a in spec["args"] if a["role"] == "answer")


def bind_check(shell, spec: dict) -> None:
    """The chapter's checks as `check`, as the stub's first line binds them: a learner who replaced a
    whole answer cell (that line with it) still has them, so no check call fails for want of it."""
    module = chapters.checks(spec["module"])
    if shell.user_ns.get("check") is not module:
        shell.user_ns["check"] = module


def _run_learner(shell, cells, start, job, send, beat, walls_missing):
    # The working folder is an empty file system mounted over the whole work folder of the chapter,
    # so the other learners' files in it are out of sight.
    scratch = Path(job["workdir"])
    missing = contain(scratch, job["hide"], job["limits"])
    send({"contained": walls_missing + missing})
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()   # the learner's prints go nowhere
    # Nor do their tracebacks: formatting one (a line of 100,000 terms, coloured) can take longer than
    # the cell; the run needs only the error's type, which run_cell reads from the result.
    shell.showtraceback = shell.showsyntaxerror = shell.showindentationerror = lambda *args, **kwargs: None
    answers = job["answers"]
    names = {label: answer_name(spec) for label, spec in answers.items()}
    after: dict[str, object] = {}     # label -> the object its name held right after its answer cell
    pending: list[str] = []           # labels whose value at the end of their span is still to be taken

    def take_final(label):
        """The answer's value where its span ends (the notebook's end, or the next answer cell that
        binds the same name): as the learner's kernel holds it once the cells below the stub ran."""
        value = shell.user_ns.get(names[label], _MISSING)
        if value is not _MISSING and value is not after[label]:
            send({**capture(shell, label, answers[label], None), "taken": "final"})

    for cell in cells[start:]:
        label = cell.get("label")
        if label in answers:
            for other in [o for o in pending if names[o] == names[label]]:
                take_final(other)
                pending.remove(other)
            bind_check(shell, answers[label])
        beat(b"s")
        problem = run_cell(shell, cell["source"], job["limits"]["cell_cpu_seconds"])
        if isinstance(sys.stdout, io.StringIO):
            sys.stdout.seek(0), sys.stdout.truncate()
        if label in answers:
            send({**capture(shell, label, answers[label], problem), "taken": "cell"})
            after[label] = shell.user_ns.get(names[label], _MISSING)
            pending.append(label)
        beat(b"e")
    for label in pending:
        beat(b"s")
        take_final(label)
        beat(b"e")
    send({"done": True})


# ----------------------------------------------------------------------------- the chapter's run
GLUED_CLAIM = re.compile(r"""\bglue_claim\(\s*["']([\w.-]+)["']\s*\)""")


def measure_claims_once(cells: list[str]) -> list[str]:
    """Measure, in the chapter's process and before any learner's run is forked, every claim the
    chapter's cells glue with the page's seeds (`glue_claim("id")`): each fork inherits the numbers,
    so a claim a page prints below its first exercise is measured once per chapter, not once per
    learner (the ablation chapter's four claims on all-MiniLM took 9 s of CPU in every run). The
    claims are the instructor's code, measured on the shipped models and nothing of a learner's; a
    run's glued numbers are for the page and never reach a verdict. Returns the ids measured; a claim
    that fails to measure here is left to each run, as before."""
    ids = list(dict.fromkeys(i for source in cells for i in GLUED_CLAIM.findall(source)))
    if not ids:
        return []
    from lib.claims import registry, runs  # deferred: the registry walks every chapter's claims

    every_run = runs.over_runs
    memo: dict = {}

    def over_runs_once(id, seeds=registry.PAGE_SEEDS):
        key = (id, tuple(seeds))
        if key not in memo:
            memo[key] = every_run(id, seeds)
        return memo[key]

    runs.over_runs = over_runs_once
    measured = []
    for id in ids:
        try:
            runs.over_runs(id)
            measured.append(id)
        except Exception:   # noqa: BLE001 (the chapter's own cell meets it again in each run, and says so)
            pass
    return measured


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
    (`notebook_wall_seconds`, by default 4 times the CPU limit: grade.py) only stops a run that waits
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


def main() -> int:
    job = json.load(sys.stdin)
    stdout = sys.stdout
    os.chdir(job["workdir"])
    os.environ["HOME"] = job["workdir"]
    try:
        prctl(PR_SET_DUMPABLE, 0)   # no process of the same user may trace this one
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)   # and it ends with the grader
    except OSError:
        pass
    import torch
    torch.set_num_threads(1)
    from IPython.core.interactiveshell import InteractiveShell

    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    # Where this process's CPU goes (start-up: Python, torch, the library, IPython; the claims measured
    # once; the chapter's own cells), and each learner's run's: the grader sums them (`grade.py` prints it).
    timing = {"start": cpu_seconds(), "runs": []}
    learners = sorted(job["learners"], key=lambda l: l["start"])
    running: dict[int, dict] = {}
    chapter_problem = None

    def emit(learner, problem, stopped=None):
        stdout.write(json.dumps({"learner": learner["name"], "problem": problem, "stopped": stopped}) + "\n")
        stdout.flush()

    limits = job["limits"]
    # A check drives a function the learner wrote under a clock of its own (5 s at least, more when the
    # library's own answer was slow): a busy machine must not stop an honest function there. In a run,
    # a cell's CPU limit is the floor (the watch still stops a function that loops, at the cell's limit).
    writing.TIME_LIMIT = max(writing.TIME_LIMIT, float(limits["cell_cpu_seconds"]))
    writing.LONGEST = max(writing.LONGEST, writing.TIME_LIMIT)
    watch = Watch(running, limits)

    def reap() -> None:
        """One pass: stop a run past its time, and report every run that ended (its control groups
        emptied and removed: nothing of it stays)."""
        watch.check()
        for pid, entry in list(running.items()):
            done, _, usage = os.wait4(pid, os.WNOHANG)
            if done:
                timing["runs"].append(round(usage.ru_utime + usage.ru_stime, 2))
                problem = watch.stopped(entry, limits) or chapter_problem
                entry["cgroups"].remove()
                os.close(entry["watch"])
                emit(entry["learner"], problem, entry.get("killed"))
                del running[pid]

    def start(learner):
        while len(running) >= job["jobs"]:
            reap()
            time.sleep(0.02)
        sys.stdout.flush()
        learner["cgroups"] = Cgroups(f"grading-{os.getpid()}-{learner['start']}-{len(running)}-{time.monotonic_ns()}", limits)
        watch_read, learner["watch_fd"] = os.pipe()
        os.set_blocking(watch_read, False)
        pid = os.fork()
        if pid == 0:
            try:
                learner_child(shell, learner, job)
            finally:
                os._exit(1)
        os.close(learner["fd"])     # the child holds the only writing end: the grader sees it end
        os.close(learner["watch_fd"])
        running[pid] = {"learner": learner, "deadline": time.monotonic() + limits["notebook_wall_seconds"],
                        "watch": watch_read, "cgroups": learner.pop("cgroups")}

    Cgroups.sweep()
    if learners:   # the cells no chapter's cell runs before the first learner's run is forked
        measure_claims_once(job["cells"][learners[0]["start"]:])
    timing["claims"] = cpu_seconds() - timing["start"]
    signal.signal(signal.SIGALRM, watch.check)
    signal.setitimer(signal.ITIMER_REAL, 0.5, 0.5)
    cells = job["cells"]
    sys.stdout = io.StringIO()
    index = 0
    for i, source in enumerate(cells + [None]):
        while index < len(learners) and learners[index]["start"] <= i:
            start(learners[index])
            index += 1
        if source is None or index >= len(learners):
            break
        if chapter_problem is None:
            problem = run_cell(shell, source, job["limits"]["chapter_cell_cpu_seconds"])
            sys.stdout.seek(0), sys.stdout.truncate()
            if problem:
                chapter_problem = f"the chapter's own cell {i + 1} {problem}"
    while running:
        reap()
        time.sleep(0.02)
    signal.setitimer(signal.ITIMER_REAL, 0)
    sys.stdout = stdout
    timing["cells"] = cpu_seconds() - timing["start"] - timing["claims"]
    stdout.write(json.dumps({"timing": timing}) + "\n")
    return 0


def cpu_seconds() -> float:
    """CPU seconds this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
