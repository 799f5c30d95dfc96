"""The chapters' execution cache, shared by the book's build (`book.py`) and the notebooks
(`notebooks.py`): which pages run, how a chapter is read and executed as myst-nb would, and the key
that says when the cache is stale.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from importlib import metadata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import warm_python

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
CACHE = BUILD / ".jupyter_cache"
KEY_FILE = BUILD / ".library-key"


def chapters() -> list[Path]:
    """Every notebook page listed in _toc.yml, in order (pages with code cells only)."""
    toc = (ROOT / "_toc.yml").read_text()
    files = re.findall(r"file:\s*(\S+)", toc)
    out = []
    for f in files:
        path = ROOT / (f + ".md")
        if path.exists() and "```{code-cell}" in path.read_text():
            out.append(path)
    return out


# Chapters executed two at a time before the build (the machine has two cores; most of a chapter's
# time is starting a kernel and importing torch, which overlap well). A chapter that times the
# machine runs alone, after the others and with every thread, so its figures are not disturbed.
PARALLEL_JOBS = 2
RUN_ALONE = {"chapters/part3/scale.md"}
# The MyST extensions of _config.yml: the reader must split a chapter into cells exactly as
# myst-nb does, or the notebooks would not hash the same and the build would run them again.
MYST_EXTENSIONS = {"colon_fence", "dollarmath", "amsmath", "substitution", "deflist"}
SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
# How long each task of the execution took last time (seconds), kept beside the cache and outliving it:
# the tasks on the longest path to the end start first, so that none is left to run alone at the end.
SECONDS_FILE = BUILD / ".chapter-seconds.json"
# Until a checkout has executed its chapters once, the longest of them (processor seconds on one
# thread, each run's claims measured beforehand, 2026-11-28; `python scripts/chapter_profile.py`); any
# other chapter is expected to take DEFAULT_SECONDS.
FIRST_SECONDS = {
    "chapters/part3/real-model.md": 60,     # SmolLM2's open prompts decoded five ways
    "chapters/part1/ablation.md": 37,
    "chapters/part2/hand-wired.md": 18,
    "chapters/part2/real-language.md": 15,
    "chapters/part3/results-page.md": 12,
    "chapters/part2/three-ways.md": 11,
}
DEFAULT_SECONDS = 5.0


def read_chapter(path: Path):
    """A chapter as the notebook myst-nb makes of it (so it hashes as the build's cache expects)."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    config = MdParserConfig(enable_extensions=MYST_EXTENSIONS)
    return read_myst_markdown_notebook(path.read_text(), config, add_source_map=True, path=path)


@dataclass
class Task:
    """One task of the execution: a chapter, or one run's claims (`claim_runs`)."""
    name: str                       # as SECONDS_FILE keys it: the chapter's path, or the run's models and folders
    call: Callable[[], None]
    seconds: float = DEFAULT_SECONDS  # how long it is expected to take
    waits: set[str] = field(default_factory=set)   # the tasks it starts after


def last_seconds() -> dict[str, float]:
    try:
        last = json.loads(SECONDS_FILE.read_text())
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in last.items() if isinstance(v, (int, float))} if isinstance(last, dict) else {}


def critical_first(tasks: list[Task]) -> list[Task]:
    """The tasks, those on the longest path to the end first: a task's own expected time plus the longest
    path among the tasks that wait for it (list scheduling by highest level, which leaves no long task to
    start last). Ties keep the given order."""
    waiting = {t.name: [u for u in tasks if t.name in u.waits] for t in tasks}

    @functools.lru_cache(maxsize=None)
    def level(name: str) -> float:
        return by_name[name].seconds + max((level(u.name) for u in waiting[name]), default=0.0)
    by_name = {t.name: t for t in tasks}
    return sorted(tasks, key=lambda t: -level(t.name))


def claim_runs() -> list[tuple[dict, list[str], list[int]]]:
    """The pages' every-run claims on the other shipped runs that are not kept yet (lib.claims.runs.page_runs):
    measured before the chapters, one process a run, instead of by each chapter for its own claims."""
    from lib.claims import runs  # deferred: the claims import every chapter's unit

    return [(run, ids, seeds) for run, ids, seeds in runs.page_runs() if runs.missing(run, ids, seeds)]


_MEASURE_RUN = ("import json, sys; from lib.claims import runs; "
                "runs.measure_in_this_process(*json.loads(sys.argv[1]))")


