"""Write checks: each one accepts a right function written the way a learner would, names the
specific mistake of typical wrong ones, and turns garbage (not a function, a function that raises,
loops, returns None, a string, the wrong shape, huge numbers) into one clear sentence."""
import importlib
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from lib.exercises import Feedback, writing
from lib.chapters.part1.one_head import checks as one_head
from lib.chapters.part3.results_page import checks as results_page
from lib.chapters.part1.shapes_and_cache import checks as shapes_and_cache
# Two right functions the tests below hand in too.
from tests.chapters.part1.one_head.test_checks import causal_mask
from tests.chapters.part1.shapes_and_cache.test_checks import kv_cache_size


# ------------------------------------------------------------------ every chapter's write checks
# The test file of each chapter's checks, tests/chapters/PART/UNIT/test_checks.py, holds its write checks in
# WRITE_CHECKS: name -> (the check, a right function written as a learner would, [(a typical wrong function,
# words its diagnosis must contain), ...]). They are gathered here by importing each file as the module
# pytest collects (tests.chapters.PART.UNIT.test_checks), so no test runs twice.
CHAPTER_TESTS = Path(__file__).resolve().parent.parent / "chapters"


def _chapters_write_checks():
    merged, found_in = {}, {}
    for path in sorted(CHAPTER_TESTS.glob("part*/*/test_checks.py")):
        part, unit_name = path.parent.parent.name, path.parent.name
        module = importlib.import_module(f"tests.chapters.{part}.{unit_name}.{path.stem}")
        for name, row in getattr(module, "WRITE_CHECKS", {}).items():
            if name in merged:
                raise AssertionError(f"the write check {name!r} is in the WRITE_CHECKS of both "
                                     f"{found_in[name]} and {module.__name__}: keep it in one")
            # A chapter's file holds its own unit's checks (lib/chapters/PART/UNIT/checks.py).
            unit = f"lib.chapters.{part}.{unit_name}.checks"
            if getattr(sys.modules.get(unit), name, None) is not row[0]:
                raise AssertionError(f"{module.__name__}'s WRITE_CHECKS holds {name!r}, which {unit} does not "
                                     f"define: it belongs in its own chapter's test file")
            merged[name], found_in[name] = row, module.__name__
    return merged


CHECKS = _chapters_write_checks()


# Every check the library defines (its registry), not a list kept here: a new write check without a
# right solution and typical mistakes in its chapter's WRITE_CHECKS fails below.
REGISTERED = sorted(writing.write_checks())


def solutions(name):
    assert name in CHECKS, (f"the write check {name!r} has no right solution and typical mistakes in the WRITE_CHECKS "
                             f"of its chapter's test file (tests/chapters/PART/UNIT/test_checks.py)")
    check, right, wrongs = CHECKS[name]
    assert check is writing.write_checks()[name]
    return check, right, wrongs


def test_the_table_holds_no_check_the_library_lacks():
    assert sorted(CHECKS) == REGISTERED


@pytest.mark.parametrize("name", REGISTERED)
def test_a_right_function_is_correct(name):
    check, right, _ = solutions(name)
    fb = check(right)
    assert isinstance(fb, Feedback) and fb.ok, fb


@pytest.mark.parametrize("name", REGISTERED)
def test_typical_mistakes_get_their_own_diagnosis(name):
    check, _, wrongs = solutions(name)
    assert len(wrongs) >= 2
    for wrong, diagnosis in wrongs:
        fb = check(wrong)
        assert not fb and fb.answered, fb
        assert diagnosis in fb.message, (diagnosis, fb.message)


@pytest.mark.parametrize("name", REGISTERED)
def test_every_known_mistake_is_named_as_itself(name):
    """Each wrong version in a check's table, handed in as the learner's function, gets its own
    sentence: no earlier mistake, and no case where two mistakes agree, hides it."""
    check = solutions(name)[0]
    for mistake in check.mistakes:
        fb = check(mistake.wrong)
        assert not fb and fb.answered, (mistake, fb)
        if isinstance(mistake.message, str):
            assert mistake.message in fb.message, (mistake.message, fb.message)


