"""The learners' runs: one chapter, every learner who returned it.

    python scripts/grading/run.py < job.json > runs.jsonl     (started by grading/running.py, never by hand)

This process runs the chapter's own code cells (the instructor's, as `make student` hands them out)
in an IPython shell, and where a learner's notebook first departs from them it forks: the child
carries on with that learner's cells, contained (grading/walls.py), and after each answer cell writes
down the learner's answer as plain data (grading/wire.py): the value bound to the stub's name, or,
for a function, what it returned for every input the chapter's check gave it. Nothing here decides a
verdict: the answers go to grading/checker.py, a fresh process that no learner's code ever ran in.
The time limits are kept from outside each run by this process (grading/watch.py).
"""
from __future__ import annotations

import fcntl
import io
import json
import os
import re
import resource
import signal
import sys
import time
from pathlib import Path

if __package__ in (None, ""):     # run as a script: the package's folder first on the path, for `grading`
    sys.path[:1] = [str(Path(__file__).resolve().parents[1])]

import lib  # noqa: E402
from grading import wire  # noqa: E402
from grading.answers import answer_names, warm_own_text_checks  # noqa: E402
from grading.walls import PR_SET_DUMPABLE, PR_SET_PDEATHSIG, Cgroups, contain, prctl  # noqa: E402
from grading.watch import Watch  # noqa: E402
from lib import chapters  # noqa: E402
from lib.exercises import writing  # noqa: E402
from lib.exercises.writing import TimeUp, describe_exception, is_empty_stub  # noqa: E402


# ----------------------------------------------------------------------------- the learner's cells
class CellTimeUp(KeyboardInterrupt):
    """A cell used up its CPU time."""


_FIRED = []     # the cell's CPU timer went off (a KeyboardInterrupt a learner raises is not a time limit)


def _prof_alarm(signum, frame):
    _FIRED.append(True)
    raise CellTimeUp()


def run_cell(shell, source: str, cpu_seconds: float) -> str | None:
    """Run one cell; None, or what went wrong in a few words."""
    _FIRED.clear()
    signal.signal(signal.SIGPROF, _prof_alarm)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
    try:
        result = shell.run_cell(source, store_history=False, silent=False)
    except KeyboardInterrupt as e:
        return TOO_LONG if _FIRED else f"raised {type(e).__name__}"
    except Exception as e:    # raised by IPython itself, before the cell ran (a cell nested too deep to compile)
        return f"raised {type(e).__name__}"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    error = result.error_before_exec or result.error_in_exec
    if error is None:
        return None
    if isinstance(error, KeyboardInterrupt) and _FIRED:
        return TOO_LONG
    return f"raised {type(error).__name__}"


TOO_LONG = "ran too long (the time limit of a cell)"


class Recorder:
    """Stands in for the learner's function while the chapter's check drives it in the run: every
    call's inputs and what came back (or what it raised). Only the record leaves the run."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def __repr__(self):
        return "a function"

    def __call__(self, *args, **kwargs):
        record = {"args": wire.encode(args), "kwargs": wire.encode(kwargs)}
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
            record["out"] = wire.encode(out)
        except ValueError:
            record["out"] = {"__opaque__": "answer too large"}
        self.calls.append(record)
        return out


def capture(shell, label: str, spec: dict, cell_problem: str | None) -> dict:
    """The learner's answers to one exercise, as plain data: each name the check call takes, its
    value (or that it is absent). A function is driven by the chapter's check, with the exercise's
    other answers as the learner's kernel holds them; a write check's every case is given to it (not
    only those up to the first it gets wrong), so that the checker can count the cases it gets right
    (partial credit)."""
    record = {"label": label, "problem": cell_problem, "answers": {}}
    values = {name: shell.user_ns.get(name, _MISSING) for name in answer_names(spec)}
    recorders = {}
    for name, value in values.items():
        part = record["answers"][name] = {}
        if value is _MISSING:
            part["absent"] = True
        elif callable(value) and not isinstance(value, type):
            part["function"] = True
            part["empty"] = bool(is_empty_stub(value))
            if not part["empty"]:
                recorders[name] = Recorder(value)
        else:
            try:
                part["value"] = wire.encode(value)
            except ValueError:
                part["value"] = {"__opaque__": "answer too large"}
    if recorders and _MISSING not in values.values():
        try:
            check = getattr(chapters.checks(spec['module']), spec["check"])
            args = [recorders.get(a["name"], values.get(a["name"])) if a["role"] == "answer" else lib.load(a["model"])
                    for a in spec["args"]]
            if isinstance(check, writing.WriteCheck) and len(args) == 1:
                writing.case_results(args[0], check)
            else:
                check(*args)
        except BaseException:   # the learner's function may do anything; only the record counts
            pass
    for name, recorder in recorders.items():
        record["answers"][name]["calls"] = recorder.calls
    return record


_MISSING = object()


def learner_child(shell, learner: dict, job: dict) -> None:
    """In the forked child: read this learner's cells (and only theirs), contain, run them from where
    they depart from the chapter, and write the answers straight to the grader (a pipe of the
    grader's own: this process never holds another learner's answers, or their code)."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)     # the chapter's watch is not this process's
    try:    # it ends with the chapter's process, from its first line (a fork does not inherit that)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass
    if os.getppid() != learner["parent"]:            # the chapter's process ended before that
        os._exit(1)
    cgroups = learner.pop("cgroups", None)
    try:
        if cgroups is not None:
            cgroups.join()
    except OSError:
        cgroups.missing.append("the run could not join its control groups")
    if cgroups is not None and any(m.startswith("no limit on its number of processes") for m in cgroups.missing):
        limit_processes_by_user(job["limits"]["processes"], cgroups.missing)
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
        _run_learner(shell, cells, learner, job, send, beat, cgroups.missing if cgroups is not None else [])
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


