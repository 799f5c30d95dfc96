"""Python processes started from a warm interpreter: the build's kernels and measuring processes without
paying for torch's import each time.

Every chapter runs in a kernel of its own, and a kernel spends about 2.5 s of processor time importing
what every chapter imports (torch, numpy, matplotlib, scikit-learn, IPython, the notebook format) before
its first line of work: a minute of the build's two cores, over 27 chapters. Here one process imports
those packages once (`serve`, nothing else: no model loaded, no library code run), and each kernel is a
fork of it (`run`): the same interpreter state a fresh process reaches by importing the same packages,
with the memory shared until written.

    python scripts/warm_python.py serve SOCKET             the warm process, until its socket is removed
    python scripts/warm_python.py run SOCKET -m MODULE ARGS the module run as `python -m MODULE ARGS` would,
                                                            in a fork of the warm process
    python scripts/warm_python.py run SOCKET -c CODE ARGS   likewise `python -c CODE ARGS`

`run` is what a kernel specification starts (`kernel_spec`): it hands its working directory, environment,
arguments and standard streams to the fork, passes on the signals it gets (an interrupt, a termination),
and ends with the fork's exit status; a fork whose `run` process is gone (killed) ends too.

What a fork does not share with a fresh process: the packages above are already imported (with the
environment the warm process had: one arithmetic thread, the kernel's matplotlib backend), and Python's
hash seed. The random generators a fresh process seeds from the system are seeded again from it.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import random
import runpy
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
import types

# What every chapter's kernel imports anyway (and the processes that measure a run's claims), imported once:
# the packages that cost seconds. Not ipykernel (its traits read the kernel's environment when imported,
# and it costs 0.2 s), nor ipywidgets and anywidget (they register with the kernel they are imported in).
WARM = ("numpy", "scipy.linalg", "torch", "torch.nn", "matplotlib", "matplotlib.pyplot", "sklearn.decomposition",
        "sklearn.manifold", "sklearn.linear_model", "safetensors.torch", "myst_nb.ext.glue", "nbformat", "regex")
# The backend a kernel gives matplotlib before any chapter imports it (ipykernel's kernelapp sets it so).
KERNEL_BACKEND = "module://matplotlib_inline.backend_inline"
STATUS = struct.Struct("!i")


def serve(path: str) -> None:
    """Import WARM, then fork a process for each request on the socket at `path`, until it is removed."""
    os.environ.setdefault("MPLBACKEND", KERNEL_BACKEND)

    for name in WARM:
        try:
            importlib.import_module(name)
        except ImportError:
            pass                                    # a fork imports it itself, as a fresh process would
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    server.settimeout(1.0)
    print("ready", flush=True)
    while os.path.exists(path):
        _reap()
        try:
            conn, _ = server.accept()
        except socket.timeout:
            continue
        if os.fork() == 0:
            server.close()
            _child(conn)                            # never returns
        conn.close()
    _reap(block=True)


def _reap(block: bool = False) -> None:
    """Wait for the forks that have ended (so that their processor time counts as this process's children's,
    as a fresh process's counts as its parent's)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _child(conn: socket.socket) -> None:
    """In the fork: take the request, become the process it asks for, report its exit status."""
    status = 1
    try:
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        request = json.loads(msg.decode())
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _seed_again()
        conn.sendall(STATUS.pack(os.getpid()))
        # The `run` process gone (killed by whoever started it): this process ends with it.
        threading.Thread(target=_end_with, args=(conn,), daemon=True).start()
        status = _run(request["argv"])
    except BaseException:  # noqa: BLE001 (any failure is this process's exit status, said on its stderr)
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.sendall(STATUS.pack(status))
        except BaseException:  # noqa: BLE001
            pass
        os._exit(status)


def _seed_again() -> None:
    random.seed()
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed()


def _end_with(conn: socket.socket) -> None:
    try:
        conn.recv(1)
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGKILL)


def _run(argv: list[str]) -> int:
    """`python -m MODULE ARGS` or `python -c CODE ARGS` in this process: its exit status."""

    try:
        # sys.path[0] as the interpreter sets it: the working directory for -m, "" for -c (here it was
        # this script's folder).
        if argv[0] == "-m":
            sys.path[0] = os.getcwd()
            sys.argv = [argv[1]] + argv[2:]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif argv[0] == "-c":
            sys.path[0] = ""
            sys.argv = ["-c"] + argv[2:]
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(argv[1], "<string>", "exec"), main.__dict__)
        else:
            raise SystemExit(f"warm_python run: -m MODULE or -c CODE, got {argv[:1]}")
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    return 0


def run(path: str, argv: list[str]) -> int:
    """Ask the warm process at `path` for a fork that runs `argv`; pass on signals; its exit status."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    pid = STATUS.unpack(_exactly(conn, STATUS.size))[0]
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    got = _exactly(conn, STATUS.size)
    return STATUS.unpack(got)[0] if got else 1


def _exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        try:
            more = conn.recv(n - len(data))
        except InterruptedError:
            continue
        if not more:
            return b""
        data += more
    return data


def kernel_spec(folder: str, path: str, name: str) -> str:
    """A kernel specification under `folder` (add it to $JUPYTER_PATH) whose kernels are forks of the warm
    process at `path`; returns its name."""
    spec = os.path.join(folder, "kernels", name)
    os.makedirs(spec, exist_ok=True)
    argv = [sys.executable, os.path.abspath(__file__), "run", path, "-m", "ipykernel_launcher", "-f",
            "{connection_file}"]
    with open(os.path.join(spec, "kernel.json"), "w") as f:
        json.dump({"argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python",
                   "interrupt_mode": "signal"}, f)
    return name


class Warm:
    """A warm process started for the time of a `with` block (`started`)."""

    NAME = "course-warm"

    def __init__(self, folder: str, path: str):
        self.folder, self.path = folder, path
        self.kernel_name = kernel_spec(folder, path, self.NAME)

    def python(self, *args: str) -> list[str]:
        """The command that runs `python ARGS` (-m MODULE or -c CODE, then the arguments) as a fork."""
        return [sys.executable, os.path.abspath(__file__), "run", self.path, *args]


@contextlib.contextmanager
def started(env: dict[str, str], wait: float = 120.0):
    """The warm process, started with `env` (the environment its forks' packages are imported under: give the
    kernels' own) and ready: yields a `Warm`, its kernel specification's folder added to $JUPYTER_PATH for the
    block; or None if it did not start (then use fresh processes)."""
    folder = tempfile.mkdtemp(prefix="warm-python-")
    path = os.path.join(folder, "socket")
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "serve", path], env=env,
                            stdout=subprocess.PIPE, text=True)
    saved = os.environ.get("JUPYTER_PATH")
    try:
        line = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline().strip()), daemon=True)
        reader.start()
        reader.join(wait)
        if line != ["ready"]:
            yield None
            return
        warm = Warm(folder, path)
        os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (folder, saved) if p)
        yield warm
    finally:
        if saved is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = saved
        with contextlib.suppress(OSError):
            os.remove(path)                     # the warm process ends within a second of this
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif len(sys.argv) >= 5 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3:]))
    else:
        sys.exit(__doc__)
