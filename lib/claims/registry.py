"""The registry of claims: every conclusion a chapter states, as code.

A claim is registered once, where its measurement is defined, with the `claim` decorator, in the
`claims.py` of its chapter's unit (`lib/chapters/PART/UNIT/claims.py`, see `lib.chapters`):

    @claim("real-language.analogies-vs-baselines", "real-language",
           "The offset method gets {offset} of {n}, more than the best baseline ({best_baseline})",
           words={"more than the best baseline": Q("offset") > Q("best_baseline")}, scope=NO_RUN)
    def _(seed):
        return {"offset": ..., "n": ..., "best_baseline": ...}

- `statement` is the sentence as the page prints it, a `str.format` template whose fields are the
  measurement's numbers (a format spec such as `{share:.0%}` applies to each number).
- `measure(seed) -> dict` returns the numbers. `seed` is the prompt-set seed (or the seed of the
  sampled rounds) that the measurement draws its evidence with. A claim about something fixed (a
  word list, the shipped weights read without sampling) says `seeded=False` and ignores the seed. A
  measurement that looks for a role (a head, a component) and does not find it raises `Absent` with
  the reason: the claim is then a measured "no" on that run, never a crash.
- `words` maps each comparison the statement makes, in its own words, to the checks that phrase means
  on the named numbers (`lib.claims.words`); the claim holds when every phrase's checks do.

A page prints a this-run claim with the numbers of the first of its seeds (`PAGE_SEEDS`), so that
numbers that go together are never split into separate ranges, and stops unless it holds on every one
of them; an every-run claim, over the panel of shipped training runs (`lib.claims.panel`).
`python -m lib claims` measures every claim again on any seeds, and says on which it holds.

Nothing lists the claims by hand: the first time they are asked for, the registry imports the
`claims` module of every chapter unit (`lib.units.load`), and lists them in the order of the
book's table of contents (`_toc.yml`), each chapter's in the order its module registers them.
"""
from __future__ import annotations

import functools
import math
import numbers
import re
import string
from dataclasses import dataclass, field
from typing import Callable, Iterable

from lib import units
from lib import kept
from lib.claims.words import as_checks, failing
from lib.errors import CourseError, require

# The prompt-set seeds the pages print their claims over.
PAGE_SEEDS = (0, 1, 2)

# What a claim is about (its scope):
# - EVERY_RUN: a lesson about the recipe. It is measured on every run of the panel of shipped training runs
#   of the models it names (`models`, `lib.claims.panel`), and its statement says on how many it holds ("on
#   every one of the 20 runs" only when it holds on all of them, else "on 17 of the 20 runs", and what the
#   others do); a head or component it speaks of is found by its measured role, never by name.
# - THIS_RUN: a fact about the shipped run (the one the pages draw), which another training run may not
#   repeat; the page says so in words a reader cannot miss ("in this trained model"). A pretrained
#   model's claims (MiniLM, SmolLM2) are facts about its one run too, with no other run shipped
#   (`models` empty): the chapters say whose weights they read.
# - NO_RUN: depends on no trained weights (the game's rules, arithmetic, a word list): there is no run
#   to measure it on.
EVERY_RUN, THIS_RUN, NO_RUN = "every run", "this run", "no run"
SCOPES = (EVERY_RUN, THIS_RUN, NO_RUN)


# The number a measurement returns, in place of its numbers, when the role it looks for is not there.
ABSENT = "absent"


class Absent(CourseError):
    """Raised by a measurement that looks for a role (a head, a component) on a run and does not find it:
    the claim is a measured "no" there, with this reason, not a crash."""


@dataclass(frozen=True)
class Claim:
    id: str
    chapter: str                              # the chapter's file name without .md, e.g. "real-language"
    statement: str                            # a template filled from the numbers
    measure: Callable[[int], dict]            # seed -> {name: number or text}
    words: dict                               # {phrase of the statement: (checks it means, ...)}
    seeded: bool = True                       # False: the numbers do not depend on the seed
    note: str = ""                            # what is measured, how, over what (for the command's listing)
    scope: str = THIS_RUN                     # EVERY_RUN, THIS_RUN or NO_RUN (above)
    models: tuple[str, ...] = ()              # the trained models whose runs the measurement reads
    others: str = ""                          # an every-run claim: what the runs where it fails do (`panel`)
    setup: tuple[str, ...] = ()               # phrases that describe the measurement, not a comparison

    def failing(self, numbers: dict) -> list[tuple[str, str]]:
        """The phrases of the statement that `numbers` do not bear out: (phrase, why)."""
        if ABSENT in numbers:
            return [("", str(numbers[ABSENT]))]
        return failing(self.words, numbers)

    def holds(self, numbers: dict) -> bool:
        return not self.failing(numbers)


