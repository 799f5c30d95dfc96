"""Claims measured on other training runs: is a lesson about the recipe, or about one run?

A claim whose scope is "every run" (`registry.EVERY_RUN`) must hold on every shipped training run of
the models it reads (`Claim.models`), not only on the run the pages draw. A *run* here is a choice of
weights for those models: the shipped run (training seed 0, `data/models/NAME`), a shipped run of
another seed (`data/runs/NAME/seed-S`, the same seed for every model the claim reads), or a folder
trained elsewhere (`python -m lib train NAME --seed S --out DIR`, whose `meta.json` says which model it
replaces).

Each run is measured in a process of its own: the chapters' measurements cache what they compute
(per process, keyed by the prompt-set seed alone), so two runs must never share a process. The
numbers are kept on disk (`cache_dir()`), keyed by the library's source, the run's weights and the
seed, so the book's build, the tests and the command measure each run once between them.
"""
from __future__ import annotations

import contextlib
import json
import multiprocessing
import numbers
import sys
from pathlib import Path
from typing import Iterable

from lib import kept
from lib.claims import registry
from lib.errors import CourseError, require

SHIPPED = "shipped"          # the name of the pages' own run in tables and JSON
# How many of the page's seeds the other shipped runs are measured on (the first): a lesson is tested on
# every run and, on the pages' run, on every seed; four runs on three seeds each would triple the book's
# build for little (the tests measure the lessons again on a fresh run and a fresh seed).
RUN_SEEDS = 1


# ----------------------------------------------------------------------------- runs
def shipped_run_seeds(models: Iterable[str]) -> list[int]:
    """The training seeds shipped for every one of `models` (0, the pages' run, first)."""
    from lib.model.store import RUN_PREFIX, shipped_runs  # deferred: the store imports torch; listing claims does not need it

    common = None
    for name in models:
        seeds = {0} | {int(p.name[len(RUN_PREFIX):]) for p in shipped_runs(name)[1:]}
        common = seeds if common is None else common & seeds
    return sorted(common or {0})


def shipped_run(models: Iterable[str], seed: int) -> dict[str, str]:
    """The folders of the shipped run of training seed `seed` for `models` ({} for the pages' run)."""
    from lib.model.store import RUN_PREFIX, runs_dir  # deferred: the store imports torch

    if seed == 0:
        return {}
    return {name: str(runs_dir() / name / f"{RUN_PREFIX}{seed}") for name in models}


def read_run_folder(folder: str | Path) -> tuple[str, Path]:
    """A folder trained elsewhere: (the model it replaces, the folder). One clear line if it is not a
    trained model or replaces no shipped model."""
    from lib.model.store import META, WEIGHTS, read_model, shipped_names  # deferred: the store imports torch

    path = Path(folder).expanduser()
    require(path.is_dir(), f"--runs {folder}: no such folder; give folders written by "
                           "`python -m lib train MODEL --seed S --out DIR`")
    require((path / META).is_file() and (path / WEIGHTS).is_file(),
            f"--runs {folder} is not a trained model (it needs {META} and {WEIGHTS}, as "
            "`python -m lib train MODEL --out DIR` writes them)")
    try:
        name = json.loads((path / META).read_text())["name"]
    except (OSError, ValueError, KeyError, TypeError):
        raise CourseError(f"--runs {folder}: its {META} does not say which model it is (no \"name\")") from None
    require(isinstance(name, str) and name in shipped_names(),
            f"--runs {folder} is a model named {name!r}, which no shipped model is; shipped: {', '.join(shipped_names())}")
    read_model(name, path)          # verified (checksum, shapes) before any measuring
    return name, path


# ----------------------------------------------------------------------------- the disk cache
def cache_dir() -> Path | None:
    """Where measured runs are kept (`lib.kept`)."""
    return kept.cache_dir()


def _run_key(run: dict[str, str]) -> str:
    return kept.weights_key(run.items())


