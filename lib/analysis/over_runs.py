"""One measurement on every shipped training run of a model: what another run changes.

Each trainable model ships several runs of its recipe (training seed 0, the one the pages draw, in
`data/models/NAME`; others in `data/runs/NAME/seed-S`). A measurement written as a function of the
loaded model (`fn(lm) -> value`) is taken on each here, in the order of the runs' training seeds.
(The registered claims are measured on the runs by `lib.claims.runs`, in processes of their own,
because their measurements read `lib.load(NAME)`; a function that takes the model needs no such care.)
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, TypeVar

from lib import kept
from lib.model.store import LoadedModel, in_use_folder, load, run_label, shipped_runs

T = TypeVar("T")


def run_folders(name: str) -> dict[str, Path]:
    """{run label ("seed 0", "seed 1", ...): folder} over the shipped runs of `name`, the run in use first:
    the pages' run, unless `store.use_run` names another, which then takes the place of the shipped
    run of its own training seed, or, trained elsewhere on a seed no shipped run has, of the pages' run."""
    shipped = shipped_runs(name)
    in_use = in_use_folder(name)
    label = run_label(in_use)
    labels = [run_label(f) for f in shipped]
    out = {label: in_use}
    for folder, lab in zip(shipped, labels):
        if lab == label or (label not in labels and folder == shipped[0]):
            continue
        out[lab] = folder
    return out


def runs_of(name: str) -> dict[str, LoadedModel]:
    """{run label: model} over `run_folders(name)`, in its order (the run in use read as `load(name)`)."""
    folders = run_folders(name)
    first = next(iter(folders))
    return {lab: load(name) if lab == first else load(name, folder) for lab, folder in folders.items()}


def each_run(name: str, fn: Callable[[LoadedModel], T], keep: str | None = None) -> dict[str, T]:
    """{run label: fn(that run's model)} over every run of `runs_of(name)`.

    With `keep` (the measurement's name, with any argument it takes), each run's value is kept on disk
    (`lib.kept`, keyed by the library's source and the run's weights), so the build, the tests and the
    command line measure a run once between them; a model is read only for a run not yet kept. The
    value must then be plain JSON, and is given back as JSON gives it, measured or read."""
    if keep is None:
        return {label: fn(lm) for label, lm in runs_of(name).items()}
    folders = run_folders(name)
    first = next(iter(folders))

    def model(label: str, folder: Path) -> LoadedModel:
        return load(name) if label == first else load(name, folder)
    return {label: kept.run_measurement(name, folder, keep, lambda: fn(model(label, folder)))
            for label, folder in folders.items()}
