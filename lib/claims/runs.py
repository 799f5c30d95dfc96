"""Claims measured on training runs other than the pages': is a lesson about the recipe, or about one run?

A claim whose scope is "every run" (`registry.EVERY_RUN`) is measured on every run of the panel of
shipped training runs (`lib.claims.panel`) and on runs trained elsewhere (`python -m lib claims --runs`).
A *run* here is a choice of weights for the models the claim reads (`Claim.models`): the shipped run
(training seed 0, `data/models/NAME`), a shipped run of another seed (`data/runs/NAME/seed-S`, the same
seed for every model the claim reads), or a folder trained elsewhere (`python -m lib train NAME --seed S
--out DIR`, whose `meta.json` says which model it replaces).

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


# ----------------------------------------------------------------------------- runs
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
    """The run's key: the library's source and the weights of every model a claim may read on it (the run's
    own folders, the shipped runs of the others), so that retraining any of them is a new key."""
    from lib.model.store import model_folder, shipped_names  # deferred: the store imports torch

    folders = {name: str(model_folder(name)) for name in shipped_names()}
    folders.update(run)
    return kept.weights_key(folders.items())


def _plain(value):
    """A measured number as JSON keeps it (numpy scalars become Python's; a list stays a list)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None:
        return None
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
                # A role a measurement does not find on this run is a measured "no" (`registry.Absent`, in
                # the numbers); anything else that goes wrong is a fault of the claim's code, kept as such
                # so that the command and the tests say so rather than count it as a "no".
                try:
                    numbers_ = {k: _plain(v) for k, v in c.measure(seed).items()}
                    out[id][str(seed)] = {"numbers": numbers_, "holds": bool(c.holds(numbers_))}
                except Exception as e:  # noqa: BLE001 (reported with the claim, on its run)
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


def over_runs(id: str, seeds: Iterable[int] = registry.PAGE_SEEDS) -> list[tuple[str, int, dict, bool]]:
    """The claim on the shipped run: (run label, seed, numbers, holds) on each of `seeds`, or, for an
    every-run claim, on the panel's prompt-set seed alone, the first of the pages' (its page prints the kept
    panel, `lib.claims.panel`, and holds this measurement of the pages' run to it)."""
    c = registry.get(id)
    if c.scope == registry.EVERY_RUN:
        seeds = [registry.PAGE_SEEDS[0]]
    seeds = list(seeds) if c.seeded else [0]
    return [(SHIPPED, s, registry.measure(id, s), registry.holds(id, s)) for s in seeds]


# ----------------------------------------------------------------------------- the pages' runs, before the pages
def page_runs(seeds: Iterable[int] = registry.PAGE_SEEDS) -> list[tuple[dict[str, str], list[str], list[int]]]:
    """What the pages' claims measure on runs other than the pages' before the chapters run, as (run, claim
    ids, seeds), for the build to measure each in a process of its own (`measure_in_this_process`): nothing.
    A page prints an every-run claim from the kept panel (`lib.claims.panel`, measured once by `python -m
    lib panel --write`) and measures only the pages' run, in its own process (`over_runs`)."""
    return []


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