def _loops(*args, **kwargs):
    while True:
        pass


def _loops_and_swallows(*args, **kwargs):
    try:
        while True:
            pass
    except Exception:
        return None


def _raises(*args, **kwargs):
    row = [1, 2, 3]
    return row[10]


def _exits(*args, **kwargs):
    raise SystemExit(3)


def _stub(*args, **kwargs):
    ...


def _stub_with_docstring(x, y=2):
    """What the function should do."""
    ...   # your code


GARBAGE_ANSWERS = [(None, "replace the ..."), (..., "replace the ..."), ("abc", "should be a function"),
                   (np.array([1.0, 2.0]), "should be a function"), (10 ** 400, "should be a function"),
                   (1e308, "should be a function"), (_stub, "write the body"),
                   (_stub_with_docstring, "write the body")]
GARBAGE_FUNCTIONS = [
    (_raises, "raised IndexError in `_raises`, at `return row[10]`: list index out of range"),
    (_loops, "did not finish within"),
    (_loops_and_swallows, "did not finish within"),
    (_exits, "raised SystemExit"),
    (lambda *a, **k: None, "returned None"),
    (lambda *a, **k: "abc", ""),
    (lambda *a, **k: np.zeros((7, 7, 7)), ""),
    (lambda *a, **k: [[1.0, 2.0], [3.0]], ""),
    (lambda *a, **k: 1e308, ""),
    (lambda *a, **k: 10 ** 400, ""),
    (lambda *a, **k: float("nan"), ""),
    (lambda *a, **k: torch.full((3, 3), float("inf"), requires_grad=True), ""),
    (lambda: 1, "raised TypeError"),
    (lambda *a, **k: (x for x in range(3)), ""),
]


@pytest.mark.parametrize("name", REGISTERED)
def test_garbage_gets_a_clear_verdict(name, monkeypatch):
    # A loop that never ends costs the time limit once per check; a short one keeps the suite quick.
    monkeypatch.setattr(writing, "TIME_LIMIT", 1.0)
    check = solutions(name)[0]
    for answer, words in GARBAGE_ANSWERS + GARBAGE_FUNCTIONS:
        fb = check(answer)
        assert isinstance(fb, Feedback) and not fb.ok, (answer, fb)
        assert words in fb.message, (answer, fb.message)
        assert "Traceback" not in fb.message and "\n" not in fb.message and len(fb.message) < 400, fb.message


def test_a_function_that_edits_its_input_is_judged_on_its_answer():
    def edits(logits, temperature):
        logits /= temperature          # in place: the check's own copy of the input must not change
        return torch.softmax(logits, -1)
    assert results_page.softmax_with_temperature(edits)


def _burn(seconds):
    """Use `seconds` of CPU."""
    import time
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_the_time_limit_grows_with_the_cpu_the_library_takes(monkeypatch):
    # On a slow machine the library's own answer takes more CPU too; a right function as slow as it
    # must not be called a loop.
    slow = writing.WriteCheck(name="slow", cases=lambda: [writing.Case((0.2,), "a slow input")],
                              reference=lambda s: _burn(s) or 1.0)
    monkeypatch.setattr(writing, "TIME_LIMIT", 0.5)
    assert slow(lambda s: _burn(2 * s) or 1.0)
    fb = slow(_loops)
    limit = re.search(r"did not finish within ([\d.]+) s of CPU", fb.message)
    assert limit and 4.0 <= float(limit[1]) < 10, fb


