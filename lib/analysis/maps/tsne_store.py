"""Finished t-SNE runs kept in `data/tsne/runs.json`, so that a build does not redo minutes of
optimisation it has done before.

Run to convergence, one layout of the 84 real-language rows takes up to 5,000 iterations (over 3 s
on a 2-core machine), and the t-SNE explorer offers 60 of them: recomputing them on every build
took most of the book's time budget. The store holds each run with everything that decides it:

- the key: the SHA-256 of the points' bytes (as float32), the perplexity, the seed and the iteration limit;
- at the top of the file, scikit-learn's version and the optimiser's settings; a store written
  under other ones is ignored as a whole (every run is then computed as usual).

A run whose key is missing is simply computed, so a retrained model or new points never read a
stale layout. `python -m lib tsne` rewrites the store with every run the course shows (the
explorer's grids and the chapters' runs: `views.course_runs`, `views.rebuild`); the tests recompute
a sample and compare.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from lib.data import data_dir

# The optimiser stops when the gradient's norm falls below this (scikit-learn's default, 1e-7, is
# never reached on these small sets: the KL stops moving in its fourth decimal long before). At
# 1e-4 the KL of the 28- and 84-point sets is within 0.1% of a run four times as long. One of the
# settings a stored run was made under (`settings`); `tsne.tsne_run` runs with it.
MIN_GRAD_NORM = 1e-4


def store_path() -> Path:
    return data_dir() / "tsne" / "runs.json"


def settings() -> dict:
    """What, besides a run's key, decides its layout."""
    import sklearn  # deferred: scikit-learn takes a second to import, and only a store read needs its version
    return {"sklearn": sklearn.__version__, "method": "exact", "init": "random", "learning_rate": "auto",
            "min_grad_norm": MIN_GRAD_NORM}


def run_key(x: np.ndarray, perplexity: float, seed: int, max_iter: int) -> str:
    """The points' digest, then the settings. The points are hashed as float32: points computed from
    the same rows on another processor (a norm summed in another order) differ in the last bits of a
    double, and must still find their run; a change that moves a layout changes float32 bits too."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    digest = hashlib.sha256(repr(x.shape).encode() + x.tobytes()).hexdigest()[:20]
    return f"{digest}|{float(perplexity):g}|{int(seed)}|{int(max_iter)}"


@lru_cache(maxsize=1)
def _stored() -> dict:
    """The stored runs, or none if the file is absent, unreadable or written under other settings."""
    path = store_path()
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("settings") != settings() or not isinstance(data.get("runs"), dict):
        return {}
    return data["runs"]


def lookup(key: str):
    """The stored run for `key` as (layout [point, 2], iterations, KL, converged), or None."""
    if os.environ.get("COURSE_TSNE_STORE") == "off":      # the benchmark times real runs
        return None
    run = _stored().get(key)
    if run is None:
        return None
    return np.array(run["layout"], dtype=np.float64), int(run["n_iter"]), float(run["kl"]), bool(run["converged"])


def write(runs: dict) -> Path:
    """Write `runs` ({key: TsneRun}) as the store, replacing it whole (written aside, then renamed)."""
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"settings": settings(),
            "runs": {key: {"layout": run.layout.tolist(), "n_iter": run.n_iter, "kl": run.kl,
                           "converged": run.converged} for key, run in sorted(runs.items())}}
    staging = path.with_suffix(".json.partial")
    staging.write_text(json.dumps(body, separators=(",", ":")) + "\n")
    staging.replace(path)
    _stored.cache_clear()
    return path


__all__ = ["MIN_GRAD_NORM", "store_path", "settings", "run_key", "lookup", "write"]