def measure_claim_run(run: dict, ids: list[str], seeds: list[int], python: list[str] | None = None) -> str | None:
    """One run's claims measured in a process of its own and kept (lib.kept); None, or what went wrong (the
    chapter that reads them then measures them itself, and reports the error where it is). `python`: the
    command that starts the process (a fork of the warm process, warm_python.Warm.python)."""
    result = subprocess.run([*(python or [sys.executable]), "-c", _MEASURE_RUN, json.dumps([run, ids, seeds])],
                            cwd=ROOT, env=dict(os.environ, **SINGLE_THREAD), capture_output=True, text=True)
    return None if result.returncode == 0 else (result.stderr.strip().splitlines() or ["no message"])[-1]


@contextlib.contextmanager
def environ(values: dict):
    """These environment variables set (the kernels started inside inherit them), the old values back after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def pre_execute(jobs: int = PARALLEL_JOBS, include_alone: bool = True) -> tuple[int, float]:
    """Execute the chapters missing from the execution cache, `jobs` at a time, and store them in
    the cache exactly as myst-nb would (its reader, its hash, the chapter's folder as working
    directory), so that the build finds every one. Returns (chapters run, seconds).

    The claims the chapters measure on the other shipped training runs are measured by the same workers,
    each run in a process of its own (`claim_runs`); a chapter that reads them starts once they are kept.
    The tasks on the longest path to the end start first (`critical_first`).

    A chapter that fails is not stored: the build then runs it again and reports the error with
    its traceback, as it always has. The RUN_ALONE chapters run one at a time, after the others, with
    every thread (`include_alone=False` leaves them out).
    """
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.executors.utils import single_nb_execution

    cache = get_cache(str(CACHE))
    todo = []
    for path in chapters():
        if str(path.relative_to(ROOT)) in RUN_ALONE and not include_alone:
            continue
        try:
            nb = read_chapter(path)
        except Exception as e:  # a malformed chapter: the build reports it where it is
            print(f"  skipped {path.relative_to(ROOT)}: {e}", flush=True)
            continue
        try:
            cache.match_cache_notebook(nb)
        except KeyError:
            todo.append((path, nb))
    if not todo:
        return 0, 0.0
    start = time.perf_counter()
    seconds: dict[str, float] = {}

    def execute(path, nb, warm=None):
        t = time.perf_counter()
        kernel = {"kernel_name": warm.kernel_name} if warm is not None else {}
        result = single_nb_execution(nb, cwd=str(path.parent), timeout=300, allow_errors=False, **kernel)
        seconds[str(path.relative_to(ROOT))] = round(time.perf_counter() - t, 1)
        status = "failed (the build will report it)" if result.err else f"{result.time:.1f} s"
        print(f"  executed {path.relative_to(ROOT)}: {status}", flush=True)
        if result.err is None:
            cache.cache_notebook_bundle(CacheBundleIn(nb, str(path), data={"execution_seconds": result.time}),
                                        check_validity=False, overwrite=True)

    def measure(name, run, ids, seeds, warm=None):
        t = time.perf_counter()
        error = measure_claim_run(run, ids, seeds, warm.python() if warm is not None else None)
        seconds[name] = round(time.perf_counter() - t, 1)
        print(f"  measured {len(ids)} {name}: " + (f"{seconds[name]:.1f} s" if error is None
              else f"failed ({error}); the chapters measure them"), flush=True)

    alone = [item for item in todo if str(item[0].relative_to(ROOT)) in RUN_ALONE]
    together = [item for item in todo if str(item[0].relative_to(ROOT)) not in RUN_ALONE]
    last = last_seconds()
    tasks = [Task(str(path.relative_to(ROOT)), functools.partial(execute, path, nb)) for path, nb in together]
    for task in tasks:
        task.seconds = last.get(task.name, FIRST_SECONDS.get(task.name, DEFAULT_SECONDS))
    # The runs' claims that the chapters to execute glue (the claims registry is read only if one glues
    # a claim); each chapter starts after the runs of its own claims.
    chapter_of = {Path(t.name).stem: t for t in tasks}
    glued = any("glue_claim" in path.read_text() for path, _ in together)
    for run, ids, seeds in claim_runs() if glued else []:
        readers = [chapter_of[c] for c in _claim_chapters(ids) if c in chapter_of]
        if readers:
            name = "claims on " + ", ".join(f"{m} {Path(f).name}" for m, f in run.items())
            tasks.append(Task(name, functools.partial(measure, name, run, ids, seeds),
                              last.get(name, 2.0 + 0.4 * len(ids))))
            for reader in readers:
                reader.waits.add(name)
    # One thread of arithmetic per kernel: two kernels that each start a thread per core fight
    # over the two cores and both run several times slower than alone.
    with environ(SINGLE_THREAD):
        # Every kernel and measuring process a fork of one process that has imported torch and the rest
        # (warm_python: 2.5 s of processor time saved a process), started under the same environment.
        with warm_python.started(dict(os.environ)) as warm:
            for task in tasks:
                task.call = functools.partial(task.call, warm=warm)
            _run_tasks(critical_first(tasks), jobs)
    for path, nb in alone:          # alone and with every thread, as the build runs them
        execute(path, nb)
    BUILD.mkdir(exist_ok=True)
    SECONDS_FILE.write_text(json.dumps({**last_seconds(), **seconds}, indent=1, sort_keys=True))
    return len(todo), time.perf_counter() - start


def _claim_chapters(ids: list[str]) -> set[str]:
    """The chapters (their pages' names without .md) whose claims are among `ids`."""
    from lib.claims import registry  # deferred: the claims import every chapter's unit

    return {registry.get(i).chapter for i in ids}


def _run_tasks(tasks: list[Task], jobs: int) -> None:
    """Run `tasks` on `jobs` threads: each thread takes the first task in the list whose waits are done (or
    name no task in the list). A task that raises counts as done; the first error is raised once all end."""
    names = {t.name for t in tasks}
    done: set[str] = set()
    left = list(tasks)
    ready = threading.Condition()
    errors: list[BaseException] = []

    def worker():
        while True:
            with ready:
                while True:
                    if not left:
                        return
                    task = next((t for t in left if (t.waits & names) <= done), None)
                    if task is not None:
                        left.remove(task)
                        break
                    ready.wait()
            try:
                task.call()
            except BaseException as e:  # noqa: BLE001 (raised again below, once every task has ended)
                errors.append(e)
            finally:
                with ready:
                    done.add(task.name)
                    ready.notify_all()

    threads = [threading.Thread(target=worker, name=f"execute-{n}") for n in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


# What a reader's kernel installs, pinned (the packages a chapter imports; data-only packages installed
# without their dependencies in the second file).
READER_REQUIREMENTS = (ROOT / "requirements.txt", ROOT / "requirements-nodeps.txt")
# Beside those pins, the libraries a figure's digits depend on that come unpinned, as dependencies.
NUMERICAL_DEPENDENCIES = ("scipy", "threadpoolctl")


def installed_versions() -> list[str]:
    """name==version of the packages whose change can move a chapter's output: those the reader's
    requirements pin (a new torch or numpy can move a figure) and the numerical libraries they bring.
    Not every installed package: the build's and the tests' own (Sphinx, pytest) change nothing a
    chapter computes, and they are resolved differently where they are absent, so an environment with
    the reader's packages alone (Binder, a hub's image) would never find the developers' cache."""
    names = [re.split(r"[\s=<>!~;\[(]", line.strip(), maxsplit=1)[0]
             for path in READER_REQUIREMENTS if path.exists() for line in path.read_text().splitlines()
             if line.strip() and not line.lstrip().startswith(("#", "-"))]
    found = []
    for name in sorted({n.lower().replace("_", "-") for n in names} | set(NUMERICAL_DEPENDENCIES)):
        try:
            found.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} not installed")
    return found


def library_key(root: Path = ROOT, versions: list[str] | None = None) -> str:
    """A hash of everything a chapter's output depends on besides the chapter itself: the library,
    the data (where the library reads it: $COURSE_DATA, else data/), the book's configuration,
    and the Python and reader's packages installed (`versions` defaults to this environment's)."""
    h = hashlib.sha256()
    data = Path(os.environ["COURSE_DATA"]) if os.environ.get("COURSE_DATA") else root / "data"
    for folder in (root / "lib", data):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(folder.parent)).encode() + b"\0")
                h.update(path.read_bytes() + b"\0")
    h.update((root / "_config.yml").read_bytes() + b"\0")
    h.update(sys.version.encode() + b"\0")
    h.update("\n".join(installed_versions() if versions is None else versions).encode())
    return h.hexdigest()
