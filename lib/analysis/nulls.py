"""Fair nulls: baselines built the same way as the thing they test.

A result is stated beside its baseline, and a baseline is only fair when it could have produced the
result by the same route without the structure the claim is about. Each function here draws such a
null, seeded, and returns the whole distribution (never just its mean), so a claim can say where the
real value falls in it (`percentile_of`).

- planes: random planes drawn inside the span the rows occupy (`in_span_planes`), and planes built
  from random rows by the very arithmetic that built the concept plane (`same_construction_planes`);
- data of the same shape with no structure: each column shuffled on its own (`column_permuted`: the
  marginals kept, the relations between columns destroyed) and independent Gaussian entries
  (`gaussian_like`), with `structureless_shares` drawing at least `MIN_SHUFFLES` of them;
- label shuffles (`label_shuffles`), at least `MIN_SHUFFLES`;
- paths whose steps have the same lengths as a real path's, in random directions (`step_matched_paths`);
- noise maps: the t-SNE and PCA layouts of structureless data of the same shape (`noise_map`), with how
  clumpy a layout looks (`silhouette`) and how many true neighbours a layout keeps (`neighbours_kept`).

Control words in the same sentences (`with_control_word`: the word under test swapped for a word with no
senses) are here too; the analogies' whole-vocabulary baselines live with the analogies
(`lib.analysis.maps.analogy.rank_methods`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from lib.analysis.maps.concepts import gram_schmidt, spread_captured
from lib.analysis.maps.neighbours import nearest_indices
from lib.analysis.maps.pca import pca
from lib.analysis.maps.tsne import tsne
from lib.errors import require

MIN_SHUFFLES = 100   # fewer draws put the null's maximum well below where it really lies


def _points(x, what: str = "the rows") -> np.ndarray:
    x = np.asarray(x, dtype=float)
    require(x.ndim == 2 and x.shape[0] >= 3 and x.shape[1] >= 2,
            f"{what} must be a [point, dimension] array of at least 3 points in 2 dimensions, got shape {x.shape}")
    require(bool(np.isfinite(x).all()), f"{what} must have finite coordinates")
    return x


def _draws(n, least: int = 1) -> int:
    require(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= least,
            f"the number of draws must be a whole number of at least {least}, got {n!r}")
    return int(n)


def percentile_of(value: float, null) -> float:
    """Share (0 to 100) of the null's draws strictly below `value`, ties counted half: where the real
    value falls in its null. 95 or more reads as 'beats the null'."""
    null = np.asarray(null, dtype=float).ravel()
    require(null.size > 0, "a null needs at least one draw")
    return float(100 * ((null < value).sum() + 0.5 * (null == value).sum()) / null.size)


# ----------------------------------------------------------------------------- planes

def span_basis(x, tol: float = 1e-9) -> np.ndarray:
    """Orthonormal basis [rank, dim] of the span of the centred rows: where the points can vary."""
    x = _points(x)
    c = x - x.mean(0)
    _, s, vt = np.linalg.svd(c, full_matrices=False)
    rank = int((s > tol * max(s[0], 1e-300)).sum())
    return vt[:rank]


def in_span_planes(x, n_planes: int = 1000, seed: int = 0) -> np.ndarray:
    """The share of spread captured by `n_planes` random planes drawn uniformly inside the span of the
    centred rows (28 rows span at most 27 directions, however many dimensions they are written in).
    A plane drawn across all dimensions wastes part of itself on directions where the rows never vary,
    which makes chance look smaller than it is."""
    basis = span_basis(x)
    require(len(basis) >= 2, "the rows vary along fewer than 2 directions, so no plane can be drawn in their span")
    x = np.asarray(x, float)
    rng = np.random.default_rng(seed)
    shares = np.empty(_draws(n_planes))
    for i in range(len(shares)):
        q, _ = np.linalg.qr(rng.normal(size=(len(basis), 2)))
        shares[i] = spread_captured(x, q.T @ basis)
    return shares


# A concept plane's recipe: for each of its two directions, (how many rows are averaged on the plus
# side, how many on the minus side). Paolo - Pietro is (1, 1); (Tarso + Cefa)/2 - (capo + vice)/2 is (2, 2).
Recipe = tuple[tuple[int, int], ...]


def _check_recipe(recipe, n_rows: int) -> Recipe:
    bad = (f"a plane's recipe is two (plus, minus) counts of rows, each plus at least 1, e.g. ((1, 1), (2, 2)); "
           f"got {recipe!r}")
    try:
        r = tuple((int(p), int(m)) for p, m in recipe)
    except (TypeError, ValueError):
        r = ()
    require(len(r) == 2 and all(p >= 1 and m >= 0 for p, m in r), bad)
    require(sum(p + m for p, m in r) <= n_rows, f"the recipe {recipe!r} needs more distinct rows than the {n_rows} given")
    return r


def same_construction_planes(x, recipe: Recipe, n_planes: int = 1000, seed: int = 0,
                             pool: Sequence[int] | None = None, source=None) -> np.ndarray:
    """The share of spread captured by planes built exactly as the concept plane was, from rows drawn at
    random: each direction the mean of `plus` random rows minus the mean of `minus` others (all distinct),
    the second made perpendicular to the first by Gram-Schmidt. `pool`: the rows that may be drawn (all by
    default). Differences of rows point along the directions the rows actually differ in, so these planes
    catch far more spread than planes drawn at random: the fair chance for a plane named by words.
    `source`: the table the random rows are drawn from, when the plane was named by words of a larger
    table than the rows it is measured on (a real model's whole vocabulary; read row by row, never copied);
    by default `x` itself."""
    x = _points(x)
    src = x if source is None else source
    require(np.ndim(src) == 2 and np.shape(src)[1] == x.shape[1],
            f"the source rows must be [row, {x.shape[1]}], got shape {np.shape(src)}")
    idx = np.arange(len(src)) if pool is None else np.asarray(list(pool), int)
    r = _check_recipe(recipe, len(idx))
    rng = np.random.default_rng(seed)
    shares, tries = [], 0
    n = _draws(n_planes)
    while len(shares) < n:
        tries += 1
        require(tries <= 20 * n, "the random rows keep giving parallel directions; the rows have too little spread")
        picked = rng.choice(idx, size=sum(p + m for p, m in r), replace=False)
        dirs, at = [], 0
        for p, m in r:
            plus, minus = picked[at:at + p], picked[at + p:at + p + m]
            at += p + m
            d = np.asarray(src[plus], float).mean(0) - (np.asarray(src[minus], float).mean(0) if m else 0.0)
            dirs.append(d)
        d1, d2 = dirs
        v = d2 - (d2 @ d1) / max(d1 @ d1, 1e-300) * d1
        if np.linalg.norm(d1) < 1e-9 or np.linalg.norm(v) < 1e-9 * max(np.linalg.norm(d2), 1e-300):
            continue
        shares.append(spread_captured(x, gram_schmidt([d1, d2])))
    return np.array(shares)


# ----------------------------------------------------------------------------- structureless data

def column_permuted(x, rng: np.random.Generator) -> np.ndarray:
    """Each column shuffled on its own: every coordinate's values kept (so its spread, scale and outliers),
    every relation between coordinates destroyed. The fairer null for 'the rows have structure': a
    Gaussian null forgets that some coordinates simply vary more than others."""
    x = _points(x)
    return np.column_stack([rng.permutation(x[:, j]) for j in range(x.shape[1])])


def gaussian_like(x, rng: np.random.Generator) -> np.ndarray:
    """Independent standard Gaussian entries in the shape of `x`: points with no structure at all."""
    x = _points(x)
    return rng.standard_normal(x.shape)


NULL_DATA: dict[str, Callable[[np.ndarray, np.random.Generator], np.ndarray]] = {
    "column-permuted": column_permuted, "gaussian": gaussian_like}


def structureless(x, kind: str, rng: np.random.Generator) -> np.ndarray:
    require(kind in NULL_DATA, f"unknown null data {kind!r}; known: {', '.join(NULL_DATA)}")
    return NULL_DATA[kind](x, rng)


def top_share(x, k: int = 2) -> float:
    """Share of the centred rows' variance in their top `k` principal directions (the SVD's)."""
    x = np.asarray(x, float)
    c = x - x.mean(0)
    # The squared singular values are the eigenvalues of the smaller Gram matrix: 84 rows of 576 numbers
    # need an 84 x 84 eigenproblem, not an SVD of the whole matrix (the same numbers, several times faster).
    s2 = np.clip(np.linalg.eigvalsh(c @ c.T if c.shape[0] <= c.shape[1] else c.T @ c)[::-1], 0, None)
    return float(s2[:k].sum() / s2.sum()) if s2.sum() > 0 else 0.0


def structureless_shares(x, kind: str = "column-permuted", draws: int = MIN_SHUFFLES, seed: int = 0,
                         k: int = 2) -> np.ndarray:
    """The top-`k` PCA share of `draws` structureless data sets of the shape of `x` (at least 100)."""
    x = _points(x)
    rng = np.random.default_rng(seed)
    return np.array([top_share(structureless(x, kind, rng), k) for _ in range(_draws(draws, MIN_SHUFFLES))])


def label_shuffles(statistic: Callable[[np.ndarray], float], labels, shuffles: int = MIN_SHUFFLES,
                   seed: int = 0) -> np.ndarray:
    """`statistic(labels)` recomputed with the labels shuffled, `shuffles` times (at least 100)."""
    labels = np.asarray(labels)
    require(labels.ndim == 1 and len(labels) >= 2, "give at least two labels, one per row")
    rng = np.random.default_rng(seed)
    return np.array([float(statistic(rng.permutation(labels))) for _ in range(_draws(shuffles, MIN_SHUFFLES))])


def group_gap(x, groups) -> float:
    """Mean cosine between rows of the same group minus mean cosine between rows of different groups."""
    x = np.asarray(x, float)
    g = np.asarray(groups)
    require(len(g) == len(x), f"one group per row: {len(g)} groups for {len(x)} rows")
    n = np.linalg.norm(x, axis=1, keepdims=True)
    u = np.divide(x, n, out=np.zeros_like(x), where=n > 0)
    c = u @ u.T
    off = ~np.eye(len(x), dtype=bool)
    same = (g[:, None] == g[None, :]) & off
    require(same.any() and (off & ~same).any(), "a gap needs at least two groups and a group of two rows")
    return float(c[same].mean() - c[off & ~same].mean())


# ----------------------------------------------------------------------------- paths

def step_matched_paths(path, n_paths: int = 1000, seed: int = 0) -> np.ndarray:
    """[path, point, dim]: random walks from the same start whose steps have the same lengths as the steps
    of `path` (its rows in order), each step in a uniformly random direction. Any few points lie close to
    a plane; this null says how close a path of that many steps of those sizes lies by itself."""
    path = np.asarray(path, float)
    require(path.ndim == 2 and len(path) >= 3 and path.shape[1] >= 2,
            f"a path is a [point, dimension] array of at least 3 points, got shape {path.shape}")
    lengths = np.linalg.norm(np.diff(path, axis=0), axis=1)
    rng = np.random.default_rng(seed)
    d = rng.standard_normal((_draws(n_paths), len(lengths), path.shape[1]))
    d /= np.linalg.norm(d, axis=2, keepdims=True)
    steps = d * lengths[None, :, None]
    return np.concatenate([np.broadcast_to(path[0], (len(d), 1, path.shape[1])),
                           path[0] + np.cumsum(steps, axis=1)], axis=1)


# ----------------------------------------------------------------------------- maps

def silhouette(layout, groups, cosine: bool = False) -> float:
    """scikit-learn's silhouette score of `layout` under the labels `groups` (-1 to 1): how clumpy the
    groups look. Given k-means' own clusters as labels, it says how clumpy the layout looks at all."""
    from sklearn.metrics import silhouette_score   # deferred: scikit-learn's metrics load slowly

    return float(silhouette_score(np.asarray(layout, float), np.asarray(groups), metric="cosine" if cosine else "euclidean"))


