"""Build tasks for the book: vendored assets, a cache keyed on the library, student notebooks.

    python scripts/book.py vendor     copy MathJax into _assets/vendor
    python scripts/book.py build      execute every chapter and build the site (warnings are errors,
                                      a chapter's own included)
    python scripts/book.py student    write student notebooks (no solutions, no outputs) to student/ (scripts/notebooks.py)
    python scripts/book.py bench      fresh build, rebuild after a one-line edit, peak memory per chapter

The Makefile calls these; they can be run by hand inside the environment.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import notebooks
from chapter_cache import (BUILD, CACHE, KEY_FILE, MYST_EXTENSIONS, PARALLEL_JOBS, ROOT,  # noqa: F401  (the tasks' own)
                           RUN_ALONE, SINGLE_THREAD, chapters, environ, installed_versions, library_key, pre_execute,
                           read_chapter)
from lib.budgets import BUDGETS

# Not under _static: Jupyter Book adds every script found there to every page.
VENDOR = ROOT / "_assets" / "vendor"
NODE = ROOT / "node_modules"
# The jupyter-book command of this environment (its package has no __main__ module).
JUPYTER_BOOK = [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())"]


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
    ran, seconds = pre_execute(include_alone=True)
    if ran:
        print(f"executed {ran} chapters, {PARALLEL_JOBS} at a time, in {seconds:.1f} s")
    cmd = JUPYTER_BOOK + ["build", str(ROOT), "-W", "-n", "--keep-going"]
    # Every chapter is executed by now (the one that times the machine too, alone, last), so Sphinx
    # starts no kernel, and its own arithmetic (the site's shipped check values, the site files) runs on
    # one thread: torch's second thread on the course's tiny models cost ten times the processor time
    # (46.8 against 4.2 s for the shipped checks' values on a busy machine).
    result = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, **SINGLE_THREAD))
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
    return notebooks.student(out)


# ----------------------------------------------------------------------------- bench
def peak_memory_of(path: Path) -> tuple[float, float]:
    """Execute one chapter in a fresh kernel, from nothing; return (seconds, peak resident MB of the kernel).

    From nothing: as a fresh clone's build, Binder and a learner's first run do, with the caches the chapters
    keep between runs empty (the claims measured over training runs, SmolLM2's stored runs), so a chapter that
    computes what a build would keep is measured computing it. A last cell, added to the copy that runs, asks
    the kernel for its own high-water mark.
    """
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    nb = jupytext.read(path)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import resource; print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as empty:
        caches = {"COURSE_CLAIMS_CACHE": f"{empty}/claims", "COURSE_REAL_CACHE": f"{empty}/real"}
        with environ(caches):           # the kernel inherits them
            NotebookClient(nb, timeout=None, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - start
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    return seconds, float(text.split("PEAK_KB")[1].split()[0]) / 1024


def bench() -> None:
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
        # A chapter that runs SmolLM2 (its 540 MB of weights in float32) has a budget of its own: the real chapters
        # are measured here, from nothing (lib.cli.bench times SmolLM2's passes, not a chapter's memory).
        limit = BUDGETS["smollm2_memory_mb"] if "smollm2" in path.read_text() else budget["memory"]
        rows.append((f"execute {path.relative_to(ROOT)}: time", seconds, None, "s"))
        rows.append((f"execute {path.relative_to(ROOT)}: peak kernel memory", mb, limit, "MB"))
    print()
    for what, value, limit, unit in rows:
        verdict = "" if limit is None else ("within" if value <= limit else "OVER") + f" budget {limit:g} {unit}"
        print(f"{what:70s} {value:9.1f} {unit:2s}  {verdict}")


if __name__ == "__main__":
    task = sys.argv[1] if len(sys.argv) > 1 else "build"
    {"vendor": vendor, "build": build, "student": student, "bench": bench}.get(
        task, lambda: sys.exit(f"unknown task {task!r}; tasks: vendor, build, student, bench"))()
