"""The walls of a learner's run: what `contain` does to a forked process before it runs a learner's line.

Where the operating system allows it (each step that fails is reported in words and the run goes on
with the rest):
- new mount, network, process, IPC and UTS namespaces (a user namespace of its own first when not
  root, or root without CAP_SYS_ADMIN, as in a container): no network at all, no process of the
  grader's to see or signal, and every learner's process ends with the run;
- every file system read-only, an empty one over the class's folder and over the grading's own
  folder (no other learner's notebook or cells, no gradebook) and a small writable one as its
  working folder and home; a /proc of its own with /proc/sys read-only;
- no capability left, no new Unix socket and no io_uring (a seccomp filter), and limits on each
  process: address space, CPU time, file size, core dumps;
- control groups of its own (`Cgroups`), made by the chapter's process and joined by the run.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import signal
import time
from pathlib import Path

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
    """A run's own control groups, made by the chapter's process, joined by the run before it runs a
    learner's line, emptied and removed when the run ends:
    - memory: a limit that counts every process of the run together (swap included where it can);
    - pids: at most `processes` processes and threads, so a fork bomb stops at the limit;
    - cpu: a share of the processor equal to every other run's (cpu.shares, cpu.weight), however many
      processes the run starts: a run that spins 100 processes gets what a run of one process gets;
    - CPU accounting for the whole run (cpuacct.usage, cpu.stat): what the watch counts against the
      notebook's CPU limit, every process of the run included, those that ended too (`usage`).
    Version 1 (a hierarchy per controller, or several mounted together) or version 2 (one hierarchy),
    under this process's own groups, so the run also stays within whatever limits the grader itself
    runs under. A controller the machine does not offer is listed in `missing`, in words."""

    # controller -> (version 1 file, version 2 file, value from the limits, what it holds, in words)
    KNOBS = {
        "memory": ("memory.limit_in_bytes", "memory.max", lambda limits: limits["memory_mb"] * 2 ** 20,
                   "no limit on the memory of all its processes together", "each process limited alone"),
        "pids": ("pids.max", "pids.max", lambda limits: limits["processes"],
                 "no limit on its number of processes", None),
        "cpu": ("cpu.shares", "cpu.weight", lambda limits: None,
                "no CPU share of its own", "its processes compete with every other run's one by one"),
        "cpuacct": (None, None, lambda limits: None,
                    "no CPU count of all its processes together",
                    "the CPU of its processes counted from /proc, those still running and those waited for"),
    }

    def __init__(self, name: str, limits: dict):
        self.paths: list[Path] = []
        self.missing: list[str] = []
        self.usage_file: Path | None = None
        without = set(limits.get("without", ()))
        own = self.own()
        v2 = Path("/sys/fs/cgroup/cgroup.controllers").exists() and "" in own
        for controller, (knob1, knob2, value, missing, fallback) in self.KNOBS.items():
            if controller in without:
                continue
            try:
                if v2:     # one hierarchy: the controller must be on for this process's children
                    base = Path("/sys/fs/cgroup", own[""])
                    folder = base / name
                    if controller == "cpuacct":     # cpu.stat counts every group's CPU, no controller needed
                        self._make(folder)
                        self.usage_file = folder / "cpu.stat"
                        continue
                    if controller not in (base / "cgroup.subtree_control").read_text().split():
                        raise OSError(95, f"the {controller} controller is not enabled below this process's group")
                    self._make(folder)
                    knob = knob2
                else:
                    if controller not in own:
                        raise OSError(2, f"no {controller} control group here")
                    folder = Path("/sys/fs/cgroup", controller, own[controller], name)
                    self._make(folder)
                    knob = knob1
                    if controller == "cpuacct":
                        self.usage_file = folder / "cpuacct.usage"
                        continue
                if controller == "cpu":     # the default share, said once more: equal for every run
                    (folder / knob).write_text("100" if v2 else "1024")
                    continue
                (folder / knob).write_text(str(value(limits)))
                if controller == "memory":
                    for swap in ("memory.memsw.limit_in_bytes", "memory.swap.max"):
                        if (folder / swap).exists():
                            try:
                                (folder / swap).write_text(str(value(limits)) if "memsw" in swap else "0")
                            except OSError:
                                pass
            except OSError as e:
                self.missing.append(f"{missing} ({e.strerror}" + (f"; {fallback})" if fallback else ")"))

    @staticmethod
    def own() -> dict[str, str]:
        """This process's group in each hierarchy: controller -> path ("" for version 2's one)."""
        own = {}
        try:
            for line in Path("/proc/self/cgroup").read_text().splitlines():
                _, controllers, path = line.split(":", 2)
                for controller in (controllers.split(",") if controllers else [""]):
                    own[controller] = path.lstrip("/")
        except (OSError, ValueError):
            pass
        return own

    def _make(self, folder: Path) -> None:
        """The group's folder, made once (controllers mounted together share one)."""
        resolved = folder.resolve()
        if any(p.resolve() == resolved for p in self.paths):
            return
        folder.mkdir()
        self.paths.append(folder)

    def events(self) -> dict[str, int]:
        """What the kernel did to the run at its limits: processes it ended for want of memory
        ("oom_kill"), and process starts it refused at the process limit ("pids_max")."""
        found = {"oom_kill": 0, "pids_max": 0}
        for folder in self.paths:
            for name, key, out in (("memory.oom_control", "oom_kill", "oom_kill"), ("memory.events", "oom_kill", "oom_kill"),
                                   ("pids.events", "max", "pids_max")):
                try:
                    text = (folder / name).read_text()
                except OSError:
                    continue
                for line in text.splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
                        found[out] = max(found[out], int(parts[1]))
        return found

    def usage(self) -> float | None:
        """CPU seconds every process of the run has used so far, those that ended included; None
        where the machine keeps no such count."""
        if self.usage_file is None:
            return None
        try:
            text = self.usage_file.read_text()
        except OSError:
            return None
        if self.usage_file.name == "cpuacct.usage":
            return int(text) / 1e9
        fields = dict(line.split() for line in text.splitlines() if line.count(" ") == 1)
        return int(fields["usage_usec"]) / 1e6 if "usage_usec" in fields else None

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
