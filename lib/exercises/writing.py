"""Checks for exercises in which the learner writes a function.

A write check runs the learner's function on a fixed list of inputs, typical ones first and edge
ones after (a single position, huge scores, a token never seen), and compares each answer with
the library's. Where an answer differs it names the mistake, trying in turn:

1. the known wrong versions of the function (softmax over the wrong axis, no mask, ...): if the
   learner's answer equals one of theirs, the learner gets that mistake's own sentence;
2. invariants any right answer obeys (rows sum to 1, nothing above the diagonal);
3. where the answer differs from the library's, and by how much, but never what it should be.

The learner's code runs under a time limit, and whatever it does (raise, loop, return None, a
string, a ragged list, the wrong shape) becomes one sentence of feedback, never a traceback.
Answers may come back as numpy arrays, torch tensors or nested lists.
"""
from __future__ import annotations

import copy
import dis
import signal
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from lib.exercises import Feedback, NOT_ANSWERED, unanswered
from lib import units

# CPU seconds one call of the learner's function may use at least. Every input is small, so a right
# answer takes milliseconds of CPU. The limit counts CPU, not the clock, so a busy machine (a threaded
# call on a loaded core is slow on the clock, not in CPU) never turns a right answer into a loop; it
# grows to SLOWER_ALLOWED times the CPU the library took for the same input, measured just before, up
# to LONGEST. The clock stops only a function that waits (a sleep, a read that never ends): after
# WALL_FACTOR times the CPU limit.
TIME_LIMIT = 5.0
SLOWER_ALLOWED = 20
LONGEST = 60.0
WALL_FACTOR = 10


class TimeUp(BaseException):
    """Raised into the learner's function when its time is up.

    A BaseException, so that a learner's own `except Exception:` cannot swallow it."""


class Unreadable(Exception):
    """The learner's return value cannot be read as an answer; the message says why."""


@dataclass(frozen=True)
class Case:
    """One input the learner's function is called with.

    `expected` holds the library's answer when it comes from somewhere other than calling the
    check's reference on the same arguments (a model's own cache, say)."""
    args: tuple
    about: str                      # how feedback names this input: "for {about}, ..."
    kwargs: dict = field(default_factory=dict)
    expected: Any = None


@dataclass(frozen=True)
class Mistake:
    """A known wrong version of the function, and what to tell a learner whose answers match it.

    `message` is a sentence, or a function of (case, answer) that builds one from the details
    it sees (which row leaks, which token is missing). For a function that returns several values,
    `part` names the one the mistake shows in, so a learner who also got another part wrong still
    hears about this one."""
    wrong: Callable[..., Any]
    message: str | Callable[[Case, Any], str]
    part: int | None = None

    def says(self, case: Case, answer) -> str:
        return self.message(case, answer) if callable(self.message) else self.message


# --------------------------------------------------------------------------- running the learner
def _timers_usable() -> bool:
    """Timer signals interrupt running Python code, but only in the main thread and not on Windows."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _raise_time_up(signum, frame):
    raise TimeUp()


def call_with_limit(fn: Callable, args: tuple, kwargs: dict, seconds: float):
    """fn(*args, **kwargs), or TimeUp once it has used `seconds` of CPU (or waited WALL_FACTOR times as
    long on the clock).

    In the kernel's main thread timer signals interrupt the function where it is: the process's CPU
    timer (ITIMER_PROF, every thread's CPU) and a clock for a function that waits. A CPU timer already
    running (the grader's limit on a whole cell) is kept: if it runs out first, its own handler fires,
    and afterwards it goes on with what is left. Elsewhere the function runs in a helper thread whose
    own CPU clock is read, and which is abandoned when the time is up: Python cannot stop a thread, so
    a loop that never ends keeps one core busy until the kernel restarts."""
    if _timers_usable():
        return _with_timers(fn, args, kwargs, seconds)
    box: dict[str, Any] = {}

    def target():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as e:  # handed back to the caller's thread below
            box["error"] = e

    worker = threading.Thread(target=target, daemon=True, name="learner-function")
    worker.start()
    started = time.monotonic()
    clock = None
    while worker.is_alive():
        worker.join(0.05)
        try:        # the thread's own CPU clock (one that ended meanwhile has none: the loop ends)
            if clock is None:
                clock = time.pthread_getcpuclockid(worker.ident) if hasattr(time, "pthread_getcpuclockid") else False
            used = time.clock_gettime(clock) if clock else time.monotonic() - started
        except OSError:
            continue
        if worker.is_alive() and (used > seconds or time.monotonic() - started > WALL_FACTOR * seconds):
            raise TimeUp()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _with_timers(fn: Callable, args: tuple, kwargs: dict, seconds: float):
    outer_handler = signal.getsignal(signal.SIGPROF)
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_PROF)
    ours = not outer_left or outer_left > seconds      # else the outer limit comes first: its handler stays
    cpu0 = time.process_time()
    clock_handler = signal.signal(signal.SIGALRM, _raise_time_up)
    signal.setitimer(signal.ITIMER_REAL, WALL_FACTOR * seconds)
    if ours:
        signal.signal(signal.SIGPROF, _raise_time_up)
        signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, clock_handler)
        if ours:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, outer_handler)
            if outer_left:     # the outer limit goes on with what is left of it
                left = outer_left - (time.process_time() - cpu0)
                signal.setitimer(signal.ITIMER_PROF, max(left, 1e-3), outer_interval)


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[:limit - 3] + "..."


def describe_exception(fn: Callable, error: BaseException) -> str:
    """'IndexError in `causal_mask`, at `return m[T]`: index 4 is out of bounds ...'.

    The place is the deepest line of the traceback that lies in the learner's own code (the file
    their function was defined in: a notebook cell), so an error raised inside numpy or torch is
    still located on the learner's line that called it."""
    code = getattr(fn, "__code__", None)
    where = ""
    if code is not None:
        theirs = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == code.co_filename]
        if theirs:
            frame = theirs[-1]
            where = f" in `{frame.name}`" + (f", at `{frame.line.strip()}`" if frame.line else f", line {frame.lineno}")
    detail = _first_line(str(error))
    return f"{type(error).__name__}{where}" + (f": {detail}" if detail else "")