@pytest.mark.parametrize("thread", ["main", "helper"])
def test_the_time_limit_counts_cpu_not_the_clock(monkeypatch, thread):
    """A right function that a busy machine holds back (here it waits 1.5 s, using no CPU, against a
    limit of 0.3 s of CPU) is judged on its answer, in the kernel's main thread and in a helper thread;
    one that waits for ever is stopped by the clock, at ten times the limit. With a clock for the limit
    (as before), the first came back "did not finish"."""
    import time
    monkeypatch.setattr(writing, "TIME_LIMIT", 0.3)
    check = writing.WriteCheck(name="double", cases=lambda: [writing.Case((2.0,), "two")], reference=lambda x: 2 * x)
    held_back = lambda x: time.sleep(1.5) or 2 * x                          # noqa: E731
    done = threading.Event()
    waits = lambda x: done.wait(60) and 0.0                                 # noqa: E731
    box = {}

    def judge():
        box["held_back"] = check(held_back)
        start = time.monotonic()
        box["waits"] = check(waits)
        box["stopped_after"] = time.monotonic() - start

    worker = threading.Thread(target=judge) if thread == "helper" else None
    try:
        judge() if worker is None else (worker.start(), worker.join(30))
    finally:
        done.set()
    assert box["held_back"].ok, box["held_back"]
    assert not box["waits"].ok and "did not finish within 0.3 s of CPU" in box["waits"].message
    assert 2.5 <= box["stopped_after"] < 10


def test_the_time_limit_holds_outside_the_main_thread(monkeypatch):
    monkeypatch.setattr(writing, "TIME_LIMIT", 1.0)
    # Signals only reach the main thread; elsewhere the learner's function runs in a helper thread, which
    # is abandoned when the time is up. Python cannot stop it, so this loop ends when the test is done:
    # a never-ending one would spin in this test process for the rest of the run (this file alone took
    # 297 CPU-s with it, 57 without, and every later test in the same process was slower).
    done = threading.Event()

    def loops_until_the_test_ends(*args, **kwargs):
        while not done.is_set():
            pass

    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("fb", one_head.causal_mask(loops_until_the_test_ends)))
    try:
        worker.start()
        worker.join(10)
        assert not worker.is_alive() and "did not finish" in box["fb"].message
    finally:
        done.set()
    abandoned = [t for t in threading.enumerate() if t.name == "learner-function"]
    for t in abandoned:
        t.join(5)
    assert abandoned and not any(t.is_alive() for t in abandoned)


def test_the_time_limit_leaves_no_alarm_behind(monkeypatch):
    monkeypatch.setattr(writing, "TIME_LIMIT", 1.0)
    import signal
    before = signal.getsignal(signal.SIGALRM), signal.getsignal(signal.SIGPROF)
    one_head.causal_mask(_loops)
    one_head.causal_mask(causal_mask)
    assert (signal.getsignal(signal.SIGALRM), signal.getsignal(signal.SIGPROF)) == before
    assert signal.getitimer(signal.ITIMER_REAL) == signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_a_cpu_limit_already_running_goes_on(monkeypatch):
    """The grader limits a whole cell's CPU with the same timer (ITIMER_PROF); a check inside the cell
    keeps it: the cell's limit goes on with what is left after the check, and fires first if it is
    the shorter."""
    import signal
    import time
    monkeypatch.setattr(writing, "TIME_LIMIT", 5.0)
    fired = []

    def outer(signum, frame):
        fired.append(time.process_time())
        raise KeyboardInterrupt

    double = writing.WriteCheck(name="double", cases=lambda: [writing.Case((2.0,), "two")], reference=lambda x: 2 * x)
    previous = signal.signal(signal.SIGPROF, outer)
    try:
        for cell_limit in (0.5, 30.0):      # the cell's limit shorter than the check's, then longer
            signal.setitimer(signal.ITIMER_PROF, cell_limit)
            assert double(lambda x: _burn(0.2) or 2 * x)
            left = signal.getitimer(signal.ITIMER_PROF)[0]
            assert 0 < left < cell_limit - 0.1 and signal.getsignal(signal.SIGPROF) is outer, (cell_limit, left)
        signal.setitimer(signal.ITIMER_PROF, 0.3)
        with pytest.raises(KeyboardInterrupt):
            double(_loops)
        assert fired
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def test_feedback_never_shows_the_library_answer():
    # A wrong mask's message names the cell it sees wrong, never the whole right mask.
    fb = one_head.causal_mask(lambda T: torch.ones(T, T))
    assert "True," not in fb.message and "[[" not in fb.message
    fb = shapes_and_cache.kv_cache_size(lambda *a: 12345)
    right = kv_cache_size(3, 5, 14, 7, 11, 1)
    assert f"{right}" not in fb.message and f"{right:,}" not in fb.message and "too high" in fb.message