REGISTRY: dict[str, Claim] = {}
_CACHE: dict[tuple[str, int], dict] = {}


def claim(id: str, chapter: str, statement: str, *, words: dict, scope: str, models: Iterable[str] = (),
          seeded: bool = True, note: str = "", one_thread: bool = False, others: str = "", setup: Iterable[str] = ()):
    """Register the decorated function as the measurement of a claim; returns it unchanged.

    `words` maps each comparison the statement makes (a phrase of it, word for word) to the checks it
    means on the measurement's numbers (`lib.claims.words`). `scope` says what the claim is about
    (EVERY_RUN, THIS_RUN or NO_RUN) and `models` which trained models' runs its measurement reads
    (`lib.load(name)`): an every-run claim names at least one, a no-run claim none. `others` (every-run
    claims) is what the page says of the runs on which the claim does not hold, a template filled from
    those runs' numbers. `setup` lists phrases of the statement (or of `others`) whose words describe how the
    measurement is made ("with every head zeroed", "the same prompts"), not a comparison it finds: no number
    in them, so that nothing measured hides there. With `one_thread`, torch runs on one thread while the claim is measured: for
    the course's tiny models on a busy 2-core machine, the second thread costs far more in waiting
    than it gains."""
    models = tuple(models)
    require(scope in SCOPES, f"claim {id!r}: scope must be one of {', '.join(map(repr, SCOPES))}, got {scope!r}")
    require(scope != EVERY_RUN or models, f"claim {id!r} is about every run but names no model whose runs it reads")
    require(scope != NO_RUN or not models, f"claim {id!r} depends on no run but names models {models}")
    require(isinstance(words, dict), f"claim {id!r}: words must be a dict of phrases and checks")
    checks = {phrase: as_checks(c) for phrase, c in words.items()}
    for phrase in checks:
        require(phrase in statement, f"claim {id!r}: the phrase {phrase!r} is not in its statement")
    setup = tuple(setup)
    for phrase in setup:
        require(phrase in statement or phrase in others, f"claim {id!r}: the setup phrase {phrase!r} is not in its "
                                                         "statement")
        require("{" not in phrase, f"claim {id!r}: a setup phrase holds no number, and {phrase!r} does")

    def register(measure):
        require(id not in REGISTRY, f"claim {id!r} is registered twice")
        # A lesson about the recipe is measured on one thread wherever it is measured (the panel, the page, the
        # tests), so that its sums are taken in one order and its numbers agree to the last digits.
        run = _on_one_thread(measure) if one_thread or scope == EVERY_RUN else measure
        REGISTRY[id] = Claim(id, chapter, statement, _finding(run), checks, seeded,
                             note or (measure.__doc__ or "").strip(), scope, models, others, setup)
        return measure
    return register


def _finding(measure):
    """The measurement, with a role it does not find (`Absent`) as its numbers: {ABSENT: the reason}."""
    @functools.wraps(measure)
    def finding(seed):
        try:
            return measure(seed)
        except Absent as e:
            return {ABSENT: str(e)}
    return finding


def _on_one_thread(measure):
    @functools.wraps(measure)
    def on_one_thread(seed):
        # torch is imported here, not at the top: every page that glues a claim imports the registry.
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return measure(seed)
        finally:
            torch.set_num_threads(threads)
    return on_one_thread


def get(id: str) -> Claim:
    _load()
    require(id in REGISTRY, f"unknown claim {id!r}; the claims are listed by `python -m lib claims --list`")
    return REGISTRY[id]


def claims(chapter: str | None = None) -> list[Claim]:
    """Every registered claim (of one chapter), in the book's order: by chapter as the table of
    contents lists them, and within a chapter in the order they were registered."""
    _load()
    place = _book_order()
    found = sorted((c for c in REGISTRY.values() if chapter is None or c.chapter == chapter),
                   key=lambda c: place.get(c.chapter, len(place)))
    if chapter is not None and not found:
        raise CourseError(f"no claims for chapter {chapter!r}; chapters with claims: {', '.join(chapters())}")
    return found


def chapters() -> list[str]:
    """The chapters with claims, in the book's order."""
    return list(dict.fromkeys(c.chapter for c in claims()))