def _plain(value):
    """A measured number as JSON keeps it (numpy scalars become Python's)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


def _kept(run: dict[str, str], ids: list[str], seeds: list[int]) -> tuple[Path | None, dict, list[str]]:
    """(where `run`'s numbers are kept, what is kept there, the claims of `ids` it lacks on `seeds`)."""
    folder = cache_dir()
    path = folder / f"{_run_key(run)}.json" if folder is not None else None
    stored = (kept.read(path.stem) or {}) if path is not None else {}
    missing = [i for i in ids if not all(str(s) in stored.get(i, {}) for s in (seeds if registry.get(i).seeded else [0]))]
    return path, stored, missing


# ----------------------------------------------------------------------------- measuring
def _measure_here(run: dict[str, str], ids: list[str], seeds: list[int]) -> dict:
    """In this process: every claim of `ids` on every seed, with `run`'s folders in place."""
    import torch

    from lib.model.store import use_run  # deferred: the store imports torch

    torch.set_num_threads(1)
    out = {}
    with contextlib.ExitStack() as stack:
        for name, folder in run.items():
            stack.enter_context(use_run(name, folder))
        for id in ids:
            c = registry.get(id)
            out[id] = {}
            for seed in (seeds if c.seeded else [0]):
                # A measurement written against one run may not even run on another (the head it
                # expects does nothing there): that is the claim failing on that run, said so.
                try:
                    numbers_ = {k: _plain(v) for k, v in c.measure(seed).items()}
                    out[id][str(seed)] = {"numbers": numbers_, "holds": bool(c.holds(numbers_))}
                except Exception as e:  # noqa: BLE001 (any failure of a measurement is the claim's)
                    out[id][str(seed)] = {"numbers": {}, "holds": False, "error": f"{type(e).__name__}: {e}"[:300]}
    return out


def measure_runs(runs: dict[str, dict[str, str]], ids: list[str], seeds: list[int], jobs: int = 2) -> dict:
    """{run label: {claim id: {seed: {"numbers", "holds"}}}} for each run (label -> {model: folder}),
    each measured in a process of its own, `jobs` at a time, and kept in the disk cache."""
    seeds = [int(s) for s in seeds]
    results, todo = {}, {}
    for label, run in runs.items():
        path, stored, missing = _kept(run, ids, seeds)
        results[label] = stored
        if missing:
            todo[label] = (run, missing, path)
    if todo:
        main = sys.modules.get("__main__")
        if main is not None and not hasattr(main, "__spec__"):
            # An IPython shell's stand-in for __main__ (a grader's kernel, an embedded shell) has no
            # __spec__, which a spawned process reads to know what to import; None says "nothing".
            main.__spec__ = None
        context = multiprocessing.get_context("spawn")
        # One process per run, never reused (maxtasksperchild=1): a worker that measured one run keeps its
        # models and measurements cached, and would hand them to the next run it was given.
        with context.Pool(processes=max(1, min(jobs, len(todo))), maxtasksperchild=1) as pool:
            futures = {label: pool.apply_async(_measure_here, (run, missing, seeds))
                       for label, (run, missing, _) in todo.items()}
            for label, future in futures.items():
                fresh = future.get()
                for id, by_seed in fresh.items():
                    results[label].setdefault(id, {}).update(by_seed)
                path = todo[label][2]
                if path is not None:
                    kept.write(path.stem, results[label])   # whole files: two builds at once each write all
    return {label: {i: {s: v for s, v in results[label][i].items()
                        if s in {str(x) for x in (seeds if registry.get(i).seeded else [0])}} for i in ids}
            for label in runs}


def shipped_runs_of(ids: Iterable[str]) -> dict[str, dict[str, str]]:
    """The shipped runs other than the pages' that the every-run claims among `ids` read, by label
    ("seed 3"): the training seeds shipped for all the models those claims name (none for a claim whose
    measurement covers every run itself)."""
    models = sorted({m for i in ids for m in registry.get(i).models if not registry.get(i).covers_runs})
    if not models:
        return {}
    seeds = shipped_run_seeds(models) if models else [0]
    return {f"seed {s}": shipped_run(models, s) for s in seeds if s != 0}


def every_run_ids(chapter: str | None = None) -> list[str]:
    return [c.id for c in registry.claims(chapter) if c.scope == registry.EVERY_RUN]


def over_runs(id: str, seeds: Iterable[int] = registry.PAGE_SEEDS) -> list[tuple[str, int, dict, bool]]:
    """An every-run claim on every shipped run and seed: (run label, seed, numbers, holds), the pages'
    run first. The other runs are measured together with the rest of the chapter's every-run
    claims (one process a run), so a page pays for each run once."""
    c = registry.get(id)
    seeds = list(seeds) if c.seeded else [0]
    rows = [(SHIPPED, s, registry.measure(id, s), registry.holds(id, s)) for s in seeds]
    if c.scope != registry.EVERY_RUN or c.covers_runs:
        return rows
    ids = [i for i in every_run_ids(c.chapter) if set(registry.get(i).models) == set(c.models)
           and not registry.get(i).covers_runs]
    runs = {label: run for label, run in shipped_runs_of([id]).items()}
    other_seeds = seeds[:RUN_SEEDS]
    measured = measure_runs(runs, ids, other_seeds)
    for label in runs:
        for s in other_seeds:
            got = measured[label][id][str(s if c.seeded else 0)]
            rows.append((label, s, got["numbers"], got["holds"]))
    return rows


# ----------------------------------------------------------------------------- the pages' runs, before the pages
def page_runs(seeds: Iterable[int] = registry.PAGE_SEEDS) -> list[tuple[dict[str, str], list[str], list[int]]]:
    """What the pages' every-run claims measure on the other shipped runs (`over_runs`), as (run, claim ids,
    seeds) with one entry per run of each set of models the claims read: every chapter's claims on that
    set together, so the book's build measures each run once, in one process (`measure_in_this_process`),
    before the chapters run, instead of each chapter starting a process a run for its own claims."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for c in registry.claims():
        if c.scope == registry.EVERY_RUN and not c.covers_runs:
            groups.setdefault(tuple(sorted(c.models)), []).append(c.id)
    return [(run, ids, list(seeds)[:RUN_SEEDS]) for ids in groups.values() for run in shipped_runs_of(ids).values()]


def missing(run: dict[str, str], ids: list[str], seeds: list[int]) -> list[str]:
    """The claims of `ids` whose numbers on `run` and `seeds` are not kept on disk yet."""
    return _kept(run, ids, [int(s) for s in seeds])[2]


def measure_in_this_process(run: dict[str, str], ids: list[str], seeds: list[int]) -> None:
    """`measure_runs` for one run, in this process (a process started for this run alone, which it must
    not measure another run in afterwards): the missing numbers measured and kept on disk."""
    seeds = [int(s) for s in seeds]
    path, stored, todo = _kept(run, ids, seeds)
    if not todo:
        return
    for id, by_seed in _measure_here(run, todo, seeds).items():
        stored.setdefault(id, {}).update(by_seed)
    if path is not None:
        kept.write(path.stem, stored)
