"""Build tasks for the book: vendored assets, a cache keyed on the library, student notebooks.

    python scripts/book.py vendor     copy MathJax into _assets/vendor
    python scripts/book.py build      execute every chapter and build the site (warnings are errors,
                                      a chapter's own included)
    python scripts/book.py student    write student notebooks (no solutions, no outputs) to student/ (scripts/notebooks.py)
    python scripts/book.py bench      fresh build, rebuild after a one-line edit, peak memory per chapter

The Makefile calls these; they can be run by hand inside the environment.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
CACHE = BUILD / ".jupyter_cache"
KEY_FILE = BUILD / ".library-key"
# Not under _static: Jupyter Book adds every script found there to every page.
VENDOR = ROOT / "_assets" / "vendor"
NODE = ROOT / "node_modules"
# The jupyter-book command of this environment (its package has no __main__ module).
JUPYTER_BOOK = [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())"]


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


# ----------------------------------------------------------------------------- vendor
def vendor() -> None:
    """Copy the browser assets from node_modules so that no page fetches anything from outside."""
    if not NODE.is_dir():
        sys.exit("node_modules is missing: run `npm ci` first (make does this)")
    VENDOR.mkdir(parents=True, exist_ok=True)
    for gone in ("html-manager", "require.min.js"):      # the widget manager's, before the explorers ran in the page
        path = VENDOR / gone
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    mathjax = VENDOR / "mathjax"
    if mathjax.exists():
        shutil.rmtree(mathjax)
    es5 = NODE / "mathjax" / "es5"
    # The combined TeX-to-HTML component, its fonts, and the TeX extensions it may load on demand.
    shutil.copytree(es5, mathjax, ignore=shutil.ignore_patterns("sre", "mml-*", "tex-mml-*", "tex-svg*",
                                                                 "*.map", "svg", "node-main.js"))


# ----------------------------------------------------------------------------- build
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
    from concurrent.futures import ThreadPoolExecutor

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
    from importlib import metadata

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


# A line Python's warnings module prints ("file.py:9: UserWarning: ..."), wherever it ends up.
WARNING_LINE = re.compile(r"\b\w*Warning: ")


def printed_warnings(nb) -> list[tuple[int, str]]:
    """(cell index, first line) of each output that shows a warning or anything on stderr."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                text, on_stderr = out.get("text", ""), out.get("name") == "stderr"
            else:
                text, on_stderr = out.get("data", {}).get("text/plain", ""), False
            text = "".join(text) if isinstance(text, list) else text
            if (on_stderr and text.strip()) or WARNING_LINE.search(text):
                lines = [line.strip() for line in text.splitlines() if line.strip()]
                found.append((i, next((line for line in lines if WARNING_LINE.search(line)), lines[0])))
    return found


def chapter_warnings() -> list[str]:
    """Every warning the executed chapters show, as `chapter:line: text`, read from the cache the
    site is built from (so a chapter executed by the build itself is covered too)."""
    from jupyter_cache import get_cache

    cache = get_cache(str(CACHE))
    found = []
    for path in chapters():
        nb = read_chapter(path)
        try:
            _, executed = cache.merge_match_into_notebook(nb)   # the outputs, in the chapter's cells
        except KeyError:
            continue        # not executed: the build has already failed on it
        lines = nb.metadata.get("source_map", [])
        for i, text in printed_warnings(executed):
            where = f"{path.relative_to(ROOT)}:{lines[i]}" if i < len(lines) else f"{path.relative_to(ROOT)}, cell {i + 1}"
            found.append(f"{where}: {text}")
    return found


def build(clean: bool = False) -> float:
    key = library_key()
    if clean or not KEY_FILE.exists() or KEY_FILE.read_text() != key:
        # jupyter-cache only notices changes to a notebook's own cells, and Sphinx only re-reads
        # pages whose source changed; a change in lib/ or data/ must re-execute every chapter, so
        # both the execution cache and Sphinx's environment are dropped when their hash moves.
        shutil.rmtree(CACHE, ignore_errors=True)
        shutil.rmtree(BUILD / ".doctrees", ignore_errors=True)
    if not (VENDOR / "mathjax" / "tex-chtml.js").exists():
        vendor()
    start = time.perf_counter()
    ran, seconds = pre_execute()
    if ran:
        print(f"executed {ran} chapters, {PARALLEL_JOBS} at a time, in {seconds:.1f} s")
    cmd = JUPYTER_BOOK + ["build", str(ROOT), "-W", "-n", "--keep-going"]
    result = subprocess.run(cmd, cwd=ROOT)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"the book did not build (exit {result.returncode}); see the messages above")
    # A warning in a chapter's output would be published as part of the page: it fails the build.
    warned = chapter_warnings()
    if warned:
        print("\n".join(warned), file=sys.stderr)
        sys.exit(f"the book did not build: {len(warned)} chapter output(s) show a warning (listed above); "
                 "fix its cause, do not hide it")
    BUILD.mkdir(exist_ok=True)
    KEY_FILE.write_text(key)
    print(f"\nThe site is built: {BUILD / 'html' / 'index.html'}  ({seconds:.1f} s)")
    print("Serve it with `make serve`, then open http://127.0.0.1:8000/")
    return seconds


# ----------------------------------------------------------------------------- student notebooks
def student(out: Path = ROOT / "student") -> list[Path]:
    """Handouts without solutions or outputs: scripts/notebooks.py writes them."""
    import notebooks

    return notebooks.student(out)


# ----------------------------------------------------------------------------- bench
def peak_memory_of(path: Path) -> tuple[float, float]:
    """Execute one chapter in a fresh kernel; return (seconds, peak resident MB of the kernel).

    A last cell, added to the copy that runs, asks the kernel for its own high-water mark.
    """
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    nb = jupytext.read(path)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import resource; print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"))
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - start
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    return seconds, float(text.split("PEAK_KB")[1].split()[0]) / 1024


def bench() -> None:
    from lib.budgets import BUDGETS
    budget = {"build": BUDGETS["build"], "rebuild": BUDGETS["rebuild"], "memory": BUDGETS["chapter_memory_mb"]}
    shutil.rmtree(BUILD, ignore_errors=True)
    fresh = build(clean=True)
    page = ROOT / "intro.md"
    original = page.read_text()
    try:
        page.write_text(original + "\n<!-- bench: a one-line prose edit -->\n")
        start = time.perf_counter()
        subprocess.run(JUPYTER_BOOK + ["build", str(ROOT), "-W", "-n", "--keep-going"],
                       cwd=ROOT, check=True, capture_output=True)
        rebuild = time.perf_counter() - start
    finally:
        page.write_text(original)
    rows = [("fresh build, every chapter executed, clean cache", fresh, budget["build"], "s"),
            ("rebuild after a one-line prose edit", rebuild, budget["rebuild"], "s")]
    for path in chapters():
        seconds, mb = peak_memory_of(path)
        rows.append((f"execute {path.relative_to(ROOT)}: time", seconds, None, "s"))
        rows.append((f"execute {path.relative_to(ROOT)}: peak kernel memory", mb, budget["memory"], "MB"))
    print()
    for what, value, limit, unit in rows:
        verdict = "" if limit is None else ("within" if value <= limit else "OVER") + f" budget {limit:g} {unit}"
        print(f"{what:70s} {value:9.1f} {unit:2s}  {verdict}")


if __name__ == "__main__":
    task = sys.argv[1] if len(sys.argv) > 1 else "build"
    {"vendor": vendor, "build": build, "student": student, "bench": bench}.get(
        task, lambda: sys.exit(f"unknown task {task!r}; tasks: vendor, build, student, bench"))()