def measure(id: str, seed: int = 0) -> dict:
    """The claim's numbers on one seed: measured once per process, and on the shipped runs kept on disk
    (`lib.kept`), so the book's build, the tests, the grader and the command line measure it once
    between them. Numbers that are not plain JSON are measured in each process."""
    c = get(id)
    seed = seed if c.seeded else 0
    if (id, seed) not in _CACHE:
        key = kept.shipped_key(f"claim-{id}-{seed}")
        got = kept.read(key) if key is not None else None
        if got is not None and "value" in got:
            _CACHE[id, seed] = got["value"]
        else:
            numbers_ = dict(c.measure(seed))
            if key is not None and kept.is_plain(numbers_):
                numbers_ = kept.plain(numbers_)
                kept.write(key, {"value": numbers_})
            _CACHE[id, seed] = numbers_
    return _CACHE[id, seed]


def holds(id: str, seed: int = 0) -> bool:
    return bool(get(id).holds(measure(id, seed)))


def why_not(id: str, seed: int = 0) -> list[tuple[str, str]]:
    """The phrases of the claim's statement that its numbers on `seed` do not bear out: (phrase, why)."""
    return get(id).failing(measure(id, seed))


@dataclass(frozen=True)
class Span:
    """One number over several seeds: its lowest and highest value."""
    lo: float
    hi: float
    values: tuple = field(default=())

    def __format__(self, spec: str) -> str:
        # "max:.2f" and "min:.2f" give the highest or the lowest value alone: a bound ("to within 2e-07").
        if spec.startswith(("max:", "min:")):
            return format(self.hi if spec.startswith("max:") else self.lo, spec[4:])
        lo, hi = format(self.lo, spec), format(self.hi, spec)
        return lo if lo == hi else f"{lo} to {hi}"


def spans(per_seed: list[dict]) -> dict:
    """Each number over several measurements (seeds, runs): a `Span` for numbers, the common value
    for text (text that differs between them is joined with ' / ')."""
    out = {}
    for key in per_seed[0]:
        vals = [m[key] for m in per_seed]
        if all(isinstance(v, numbers.Real) and not isinstance(v, bool) and type(v).__name__ != "bool_"
               for v in vals):
            vals = [float(v) if not isinstance(v, numbers.Integral) else int(v) for v in vals]
            out[key] = Span(min(vals), max(vals), tuple(vals))
        else:
            distinct = list(dict.fromkeys(str(v) for v in vals))
            out[key] = " / ".join(distinct)
    return out


def numbers_over(id: str, seeds: Iterable[int] = PAGE_SEEDS) -> dict:
    """Each number of the claim over `seeds` on the shipped run (see `spans`)."""
    return spans([measure(id, s) for s in list(seeds)])


class _Formatter(string.Formatter):
    def format_field(self, value, spec):
        if spec.startswith(("max:", "min:")) and not isinstance(value, Span):
            spec = spec[4:]          # one value is its own bound
        return format(value, spec)


def fill(id: str, numbers_: dict) -> str:
    """The claim's statement with `numbers_` (spans or values) in its fields."""
    return fill_template(get(id).statement, numbers_)


def fill_template(template: str, numbers_: dict) -> str:
    return _Formatter().format(template, **numbers_)


def statement(id: str, seeds: Iterable[int] = PAGE_SEEDS) -> str:
    """The claim's statement with its numbers on the first of `seeds` on the shipped run: numbers that go
    together (a count and what it counts) come from one sample, never from ranges taken apart."""
    c = get(id)
    seeds = list(seeds) if c.seeded else [0]
    got = measure(id, seeds[0])
    if ABSENT in got:
        return f"(not measured: {got[ABSENT]})"
    return fill(id, got)


def listed(names, none: str = "none") -> str:
    """Names as a statement lists them: "a", "a and b", "a, b and c" (`none` for no names)."""
    names = [str(n) for n in names]
    if not names:
        return none
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def glue_name(id: str) -> str:
    return "claim_" + id.replace("-", "_").replace(".", "__")


def is_close(a: float, b: float, tol: float = 1e-9) -> bool:
    return math.isclose(a, b, abs_tol=tol)


@functools.lru_cache(maxsize=1)
def _book_order() -> dict[str, int]:
    """Each page's place in the book's table of contents, by its file name without .md (the name a
    claim gives its chapter); the first page of a name when two parts share it (index, glossary)."""
    toc = units.ROOT / "_toc.yml"
    pages = re.findall(r"file:\s*(\S+)", toc.read_text(encoding="utf-8")) if toc.is_file() else []
    place: dict[str, int] = {}
    for i, page in enumerate(pages):
        place.setdefault(page.rsplit("/", 1)[-1], i)
    return place


_LOADED = False


def _load():
    """Import the claims of every chapter unit, which registers them (once)."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        units.load("claims")
