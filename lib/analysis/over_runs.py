"""One measurement on every shipped training run of a model: what another run changes.

Each trainable model ships several runs of its recipe (training seed 0, the one the pages draw, in
`data/models/NAME`; others in `data/runs/NAME/seed-S`). A measurement written as a function of the
loaded model (`fn(lm) -> value`) is taken on each here, in the order of the runs' training seeds.
(The registered claims are measured on the runs by `lib.claims.runs`, in processes of their own,
because their measurements read `lib.load(NAME)`; a function that takes the model needs no such care.)
"""
from __future__ import annotations

from typing import Callable, TypeVar

from lib.model.store import LoadedModel, load, run_label, shipped_runs

T = TypeVar("T")


def each_run(name: str, fn: Callable[[LoadedModel], T]) -> dict[str, T]:
    """{run label ("seed 0", "seed 1", ...): fn(that run's model)} over every shipped run of `name`."""
    return {run_label(folder): fn(load(name, folder)) for folder in shipped_runs(name)}