def is_empty_stub(fn: Callable) -> bool:
    """True for a function whose body is only `...` (or `pass`, or a docstring): the stub as handed out.

    Such a body compiles to "return None" and nothing else, whatever the Python version."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_name == "<lambda>":
        return False
    ops = [(i.opname, i.argval) for i in dis.get_instructions(code) if i.opname not in ("RESUME", "NOP", "CACHE")]
    return ops in ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


def _quietly(fn: Callable, args: tuple, kwargs: dict, seconds: float):
    """Call with copies of the inputs (a function that edits its input in place must not change the
    next comparison), numpy's and Python's warnings silenced (they print file paths, not advice)."""
    args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return call_with_limit(fn, args, kwargs, seconds)


# --------------------------------------------------------------------------- reading an answer
def _type_name(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"the string {_first_line(repr(value), 40)}"
    if isinstance(value, np.ndarray):
        return f"a numpy array shaped {value.shape}"
    if hasattr(value, "detach") and hasattr(value, "shape"):
        return f"a torch tensor shaped {tuple(value.shape)}"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def read_array(value, shape_like: np.ndarray | None = None) -> np.ndarray:
    """A numpy array of floats (or booleans) from a numpy array, a torch tensor, a nested list or a
    number; `Unreadable` with the reason otherwise."""
    if value is None:
        raise Unreadable("your function returned None: is a `return` missing?")
    if isinstance(value, (str, bytes, dict, set)) or callable(value):
        raise Unreadable(f"your function returned {_type_name(value)}; the task asks for an array of numbers")
    if hasattr(value, "detach") and hasattr(value, "cpu"):      # a torch tensor, without importing torch
        value = value.detach().cpu()
        value = value.numpy() if str(value.dtype) != "torch.bfloat16" else value.float().numpy()
    try:
        array = np.asarray(value)
    except ValueError:
        raise Unreadable("your function returned a nested list whose rows have different lengths") from None
    if array.dtype == object:
        try:
            array = array.astype(float)
        except OverflowError:
            raise Unreadable("your function returned a number too large for a float (above 1e308)") from None
        except (TypeError, ValueError):
            raise Unreadable("your function returned a list that holds something other than numbers "
                             "(or rows of different lengths)") from None
    if array.dtype.kind == "c":
        raise Unreadable("your function returned complex numbers; the answer is real")
    if array.dtype.kind not in "biuf":
        raise Unreadable(f"your function returned an array of {array.dtype} values; the task asks for numbers")
    return array if array.dtype == bool else array.astype(float)


def read_like(value, like):
    """Read the learner's value in the shape of the library's answer `like`: an array, a tuple of
    answers, a word, a list of words or a number."""
    if isinstance(like, tuple):
        if isinstance(value, np.ndarray) or not isinstance(value, (tuple, list)) or len(value) != len(like):
            raise Unreadable(f"your function returned {_type_name(value)}; it should return {len(like)} values "
                             f"(as a tuple)")
        return tuple(read_like(v, l) for v, l in zip(value, like))
    if isinstance(like, str):
        if not isinstance(value, str):
            raise Unreadable(f"your function returned {_type_name(value)}; it should return one word, as a string")
        return value
    if isinstance(like, list) and all(isinstance(w, str) for w in like):
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise Unreadable(f"your function returned {_type_name(value)}; it should return a list of words")
        if not all(isinstance(w, str) for w in value):
            raise Unreadable("your function returned a list with something other than words in it")
        return list(value)
    if isinstance(like, (int, float, np.number)) and not isinstance(like, (bool, np.bool_)):
        if isinstance(value, (bool, str)) or value is None:
            raise Unreadable(f"your function returned {_type_name(value) if value is not None else 'None'}; "
                             f"it should return a number")
        try:
            number = float(np.asarray(read_array(value)).reshape(()))
        except ValueError:
            raise Unreadable("your function returned several numbers; it should return one") from None
        return number
    return read_array(value)


# --------------------------------------------------------------------------- comparing answers
def same(a, b, rtol: float = 1e-5, atol: float = 1e-7) -> bool:
    """Equal answers: arrays of the same shape and close values (NaN where the other has NaN),
    tuples part by part, words and lists exactly, numbers closely."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and \
            all(same(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, (str, list)) or isinstance(b, (str, list)):
        return a == b
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype == bool or b.dtype == bool:
        return bool(np.array_equal(a.astype(bool), b.astype(bool))) and \
            set(np.unique(a.astype(float))) <= {0.0, 1.0} and set(np.unique(b.astype(float))) <= {0.0, 1.0}
    return bool(np.allclose(a.astype(float), b.astype(float), rtol=rtol, atol=atol, equal_nan=True))


