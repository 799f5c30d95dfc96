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
explorer's grids and the chapters' runs); the tests recompute a sample and compare.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np


def store_path() -> Path:
    from lib.model.store import data_dir
    return data_dir() / "tsne" / "runs.json"


def settings() -> dict:
    """What, besides a run's key, decides its layout."""
    import sklearn
    from lib.analysis.maps.tsne import MIN_GRAD_NORM
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


def course_runs() -> list[tuple[str, np.ndarray, float, int, int]]:
    """Every run the course shows: (what it is, points, perplexity, seed, iteration limit).

    The explorer's grids over the point sets hold all of the chapters' runs on the raw rows (on the
    known clusters, at every iteration stop too); the real-language page also lays out the rows moved
    onto the unit sphere."""
    from lib.analysis.maps import unit_sphere
    from lib.analysis.maps.tsne import MAX_ITER
    from lib.analysis.maps.views import grid_cells
    from lib.content.point_sets import POINT_SETS, point_set

    runs = []
    for name in POINT_SETS:
        x = point_set(name).vectors
        runs += [(name, x, p, s, n) for p, s, n in grid_cells(name)]
    sphere = unit_sphere(point_set("real-language").vectors)
    runs += [("real-language on the unit sphere", sphere, 10.0, s, MAX_ITER) for s in range(3)]
    return runs


def rebuild(progress=print) -> tuple[Path, int, int, int]:
    """Compute every course run afresh and write the store. Returns (path, runs, runs allowed to go
    on until they converge, how many of those converged); the others stop at an iteration stop."""
    from lib.analysis.maps.tsne import MAX_ITER, tsne_run

    os.environ["COURSE_TSNE_STORE"] = "off"
    try:
        runs, full = {}, []
        for what, x, p, s, n in course_runs():
            run = tsne_run(x, p, s, n)
            runs[run_key(x, p, s, n)] = run
            if n == MAX_ITER:
                full.append(run)
            progress(f"{what}: {run.describe()}" + ("" if n == MAX_ITER else f" (the {n}-iteration stop)"))
    finally:
        os.environ.pop("COURSE_TSNE_STORE", None)
    path = write(runs)
    return path, len(runs), len(full), sum(r.converged for r in full)


__all__ = ["store_path", "settings", "run_key", "lookup", "write", "course_runs", "rebuild"]