def test_the_write_check_runs_in_a_real_kernel():
    """In a Jupyter kernel a loop that never ends is stopped by the time limit, an error is located
    on the learner's line, and neither prints a traceback."""
    import nbformat
    from nbclient import NotebookClient

    cells = ["from lib.exercises import one_head as check\nfrom lib.exercises import writing\nwriting.TIME_LIMIT = 1.0",
             "def causal_mask(T):\n    ...\n\ncheck.causal_mask(causal_mask)",
             "def causal_mask(T):\n    while True:\n        pass\n\ncheck.causal_mask(causal_mask)",
             "def causal_mask(T):\n    m = [[j <= i for j in range(T)] for i in range(T)]\n    return m[T]\n\n"
             "check.causal_mask(causal_mask)",
             "import numpy as np\ndef causal_mask(T):\n    return np.tril(np.ones((T, T), dtype=bool))\n\n"
             "check.causal_mask(causal_mask)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    shown = [" ".join(o.get("data", {}).get("text/html", "") for o in c.outputs) for c in nb.cells[1:]]
    assert 'data-verdict="not answered"' in shown[0]
    assert 'data-verdict="not yet"' in shown[1] and re.search(r"did not finish within [\d.]+ s", shown[1])
    assert "IndexError in `causal_mask`, at `return m[T]`" in shown[2]
    assert 'data-verdict="correct"' in shown[3]
    assert not any(o.output_type == "error" or o.get("name") == "stderr" for c in nb.cells for o in c.outputs)


# ------------------------------------------------------------------ every other check survives garbage too
def _answer_checks():
    """Every self-check that takes a learner's value (a parameter named answer, or tool)."""
    import inspect

    from lib import chapters
    for module in chapters.load("checks"):
        info = module.__name__.rsplit(".", 2)[1]
        for name, fn in sorted(vars(module).items()):
            if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_"):
                params = list(inspect.signature(fn).parameters)
                if "answer" in params or "tool" in params:
                    yield f"{info}.{name}", fn


ANSWER_CHECKS = dict(_answer_checks())


def _own_examples() -> dict[str, str]:
    from lib.exercises.site import registry
    return {f"{t.module}.{t.check}": t.own_example for t in registry().values() if t.own}


OWN_EXAMPLES = _own_examples()
GARBAGE_VALUES = [np.array([0.5, 0.25]), np.array(0.3), np.float64("nan"), 10 ** 400, 1e308, -1e308,
                  float("inf"), "abc", "", torch.tensor([1.0, 2.0]), [1, 2], {"a": 1}, True, object(),
                  lambda *a: 1 / 0]


@pytest.mark.parametrize("name", sorted(ANSWER_CHECKS))
def test_every_value_check_survives_garbage(name):
    from lib.model.store import load

    fn = ANSWER_CHECKS[name]
    models = {"lm": load("hand-wired" if name.startswith("hand_wired.") else "calling-game"),
              "zl": load("zero-layer")}
    params = [p for p in __import__("inspect").signature(fn).parameters]
    # A check of the learner's own text (or word) takes it first: garbage answers about its declared example.
    own = OWN_EXAMPLES.get(name)
    for garbage in GARBAGE_VALUES:
        args = [own] if own is not None else [models[p] for p in params if p in models]
        fb = fn(*args, garbage)
        assert isinstance(fb, Feedback), (garbage, fb)
        assert not fb.ok and fb.answered, (garbage, fb)
        assert "Traceback" not in fb.message and "\n" not in fb.message and len(fb.message) < 400, fb.message


def test_there_are_value_checks_to_test():
    assert len(ANSWER_CHECKS) >= 40
