"""The three-ways chapter's maps as pure functions: t-SNE layouts of a named point set for any seeds,
perplexity and iteration stop, and the concept plane a reader builds from words.

The kernel's explorers (`explorers.py` beside this file) call these on every change, the stored t-SNE runs
(`lib.analysis.maps.tsne_store`) are computed by them (`course_runs`, `rebuild`: `python -m lib tsne`), and
the chapter measures with them: one computation behind every picture of a map. The real-language chapter
shows this chapter's t-SNE explorer, and its unit-sphere runs are among `course_runs`.

The point sets are the shared ones (`lib.content.point_sets`) and this chapter's known clusters
(`clusters.py`): `point_set(name)` gives any of them.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from lib.analysis.maps import concept_plane, gram_schmidt, nearest_indices, tsne_store, unit_sphere
from lib.analysis.maps.tsne import EXAGGERATION_ITER, MAX_ITER, TsneRun, check_perplexity, check_seed, tsne_run
from lib.chapters.part2.three_ways import clusters
from lib.content import point_sets as shared
from lib.content.point_sets import WORD_SETS, PointSet  # noqa: F401  (the maps' inputs)
from lib.content import smollm2_words
from lib.model import smollm2
from lib.errors import CourseError, require
from lib.messages import say

# The sets the maps lay out: the shared ones, then this chapter's known clusters.
POINT_SETS = {**shared.POINT_SETS, clusters.NAME: clusters.DESCRIPTION}


@lru_cache(maxsize=None)
def point_set(name: str) -> PointSet:
    """A named point set of POINT_SETS."""
    if name == clusters.NAME:
        made = clusters.make()
        return PointSet(name, made.labels, made.groups, made.vectors)
    require(name in POINT_SETS, f"no point set {name!r}; choose one of: {', '.join(POINT_SETS)}")
    return shared.point_set(name)


# The slider's stops: the explorer precomputes them all (a step must not wait for a t-SNE run).
PERPLEXITIES = (2, 3, 5, 8, 10, 15, 20, 27, 30, 40, 50, 60)
# The known clusters are shown at every iteration stop, so they get fewer perplexities. Below 10 the
# runs do not all finish: within MAX_ITER iterations perplexity 2 converges from none of three seeds
# and 5 from four of five, and an unfinished layout is no evidence.
SET_PERPLEXITIES = {"known-clusters": (10, 20, 30, 50)}
SEEDS = (0, 1, 2, 3, 4)
# The iterations control ("steps"): the layout after this many iterations, up to the run that goes on
# until it converges (MAX_ITER is only its limit). The first stop is the end of early exaggeration,
# the fewest scikit-learn allows. A shorter run is the first iterations of a longer one (the same
# start, the same updates), so the stops are one optimisation seen at several moments.
STEPS = (EXAGGERATION_ITER, 500, 1000, 2500, MAX_ITER)
STEP_SETS = ("known-clusters",)


# ----------------------------------------------------------------------------- t-SNE, two seeds

@dataclass(frozen=True)
class TsneView:
    points: str
    perplexity: float
    seeds: tuple[int, int]
    layouts: tuple[np.ndarray, np.ndarray]   # [point, 2] for each seed
    kept: tuple[float, float]                # share of each point's 5 nearest neighbours kept, per seed


def neighbours_kept(x, y, k: int = 5, original: np.ndarray | None = None) -> float:
    """Share of each point's k nearest neighbours in the original space `x` that are also among its
    k nearest in the layout `y`: what t-SNE promises to keep. `original`: x's neighbours, if known."""
    a = nearest_indices(x, k) if original is None else original
    b = nearest_indices(y, k)
    return float(np.mean([len(set(a[i]) & set(b[i])) / k for i in range(len(a))]))


@lru_cache(maxsize=None)
def _original_neighbours(points: str, k: int = 5) -> np.ndarray:
    """Each point's k nearest neighbours in the full space: the same for every layout of the set."""
    return nearest_indices(point_set(points).vectors, k)


# One run per (point set, perplexity, seed, iterations), read from the store or computed once.
_RUNS: dict[tuple[str, float, int, int], TsneRun] = {}


def run(points: str, perplexity: float, seed: int, steps: int = MAX_ITER) -> TsneRun:
    key = (points, float(perplexity), int(seed), int(steps))
    if key not in _RUNS:
        _RUNS[key] = tsne_run(point_set(points).vectors, float(perplexity), int(seed), int(steps))
    return _RUNS[key]


def layouts(points: str, perplexity: float, seeds) -> list[np.ndarray]:
    return [run(points, perplexity, s).layout for s in seeds]


def tsne_view(points: str, perplexity, seed_left, seed_right) -> TsneView:
    """t-SNE of a point set with one perplexity and two seeds (results cached)."""
    ps = point_set(points)
    p = check_perplexity(perplexity, len(ps.labels))
    seeds = (check_seed(seed_left), check_seed(seed_right))
    pair = tuple(layouts(points, p, seeds))
    original = _original_neighbours(points)
    return TsneView(points, p, seeds, pair, tuple(neighbours_kept(ps.vectors, y, original=original) for y in pair))


def valid_perplexities(points: str, perplexities=None) -> tuple[float, ...]:
    """The perplexity stops a point set offers (its own, or the common ones), below its number of points."""
    n = len(point_set(points).labels)
    if perplexities is None:
        perplexities = SET_PERPLEXITIES.get(points, PERPLEXITIES)
    return tuple(p for p in perplexities if p < n)


def step_stops(points: str) -> tuple[int, ...]:
    """The iteration stops a point set offers: all of STEPS, or only the run to convergence."""
    return STEPS if points in STEP_SETS else (MAX_ITER,)


