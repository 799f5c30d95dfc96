"""The chapters' execution cache, shared by the book's build (`book.py`) and the notebooks
(`notebooks.py`): which pages run, how a chapter is read and executed as myst-nb would, and the key
that says when the cache is stale.
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

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
# machine is left to the build itself, which runs it alone, so its figures are not disturbed.
PARALLEL_JOBS = 2
RUN_ALONE = {"chapters/part3/scale.md"}
# The MyST extensions of _config.yml: the reader must split a chapter into cells exactly as
# myst-nb does, or the notebooks would not hash the same and the build would run them again.
MYST_EXTENSIONS = {"colon_fence", "dollarmath", "amsmath", "substitution", "deflist"}
SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def read_chapter(path: Path):
    """A chapter as the notebook myst-nb makes of it (so it hashes as the build's cache expects)."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    config = MdParserConfig(enable_extensions=MYST_EXTENSIONS)
    return read_myst_markdown_notebook(path.read_text(), config, add_source_map=True, path=path)


def pre_execute(jobs: int = PARALLEL_JOBS, include_alone: bool = False) -> tuple[int, float]:
    """Execute the chapters missing from the execution cache, `jobs` at a time, and store them in
    the cache exactly as myst-nb would (its reader, its hash, the chapter's folder as working
    directory), so that the build finds every one. Returns (chapters run, seconds).

    A chapter that fails is not stored: the build then runs it again and reports the error with
    its traceback, as it always has. `include_alone` runs the RUN_ALONE chapters too (one at a
    time, after the others), for a caller that has no build to leave them to.
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

    def run(item):
        path, nb = item
        return path, nb, single_nb_execution(nb, cwd=str(path.parent), timeout=300, allow_errors=False)

    def store(results):
        for path, nb, result in results:
            status = "failed (the build will report it)" if result.err else f"{result.time:.1f} s"
            print(f"  executed {path.relative_to(ROOT)}: {status}", flush=True)
            if result.err is None:
                cache.cache_notebook_bundle(CacheBundleIn(nb, str(path), data={"execution_seconds": result.time}),
                                            check_validity=False, overwrite=True)

    alone = [item for item in todo if str(item[0].relative_to(ROOT)) in RUN_ALONE]
    together = [item for item in todo if str(item[0].relative_to(ROOT)) not in RUN_ALONE]
    start = time.perf_counter()
    # One thread of arithmetic per kernel: two kernels that each start a thread per core fight
    # over the two cores and both run several times slower than alone.
    saved = {k: os.environ.get(k) for k in SINGLE_THREAD}
    os.environ.update(SINGLE_THREAD)
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            store(pool.map(run, together))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    store(map(run, alone))  # alone and with every thread, as the build runs them
    return len(todo), time.perf_counter() - start


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