def clumpiness(layout, n_clusters: int, seed: int = 0) -> float:
    """The silhouette of k-means' best `n_clusters` clusters of a layout: how clumpy it looks to the eye,
    whatever the labels."""
    from sklearn.cluster import KMeans   # deferred: scikit-learn's clustering loads slowly

    layout = np.asarray(layout, float)
    labels = KMeans(n_clusters=n_clusters, n_init=10, random_state=seed).fit_predict(layout)
    return silhouette(layout, labels)


# Gaussian clouds a layout's clumpiness is measured against (`clumps_beyond_chance`).
CLOUD_DRAWS = 50


def clumps_beyond_chance(layout, n_clusters: int, draws: int = CLOUD_DRAWS, seed: int = 0) -> float:
    """How much clumpier a 2-D layout is than a Gaussian cloud of its own spread: its `clumpiness` minus the
    mean clumpiness of `draws` clouds of as many points drawn with the layout's mean and covariance. k-means
    finds "clusters" in any scatter, so a silhouette alone says little (some 0.4 for a cloud of 28 points);
    measured against a cloud of the same shape, 0 is no clumps beyond chance, whatever made the layout."""
    layout = _points(layout, "the layout")
    rng = np.random.default_rng(seed)
    mean, cov = layout.mean(0), np.cov(layout.T)
    clouds = [clumpiness(rng.multivariate_normal(mean, cov, size=len(layout)), n_clusters, seed)
              for _ in range(_draws(draws))]
    return clumpiness(layout, n_clusters, seed) - float(np.mean(clouds))


