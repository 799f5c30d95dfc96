"""The build: a chapter that prints a warning cannot be published, and the execution cache is
dropped whenever anything that changes a chapter's output changes.

The warning test builds a small copy of the book in a temporary folder (the real book is never
touched): one chapter that warns beside one that does not. The build must fail and name the
warning's chapter and line, and only those. (That a book with no warning builds is proven by the
real book's own build, which `make test` runs before any test.)
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import book  # noqa: E402


# ----------------------------------------------------------------------------- the cache key
@pytest.fixture
def fake_root(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "model.py").write_text("SIZE = 1\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "weights.bin").write_bytes(b"\x01\x02")
    (tmp_path / "_config.yml").write_text("title: A\n")
    return tmp_path


VERSIONS = ["numpy==2.3.0", "torch==2.13.0"]


def test_the_key_moves_with_everything_that_changes_an_output(fake_root, monkeypatch):
    monkeypatch.delenv("COURSE_DATA", raising=False)

    def key(versions=VERSIONS):
        return book.library_key(fake_root, versions=versions)

    base = key()
    assert key() == base, "the key is a function of its inputs"
    changes = {
        "a line of lib/": lambda: (fake_root / "lib" / "model.py").write_text("SIZE = 2\n"),
        "a new file in lib/": lambda: (fake_root / "lib" / "extra.py").write_text(""),
        "a byte of data/": lambda: (fake_root / "data" / "weights.bin").write_bytes(b"\x01\x03"),
        "_config.yml": lambda: (fake_root / "_config.yml").write_text("title: B\n"),
    }
    seen = {base}
    for what, change in changes.items():
        change()
        new = key()
        assert new not in seen, f"changing {what} left the key as it was"
        seen.add(new)
    current = key()
    assert key(versions=["numpy==2.3.0", "torch==2.13.1"]) != current, "a package's version"
    assert key(versions=VERSIONS + ["scikit-learn==1.7.0"]) != current, "a package installed"
    elsewhere = fake_root / "elsewhere"
    shutil.copytree(fake_root / "data", elsewhere)
    (elsewhere / "weights.bin").write_bytes(b"\x09")
    monkeypatch.setenv("COURSE_DATA", str(elsewhere))
    assert key() != current, "the data the library reads is another folder's"
    monkeypatch.delenv("COURSE_DATA")
    (fake_root / "lib" / "__pycache__").mkdir()
    (fake_root / "lib" / "__pycache__" / "model.cpython.pyc").write_bytes(b"compiled")
    assert key() == current, "compiled files are not sources"


def test_the_key_reads_this_environment_by_default(fake_root):
    versions = book.installed_versions()
    assert any(v.startswith("torch==") for v in versions) and any(v.startswith("myst-nb==") for v in versions)
    assert book.library_key(fake_root) == book.library_key(fake_root, versions=versions)


# ----------------------------------------------------------------------------- the order chapters run in
def test_tasks_start_in_order_once_what_they_wait_for_is_done():
    import threading

    from chapter_cache import Task, _run_tasks

    started, lock = [], threading.Lock()

    def task(name, waits=(), fail=False):
        def call():
            with lock:
                started.append(name)
            if fail:
                raise RuntimeError(name)
        return Task(name, call, waits=set(waits))
    # Two runs first; the first chapter waits for both (one of which fails), the second for none.
    tasks = [task("run a"), task("run b", fail=True), task("chapter 1", ["run a", "run b"]), task("chapter 2")]
    with pytest.raises(RuntimeError, match="run b"):    # a failing task is reported once all have ended
        _run_tasks(tasks, jobs=1)
    assert started == ["run a", "run b", "chapter 1", "chapter 2"]
    started.clear()
    _run_tasks([task("waits", ["first"]), task("first"), task("alone", ["not a task"])], jobs=2)
    assert started.index("first") < started.index("waits") and "alone" in started


def test_the_longest_path_to_the_end_goes_first():
    from chapter_cache import Task, critical_first

    def t(name, seconds, waits=()):
        return Task(name, lambda: None, seconds, set(waits))
    # A short run that a long chapter waits for starts before a chapter longer than either alone.
    tasks = [t("long chapter", 30), t("run", 5), t("waits for the run", 40, ["run"]), t("short", 1)]
    assert [x.name for x in critical_first(tasks)] == ["run", "waits for the run", "long chapter", "short"]


def test_a_fresh_checkout_knows_its_longest_chapters():
    import chapter_cache

    pages = {str(p.relative_to(ROOT)) for p in chapter_cache.chapters()}
    assert set(chapter_cache.FIRST_SECONDS) <= pages, "FIRST_SECONDS names a page that is not in _toc.yml"
    assert min(chapter_cache.FIRST_SECONDS.values()) > chapter_cache.DEFAULT_SECONDS


# ----------------------------------------------------------------------------- kernels forked from a warm process
def test_a_warm_fork_runs_as_a_fresh_process_would(tmp_path):
    """A kernel forked from the warm process (scripts/warm_python.py) prints what a fresh kernel prints in the
    same folder and environment, draws the same figure and glues the same way; `python -c` through it keeps
    its arguments, working directory, output and exit status."""
    import nbformat
    from nbclient import NotebookClient

    import warm_python

    cells = ["import sys\nprint('torch' in sys.modules)",       # imported already in the fork, and only there
             "import os\nprint(os.getcwd(), sys.argv[0].rsplit('/', 1)[-1], sys.path[0] != '', os.environ['COURSE_MARK'])",
             "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(); ax.plot([1, 2]); plt.show()",
             "from myst_nb import glue\nglue('n', 3)",
             "import random, numpy as np\nprint(random.random() != 0.5, np.random.rand() < 1)"]

    def outputs(kernel):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
        NotebookClient(nb, kernel_name=kernel, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
        # a cell's printed text whole (a kernel may send one print in several messages), then its displays
        def shape(c):
            text = "".join(o.get("text", "") for o in c.outputs if o.get("output_type") == "stream")
            return ([text] if text else []) + [sorted(o.get("data", {})) for o in c.outputs if o.get("output_type") != "stream"]
        return [shape(c) for c in nb.cells]

    env = dict(os.environ, COURSE_MARK="warm", OMP_NUM_THREADS="1")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COURSE_MARK", "warm")
        with warm_python.started(env) as warm:
            assert warm is not None
            forked = outputs(warm.kernel_name)
            (tmp_path / "here").mkdir()
            r = subprocess.run(warm.python("-c", "import os, sys; print(os.getcwd(), sys.argv[1:]); sys.exit(3)", "a"),
                               cwd=tmp_path / "here", capture_output=True, text=True, timeout=120)
        fresh = outputs("python3")
    assert forked[0] == ["True\n"] and fresh[0] == ["False\n"]
    assert forked[1:] == fresh[1:]
    assert forked[1] == [f"{tmp_path} ipykernel_launcher.py True warm\n"]
    assert r.returncode == 3 and r.stdout == f"{tmp_path / 'here'} ['a']\n", r.stderr


# ----------------------------------------------------------------------------- the warning check
def notebook(*outputs_per_cell):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("pass", outputs=list(outputs)) for outputs in outputs_per_cell]
    return nb


def test_printed_warnings_finds_stderr_and_warning_lines_and_nothing_else():
    stream = nbformat.v4.new_output
    clean = notebook([stream("stream", name="stdout", text="P(Tarso) = 0.9999\n")],
                     [stream("execute_result", data={"text/plain": "0.5"}, execution_count=1)],
                     [stream("display_data", data={"text/plain": "<Figure>", "text/html": "<p>Warning signs</p>"})])
    assert book.printed_warnings(clean) == []
    noisy = notebook([stream("stream", name="stdout", text="ok\n")],
                     [stream("stream", name="stderr",
                             text="/tmp/x.py:9: UserWarning: Converting a tensor with requires_grad=True\n"
                                  "  glue(...)\n")],
                     [stream("stream", name="stdout", text="FutureWarning: the default will change\n")],
                     [stream("stream", name="stderr", text="progress 10/10\n")])
    assert book.printed_warnings(noisy) == [
        (1, "/tmp/x.py:9: UserWarning: Converting a tensor with requires_grad=True"),
        (2, "FutureWarning: the default will change"),
        (3, "progress 10/10"),
    ]


CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3 (ipykernel)
  language: python
---

# A chapter

```{code-cell} ipython3
print("a quiet cell")
```
"""

