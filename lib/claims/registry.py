"""The registry of claims: every conclusion a chapter states, as code.

A claim is registered once, where its measurement is defined, with the `claim` decorator, in the
`claims.py` of its chapter's unit (`lib/chapters/PART/UNIT/claims.py`, see `lib.chapters`):

    @claim("real-language.analogies-vs-baselines", "real-language",
           "The offset method gets {offset} of {n}; ...",
           holds=lambda x: x["offset"] > x["best_baseline"])
    def _(seed):
        return {"offset": ..., "n": ..., "best_baseline": ...}

- `statement` is the sentence as the page prints it, a `str.format` template whose fields are the
  measurement's numbers (a format spec such as `{share:.0%}` applies to each number).
- `measure(seed) -> dict` returns the numbers. `seed` is the prompt-set seed (or the seed of the
  sampled rounds) that the measurement draws its evidence with. A claim about something fixed (a
  word list, the shipped weights read without sampling) says `seeded=False` and ignores the seed.
- `holds(numbers) -> bool` is the condition under which the statement is true.

A page prints a claim over its own seeds (`PAGE_SEEDS`): where a number differs between seeds,
the statement gives its range ("from 3 to 5"), never one seed's value. `python -m lib claims`
measures every claim again on any seeds, and says on which it holds.

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
from lib.errors import CourseError, require

# The prompt-set seeds the pages print their claims over.
PAGE_SEEDS = (0, 1, 2)

# What a claim is about (its scope):
# - EVERY_RUN: a lesson about the recipe. It is measured on every shipped training run of the models it
#   names (`models`) and must hold on each; a head or component it speaks of is found by its measured
#   role, never by name. Its statement ranges over the runs as well as the seeds.
# - THIS_RUN: a fact about the shipped run (the one the pages draw), which another training run may not
#   repeat; the page says so in words a reader cannot miss ("in this trained model"). A pretrained
#   model's claims (MiniLM, SmolLM2) are facts about its one run too, with no other run shipped
#   (`models` empty): the chapters say whose weights they read.
# - NO_RUN: depends on no trained weights (the game's rules, arithmetic, a word list): there is no run
#   to measure it on.
EVERY_RUN, THIS_RUN, NO_RUN = "every run", "this run", "no run"
SCOPES = (EVERY_RUN, THIS_RUN, NO_RUN)


@dataclass(frozen=True)
class Claim:
    id: str
    chapter: str                              # the chapter's file name without .md, e.g. "real-language"
    statement: str                            # a template filled from the numbers
    measure: Callable[[int], dict]            # seed -> {name: number or text}
    holds: Callable[[dict], bool]             # numbers -> whether the statement is true
    seeded: bool = True                       # False: the numbers do not depend on the seed
    note: str = ""                            # what is measured, how, over what (for the command's listing)
    scope: str = THIS_RUN                     # EVERY_RUN, THIS_RUN or NO_RUN (above)
    models: tuple[str, ...] = ()              # the trained models whose runs the measurement reads
    covers_runs: bool = False                 # its measurement reads every shipped run itself (below)


REGISTRY: dict[str, Claim] = {}
_CACHE: dict[tuple[str, int], dict] = {}


def claim(id: str, chapter: str, statement: str, holds: Callable[[dict], bool], *, scope: str,
          models: Iterable[str] = (), seeded: bool = True, note: str = "", one_thread: bool = False,
          covers_runs: bool = False):
    """Register the decorated function as the measurement of a claim; returns it unchanged.

    `scope` says what the claim is about (EVERY_RUN, THIS_RUN or NO_RUN) and `models` which trained
    models' runs its measurement reads (`lib.load(name)`): an every-run claim names at least one, a
    no-run claim none. With `one_thread`, torch runs on one thread while the claim is measured: for
    the course's tiny models on a busy 2-core machine, the second thread costs far more in waiting
    than it gains. With `covers_runs`, an every-run claim's measurement already reads every shipped run
    (`lib.analysis.over_runs`, the run in use first): it is measured once, not once a run, and a run
    trained elsewhere takes the pages' run's place in it."""
    models = tuple(models)
    require(scope in SCOPES, f"claim {id!r}: scope must be one of {', '.join(map(repr, SCOPES))}, got {scope!r}")
    require(scope != EVERY_RUN or models, f"claim {id!r} is about every run but names no model whose runs it reads")
    require(scope != NO_RUN or not models, f"claim {id!r} depends on no run but names models {models}")
    require(not covers_runs or scope == EVERY_RUN, f"claim {id!r} covers every run, so its scope is {EVERY_RUN!r}")

    def register(measure):
        require(id not in REGISTRY, f"claim {id!r} is registered twice")
        run = _on_one_thread(measure) if one_thread else measure
        REGISTRY[id] = Claim(id, chapter, statement, run, holds, seeded, note or (measure.__doc__ or "").strip(),
                             scope, models, covers_runs)
        return measure
    return register


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


@dataclass(frozen=True)
class Span:
    """One number over several seeds: its lowest and highest value."""
    lo: float
    hi: float
    values: tuple = field(default=())

    def __format__(self, spec: str) -> str:
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
        return format(value, spec)


def fill(id: str, numbers_: dict) -> str:
    """The claim's statement with `numbers_` (spans or values) in its fields."""
    return _Formatter().format(get(id).statement, **numbers_)


def statement(id: str, seeds: Iterable[int] = PAGE_SEEDS) -> str:
    """The claim's statement with its numbers over `seeds` on the shipped run (ranges where they differ)."""
    c = get(id)
    seeds = list(seeds) if c.seeded else [0]
    return fill(id, numbers_over(id, seeds))


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