def neighbours_kept(x, layout, k: int = 5, cosine: bool = False) -> float:
    """Share of each row's k nearest rows in `x` that are also among its k nearest in `layout`."""
    a = nearest_indices(x, k, cosine)
    b = nearest_indices(layout, k)
    return float(np.mean([len(set(a[i]) & set(b[i])) / k for i in range(len(a))]))


@dataclass(frozen=True)
class NoiseMap:
    kind: str                 # which structureless data: column-permuted or gaussian
    data: np.ndarray          # [point, dim] the structureless rows
    tsne: np.ndarray          # [point, 2] their t-SNE layout
    pca: np.ndarray           # [point, 2] their top two principal coordinates
    tsne_kept: float          # share of 5 true neighbours the t-SNE layout keeps
    pca_kept: float           # the same for PCA
    tsne_clumpy: float        # silhouette of k-means' clusters on the t-SNE layout
    pca_clumpy: float


def noise_map(x, kind: str = "gaussian", perplexity: float = 5.0, seed: int = 0, n_clusters: int = 4,
              k: int = 5) -> NoiseMap:
    """The maps of structureless data of the shape of `x` (seeded): what a t-SNE and a PCA map look like
    when there is nothing to find. Shown beside the real maps, it says which clumps the method makes."""
    x = _points(x)
    rng = np.random.default_rng(seed)
    data = structureless(x, kind, rng)
    t = tsne(data, perplexity, seed)
    p = pca(data, 2).coords
    return NoiseMap(kind, data, t, p, neighbours_kept(data, t, k), neighbours_kept(data, p, k),
                    clumpiness(t, n_clusters, seed), clumpiness(p, n_clusters, seed))