WARNING_CELL = """
```{code-cell} ipython3
import warnings
warnings.warn("a deliberate warning")
```
"""


@pytest.fixture
def small_book(tmp_path):
    """The real build script, configuration and extensions, with two pages of its own."""
    root = tmp_path / "book"
    # The whole scripts folder: the extensions import the notebook writer from it.
    shutil.copytree(ROOT / "scripts", root / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("_config.yml",):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "_ext", root / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "_assets").symlink_to(ROOT / "_assets")
    (root / "chapters").mkdir()
    shutil.copy(ROOT / "chapters" / "references.bib", root / "chapters" / "references.bib")
    # The real library and data: the build imports lib from the book's folder (an empty lib/ there
    # would shadow the installed one), and the site's explorers read the shipped models.
    (root / "lib").symlink_to(ROOT / "lib")
    (root / "data").symlink_to(ROOT / "data")
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: chapters/quiet\n"
                                   "  - file: chapters/noisy\n")
    (root / "intro.md").write_text("# A small book\n\nOne page of prose.\n")
    (root / "chapters" / "quiet.md").write_text(CHAPTER.replace("# A chapter", "# A quiet chapter"))
    (root / "chapters" / "noisy.md").write_text(CHAPTER)
    return root


def build(root):
    env = {k: v for k, v in os.environ.items() if k != "COURSE_DATA"}
    return subprocess.run([sys.executable, str(root / "scripts" / "book.py"), "build"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_chapter_that_prints_a_warning_fails_the_build(small_book):
    (small_book / "chapters" / "noisy.md").write_text(CHAPTER + WARNING_CELL)
    noisy = build(small_book)
    assert noisy.returncode != 0
    fence = (CHAPTER + WARNING_CELL).splitlines().index("import warnings")   # its 1-based line number
    assert f"chapters/noisy.md:{fence}: " in noisy.stderr, noisy.stderr[-3000:]
    assert "UserWarning: a deliberate warning" in noisy.stderr
    assert "1 chapter output(s) show a warning" in noisy.stderr
    assert "chapters/quiet.md" not in noisy.stderr, "the chapter without a warning is named too"