def _same_shapes(got, want) -> bool:
    """Arrays of the same shapes (part by part for tuples); anything else counts as alike here."""
    if isinstance(want, tuple):
        return all(_same_shapes(g, w) for g, w in zip(got, want))
    if isinstance(want, np.ndarray):
        return np.shape(got) == want.shape
    return True


def where_different(got, want, rtol: float = 1e-5, atol: float = 1e-7) -> str:
    """Where the learner's answer differs from the library's, without saying what it should be."""
    if isinstance(want, tuple):
        for i, (g, w) in enumerate(zip(got, want)):
            if not same(g, w, rtol, atol):
                return f"value {i + 1} of the {len(want)} you return: " + where_different(g, w, rtol, atol)
        return "the values differ"
    if isinstance(want, str):
        return f"your function returns {got!r}, which is not the answer"
    if isinstance(want, list):
        if sorted(got) == sorted(want):
            return "the right words, in the wrong order"
        return f"your list {got!r} is not the answer"
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return f"your answer is shaped {tuple(g.shape)}; it should be shaped {tuple(w.shape)}"
    if w.ndim == 0:
        direction = "too high" if float(g) > float(w) else "too low"
        return f"{float(g):.6g} is {direction}"
    g, w = g.astype(float), w.astype(float)
    bad_nan = np.isnan(g) & ~np.isnan(w)
    if bad_nan.any():
        return f"your answer holds NaN (not a number) at {_index(np.argwhere(bad_nan)[0])}"
    bad_inf = np.isinf(g) & ~np.isinf(w)
    if bad_inf.any():
        return f"your answer holds an infinity at {_index(np.argwhere(bad_inf)[0])}"
    with np.errstate(all="ignore"):
        gap = np.where(np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True), 0.0, np.abs(g - w))
    gap = np.nan_to_num(gap, nan=np.inf)
    worst = np.unravel_index(int(np.argmax(gap)), gap.shape)
    return f"the largest difference from the library's answer is {gap[worst]:.3g}, at {_index(worst)}"


def _index(idx) -> str:
    idx = tuple(int(i) for i in idx)
    if len(idx) == 1:
        return f"position {idx[0]}"
    if len(idx) == 2:
        return f"row {idx[0]}, column {idx[1]}"
    return f"index {idx}"


# --------------------------------------------------------------------------- the check
Invariant = Callable[[Case, Any], "str | None"]


@dataclass(frozen=True)
class WriteCheck:
    """Everything needed to judge one function a learner writes.

    `reference` is the library's answer, called like the learner's function; `cases` builds the
    inputs (lazily: some need a model); `read` turns the learner's return value into something
    comparable with the reference (by default: in the reference's own shape and type)."""
    name: str
    cases: Callable[[], Sequence[Case]]
    reference: Callable[..., Any] | None = None
    mistakes: Sequence[Mistake] = ()
    invariants: Sequence[Invariant] = ()
    read: Callable[[Any, Any], Any] = read_like
    rtol: float = 1e-5
    atol: float = 1e-7

    def __post_init__(self):
        # Defined is registered: the tests iterate the registry, so a new check cannot be left untested.
        _REGISTERED[self.name] = self

    def __call__(self, fn) -> Feedback:
        return check_function(fn, self)


_REGISTERED: dict[str, WriteCheck] = {}


def write_checks() -> dict[str, WriteCheck]:
    """Every write check of the course, by the name of the function the learner writes (each
    chapter's check module is imported, so each registers the checks it defines)."""
    units.load("checks")
    return dict(sorted(_REGISTERED.items()))