# ----------------------------------------------------------------------------- control words

def with_control_word(sentences: dict[str, Sequence[str]], word: str, control: str) -> dict[str, tuple[str, ...]]:
    """The same sentences, grouped the same way, with `word` swapped for `control` (a word that has no
    senses to tell apart, such as "thing"). Whatever the control word's vectors show about the groups
    comes from the sentences around it, not from a sense of the word."""
    require(bool(control) and control.strip() == control and " " not in control,
            f"a control word is one word without spaces, got {control!r}")
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    out = {}
    for name, group in sentences.items():
        for s in group:
            require(len(pattern.findall(s)) == 1, f"{word!r} must occur once in every sentence; {s!r} has "
                                                  f"{len(pattern.findall(s))}")
        out[name] = tuple(pattern.sub(control, s) for s in group)
    return out


def top_share_against_nulls(x, seed: int = 0, draws: int = MIN_SHUFFLES) -> dict:
    """The rows' top-2 PCA share (in %) beside both structureless nulls of their shape: its mean and maximum
    over `draws` column-permuted and `draws` Gaussian data sets, and how many times the mean (`ratio_`) and the
    maximum (`over_`) the share is."""
    x = _points(x)
    share = 100 * top_share(x)
    out = {"share": share, "n": x.shape[0], "dim": x.shape[1], "draws": draws}
    for key, kind in (("perm", "column-permuted"), ("gauss", "gaussian")):
        null = 100 * structureless_shares(x, kind, draws, seed)
        out.update({f"{key}_mean": float(null.mean()), f"{key}_hi": float(null.max()),
                    f"ratio_{key}": share / float(null.mean()), f"over_{key}": share / float(null.max())})
    return out