def limit_processes_by_user(processes: int, missing: list[str]) -> None:
    """Where no control group limits a run's processes: the user's own process limit (RLIMIT_NPROC),
    set to the processes the grader's user has now and `processes` more, so that a fork bomb stops
    there. It counts every process of that user, and the kernel does not hold root to it."""
    uid = os.getuid()
    if uid == 0:
        return
    mine = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                mine += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                pass
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (mine + processes, mine + processes))
    except (ValueError, OSError):
        return
    for i, note in enumerate(missing):
        if note.startswith("no limit on its number of processes"):
            missing[i] = (f"its number of processes limited with every other process of your user's ({mine} now, "
                          f"and {processes} more: RLIMIT_NPROC), no control group of its own")


def bind_check(shell, spec: dict) -> None:
    """The chapter's checks as `check`, as the stub's first line binds them: a learner who replaced a
    whole answer cell (that line with it) still has them, so no check call fails for want of it."""
    module = chapters.checks(spec["module"])
    if shell.user_ns.get("check") is not module:
        shell.user_ns["check"] = module


def _run_learner(shell, cells, learner, job, send, beat, walls_missing):
    # The working folder is an empty file system mounted over the whole work folder of the chapter,
    # so the other learners' files in it are out of sight.
    scratch = Path(job["workdir"])
    limits = {**job["limits"], "notebook_seconds": learner["cpu_limit"]}
    missing = contain(scratch, job["hide"], limits)
    send({"contained": walls_missing + missing})
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()   # the learner's prints go nowhere
    # Nor do their tracebacks: formatting one (a line of 100,000 terms, coloured) can take longer than
    # the cell; the run needs only the error's type, which run_cell reads from the result.
    shell.showtraceback = shell.showsyntaxerror = shell.showindentationerror = lambda *args, **kwargs: None
    answers = job["answers"]
    names = {label: answer_names(spec) for label, spec in answers.items()}
    # Cells after which an answer's value is taken again: the last cell of the learner's own below its
    # answer cell that binds the answer's name (a copy of the answer cell, an answer put right below a
    # wrong draft), found by reading the notebook (grading/reading.py).
    copies = {int(i): label for label, i in (learner.get("copies") or {}).items() if label in answers}
    after: dict[str, tuple] = {}      # label -> the objects its names held right after its answer cell
    pending: list[str] = []           # labels whose value at the end of their span is still to be taken

    def held(label) -> tuple:
        return tuple(shell.user_ns.get(name, _MISSING) for name in names[label])

    def take_final(label):
        """The answers' values where the exercise's span ends (the notebook's end, or the next answer
        cell that binds one of its names): as the learner's kernel holds them once the cells below the
        stub ran."""
        now = held(label)
        if any(v is not _MISSING for v in now) and any(v is not a for v, a in zip(now, after[label])):
            send({**capture(shell, label, answers[label], None), "taken": "final"})

    start = learner["start"]
    for i, cell in enumerate(cells[start:], start):
        label = cell.get("label")
        if label in answers:
            for other in [o for o in pending if set(names[o]) & set(names[label])]:
                take_final(other)
                pending.remove(other)
            bind_check(shell, answers[label])
        before = held(label) if label in answers else None
        beat(b"s")
        problem = run_cell(shell, cell["source"], job["limits"]["cell_cpu_seconds"])
        if isinstance(sys.stdout, io.StringIO):
            sys.stdout.seek(0), sys.stdout.truncate()
        if label in answers:
            after[label] = held(label)
            # "rebound": the cell bound one of the answers' names anew (before it raised, if it did).
            send({**capture(shell, label, answers[label], problem), "taken": "cell",
                  "rebound": any(a is not b for a, b in zip(after[label], before))})
            pending.append(label)
        elif copies.get(i) in pending:
            send({**capture(shell, copies[i], answers[copies[i]], problem), "taken": "copy"})
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
    index = 0                         # learners started so far

    def emit(record):
        stdout.write(json.dumps(record) + "\n")
        stdout.flush()

    limits = job["limits"]
    # A check drives a function the learner wrote under a CPU limit of its own (5 s at least, more when
    # the library's own answer was slow). In a run, a cell's CPU limit is the floor (the watch still
    # stops a function that loops, at the cell's limit).
    writing.TIME_LIMIT = max(writing.TIME_LIMIT, float(limits["cell_cpu_seconds"]))
    writing.LONGEST = max(writing.LONGEST, writing.TIME_LIMIT)
    watch = Watch(running, limits)
    told_idle = False

    def reap() -> None:
        """One pass: stop a run past its time, and report every run that ended (its control groups
        emptied and removed: nothing of it stays), with the CPU it used."""
        nonlocal told_idle
        watch.check()
        for pid, entry in list(running.items()):
            done, _, usage = os.wait4(pid, os.WNOHANG)
            if done:
                used = max(usage.ru_utime + usage.ru_stime, entry["cgroups"].usage() or 0.0, entry.get("cpu") or 0.0)
                timing["runs"].append(round(used, 2))
                events = entry["cgroups"].events()
                problem = watch.stopped(entry, limits) or (at_limits(events, limits) if not entry.get("killed") else None) \
                    or chapter_problem
                if events["pids_max"] and problem:
                    problem += (f"; it tried to start more than {limits['processes']} processes (refused "
                                f"{events['pids_max']} times)")
                entry["cgroups"].remove()
                os.close(entry["watch"])
                emit({"learner": entry["learner"]["name"], "problem": problem, "stopped": entry.get("killed"),
                      "cpu": round(used, 3)})
                del running[pid]
        # Every learner started and every run left waiting or long: the grader may start another
        # chapter beside this one (these runs go on within their limits; the watch ends them there).
        if not told_idle and index >= len(learners) and running and not busy():
            told_idle = True
            emit({"idle": True})

    def busy() -> int:
        return sum(map(Watch.at_work, running.values()))

    def start(learner):
        # `jobs` runs at work at once; a run that waits (no CPU for a second) or has run long leaves
        # its place to another, up to `most` runs in all (each holds memory).
        while busy() >= job["jobs"] or len(running) >= job.get("most", job["jobs"]):
            reap()
            time.sleep(0.02)
        sys.stdout.flush()
        learner["cgroups"] = Cgroups(f"grading-{os.getpid()}-{learner['start']}-{len(running)}-{time.monotonic_ns()}", limits)
        watch_read, learner["watch_fd"] = os.pipe()
        os.set_blocking(watch_read, False)
        learner["parent"] = os.getpid()
        pid = os.fork()
        if pid == 0:
            try:
                learner_child(shell, learner, job)
            finally:
                os._exit(1)
        os.close(learner["fd"])     # the child holds the only writing end: the grader sees it end
        os.close(learner["watch_fd"])
        running[pid] = {"learner": learner, "deadline": time.monotonic() + limits["notebook_wall_seconds"],
                        "watch": watch_read, "cgroups": learner.pop("cgroups"), "cpu_limit": learner["cpu_limit"]}

    Cgroups.sweep()
    if learners:   # the cells no chapter's cell runs before the first learner's run is forked
        measure_claims_once(job["cells"][learners[0]["start"]:])
        # The model an own-text check runs on the learner's text (SmolLM2), loaded here once: every
        # learner's answer cell calls the check, and each run inherits it instead of loading it again.
        warm_own_text_checks(job["answers"])
    timing["claims"] = cpu_seconds() - timing["start"]
    signal.signal(signal.SIGALRM, watch.check)
    signal.setitimer(signal.ITIMER_REAL, 0.5, 0.5)
    cells = job["cells"]
    sys.stdout = io.StringIO()
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


def at_limits(events: dict, limits: dict) -> str | None:
    """What ended a run the watch did not stop, when the kernel says: its memory, or its processes."""
    if events["oom_kill"]:
        return (f"the kernel ended {events['oom_kill']} of its processes when they used up the memory the run may "
                f"use ({limits['memory_mb']} MB, all of them together)")
    if events["pids_max"]:
        return (f"the run ended after it tried to start more than {limits['processes']} processes (refused "
                f"{events['pids_max']} times)")
    return None


def cpu_seconds() -> float:
    """CPU seconds this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