def check_function(fn, spec: WriteCheck, time_limit: float | None = None) -> Feedback:
    """Run the learner's `fn` on every case of `spec`; the first case it gets wrong decides the verdict."""
    return _verdict(fn, spec, time_limit, every=False)[0]


def case_results(fn, spec: WriteCheck, time_limit: float | None = None) -> tuple[Feedback, list[bool]]:
    """The verdict `check_function` gives, and which of the cases the function gets right: every case
    is judged, not only those up to the first wrong one (a grader's partial credit). After a case that
    ran out of time the rest are not run (counted wrong): one loop costs one time limit."""
    return _verdict(fn, spec, time_limit, every=True)


def _verdict(fn, spec: WriteCheck, time_limit: float | None, every: bool) -> tuple[Feedback, list[bool]]:
    if unanswered(fn) or (callable(fn) and is_empty_stub(fn)):
        return Feedback(False, NOT_ANSWERED if not callable(fn) else
                        f"write the body of `{spec.name}` in place of the ..., then run the cell again.",
                        answered=False), []
    if not callable(fn):
        return Feedback(False, f"the answer should be a function (write `def {spec.name}(...):`); "
                               f"got {_type_name(fn)}."), []
    seconds = TIME_LIMIT if time_limit is None else time_limit
    cases = list(spec.cases())
    right, first = [], None
    for case in cases:
        if first is not None and (not every or first[1].startswith(DID_NOT_FINISH)):
            right.append(False)
            continue
        verdict = _judge(fn, spec, case, seconds)
        right.append(verdict is None)
        if verdict is not None and first is None:
            first = (case, verdict)
    if first is not None:
        return Feedback(False, f"for {first[0].about}, {first[1]}"), right
    return Feedback(True, f"`{spec.name}` agrees with the library on all {len(cases)} inputs, "
                          f"including {cases[-1].about}."), right


DID_NOT_FINISH = "your function did not finish within"


def _judge(fn, spec: WriteCheck, case: Case, seconds: float) -> str | None:
    """None if the learner's answer for `case` is right, else the sentence that says what is wrong."""
    started = time.process_time()
    want = case.expected if spec.reference is None else \
        spec.reference(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
    seconds = min(max(seconds, SLOWER_ALLOWED * (time.process_time() - started)), max(seconds, LONGEST))
    try:
        raw = _quietly(fn, case.args, case.kwargs, seconds)
    except TimeUp:
        return (f"{DID_NOT_FINISH} {seconds:.3g} s of CPU: look for a loop that never ends "
                f"(or work that grows much faster than the input).")
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the learner's code failed: say how, in one line
        return f"your function raised {describe_exception(fn, e)}."
    try:
        got = spec.read(raw, want)
    except Unreadable as e:
        return f"{e}."
    if same(got, want, spec.rtol, spec.atol):
        return None
    for mistake in spec.mistakes:
        try:
            wrong = spec.read(_quietly(mistake.wrong, case.args, case.kwargs, seconds), want)
        except (Exception, TimeUp):   # a wrong version that fails on this input cannot match it
            continue
        if mistake.part is not None:
            got_part, wrong = got[mistake.part], wrong[mistake.part]
        else:
            got_part = got
        if same(got_part, wrong, spec.rtol, spec.atol):
            return mistake.says(case, got)
    if not _same_shapes(got, want):
        return where_different(got, want, spec.rtol, spec.atol) + "."
    for invariant in spec.invariants:
        message = invariant(case, got)
        if message:
            return message
    return where_different(got, want, spec.rtol, spec.atol) + "."


# --------------------------------------------------------------------------- shared invariants
def rows_sum_to_one(what: str = "rows") -> Invariant:
    """Probabilities along the last axis must add up to 1."""
    def invariant(case: Case, got) -> str | None:
        g = got[0] if isinstance(got, tuple) else got
        g = np.asarray(g, dtype=float)
        if g.ndim == 0:
            return None
        sums = g.sum(-1)
        if not np.allclose(sums, 1.0, atol=1e-6):
            bad = int(np.argmax(np.abs(np.nan_to_num(sums - 1.0, nan=np.inf)).reshape(-1)))
            return f"the {what} should sum to 1, and one sums to {np.ravel(sums)[bad]:.4g}."
        if (g < -1e-12).any():
            return "probabilities cannot be negative, and yours has some."
        return None
    return invariant


def first_future_cell(pattern: np.ndarray) -> tuple[int, int] | None:
    """(row, column) of the first cell above the diagonal that is not zero, or None."""
    p = np.asarray(pattern, dtype=float)
    rows, cols = np.nonzero(np.triu(np.nan_to_num(p, nan=1.0) != 0, k=1))
    return (int(rows[0]), int(cols[0])) if len(rows) else None

