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


def each_run(name: str, fn: Callable[[LoadedModel], T]) -> dict[str, T]:
    """{run label: fn(that run's model)} over every run of `runs_of(name)`."""
    return {label: fn(lm) for label, lm in runs_of(name).items()}