def grid_cells(points: str) -> list[tuple[float, int, int]]:
    """Every (perplexity, seed, iterations) the t-SNE explorer's controls reach on a point set."""
    return [(float(p), s, n) for p in valid_perplexities(points) for s in SEEDS for n in step_stops(points)]


def grid_key(perplexity, seed, steps=MAX_ITER) -> str:
    return f"{float(perplexity):g}|{int(seed)}|{int(steps)}"


@lru_cache(maxsize=None)
def tsne_grid(points: str) -> dict:
    """Every layout the t-SNE explorer's sliders reach on a point set, as the explorer shows them:
    {key "perplexity|seed|iterations": {"layout": [[x, y], ...] to 5 significant digits, "kept": share
    of 5 nearest neighbours kept, "n_iter": iterations run, "kl": final KL to 4 significant digits,
    "converged": whether it stopped by itself}}. The kernel and the website look layouts up in this
    one table."""
    ps = point_set(points)
    original = _original_neighbours(points)
    table = {}
    for p, s, n in grid_cells(points):
        r = run(points, p, s, n)
        table[grid_key(p, s, n)] = {"layout": [[float(f"{v:.5g}") for v in row] for row in r.layout],
                                    "kept": neighbours_kept(ps.vectors, r.layout, original=original),
                                    "n_iter": r.n_iter, "kl": float(f"{r.kl:.4g}"), "converged": r.converged}
    return table


# ----------------------------------------------------------------------------- the stored runs
def course_runs() -> list[tuple[str, np.ndarray, float, int, int]]:
    """Every run the course shows: (what it is, points, perplexity, seed, iteration limit).

    The explorer's grids over the point sets hold all of the chapters' runs on the raw rows (on the
    known clusters, at every iteration stop too); the real-language page also lays out the rows moved
    onto the unit sphere."""
    runs = []
    for name in POINT_SETS:
        x = point_set(name).vectors
        runs += [(name, x, p, s, n) for p, s, n in grid_cells(name)]
    sphere = unit_sphere(point_set("real-language").vectors)
    runs += [("real-language on the unit sphere", sphere, 10.0, s, MAX_ITER) for s in range(3)]
    if smollm2.package_file() is not None:     # the same 84 words in SmolLM2's table (real-language's last map)
        runs += [("real-language words in SmolLM2", smollm2_words.load().vectors, 10.0, s, MAX_ITER) for s in range(3)]
    return runs


def rebuild(progress=print) -> tuple[Path, int, int, int]:
    """Compute every course run afresh and write the store. Returns (path, runs, runs allowed to go
    on until they converge, how many of those converged); the others stop at an iteration stop."""
    os.environ["COURSE_TSNE_STORE"] = "off"
    try:
        runs, full = {}, []
        for what, x, p, s, n in course_runs():
            run = tsne_run(x, p, s, n)
            runs[tsne_store.run_key(x, p, s, n)] = run
            if n == MAX_ITER:
                full.append(run)
            progress(f"{what}: {run.describe()}" + ("" if n == MAX_ITER else f" (the {n}-iteration stop)"))
    finally:
        os.environ.pop("COURSE_TSNE_STORE", None)
    path = tsne_store.write(runs)
    return path, len(runs), len(full), sum(r.converged for r in full)


# ----------------------------------------------------------------------------- concept planes

@dataclass(frozen=True)
class PlaneView:
    points: str
    axes_text: tuple[str, str]      # the two axes as the reader wrote them, tidied
    coords: np.ndarray              # [point, 2]
    spread: float                   # share of the points' variance the plane captures
    raw_overlap: float              # cosine of the two directions before Gram-Schmidt


def parse_axis(text: str, labels) -> tuple[list[str], list[str]]:
    """'Paolo - Pietro' or 'Tarso + Cefa - capo - vice' -> (plus words, minus words).

    A word with no sign before it counts as plus. Spaces around the signs may be left out
    ('Paolo-Pietro') as long as the pieces are tokens.
    """
    labels = list(labels)
    pieces = re.findall(r"[+-]|[^\s+-]+", text or "")
    plus, minus, sign = [], [], "+"
    for piece in pieces:
        if piece in "+-":
            sign = piece
            continue
        require(piece in labels, say("not_a_label", piece=repr(piece), labels=" ".join(labels)))
        (plus if sign == "+" else minus).append(piece)
        sign = "+"
    require(plus or minus, say("empty_axis"))
    return plus, minus


def _axis_vector(ps: PointSet, text: str) -> tuple[np.ndarray, str]:
    plus, minus = parse_axis(text, ps.labels)
    index = {w: i for i, w in enumerate(ps.labels)}
    v = np.zeros(ps.vectors.shape[1])
    if plus:
        v = v + ps.vectors[[index[w] for w in plus]].mean(0)
    if minus:
        v = v - ps.vectors[[index[w] for w in minus]].mean(0)
    tidy = (" + ".join(plus) + "".join(f" - {w}" for w in minus)).strip()
    require(np.linalg.norm(v) > 1e-9, say("zero_axis", axis=tidy))
    return v, tidy


def plane_view(points: str, axis_1: str, axis_2: str) -> PlaneView:
    """Every point of the set on the plane of two axes the reader names (Gram-Schmidt)."""
    ps = point_set(points)
    d1, t1 = _axis_vector(ps, axis_1)
    d2, t2 = _axis_vector(ps, axis_2)
    try:
        gram_schmidt([d1, d2], tol=1e-9 * np.linalg.norm(d2))
    except CourseError:
        raise CourseError(say("parallel_axes", second=t2, first=t1)) from None
    plane = concept_plane(ps.vectors, d1, d2)
    return PlaneView(points, (t1, t2), plane.coords, plane.spread, plane.raw_overlap)
