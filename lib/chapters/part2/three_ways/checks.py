"""Self-checks for the chapter "Three ways to look"."""
from __future__ import annotations

from functools import partial
import numpy as np

from lib.analysis.maps import gram_schmidt, nearest_indices, pca, spread_captured
from lib.exercises import Feedback, check_choice, check_number
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck, read_like
from lib.analysis.maps.tsne import tsne_run
from lib.content import real_words
from lib.chapters.part2.three_ways.clusters import centre_distance
from lib.chapters.part2.three_ways.views import SEEDS, layouts, plane_view, point_set, run
from lib.content.corpora import hand_wired as hw
from lib.model.store import load


# Investigate: the plane explorer gives one plane's share for the axes typed in it; which of six planes
# holds the most takes all six, compared.
EPITHETS = ("Tarso", "Cefa", "capo", "vice")
EPITHET_PLANES = tuple(f"{a} and {b}" for i, a in enumerate(EPITHETS) for b in EPITHETS[i + 1:])


def epithet_plane_spreads() -> dict[str, float]:
    """The share of the 28 rows' spread on each plane spanned by two epithets' rows."""
    return {name: plane_view("calling-game", *name.split(" and ")).spread for name in EPITHET_PLANES}


def _plane_values() -> Values:
    spreads = epithet_plane_spreads()
    best = max(spreads, key=spreads.get)
    return Values(best, options=EPITHET_PLANES, fields={"share": spreads[best]})


# The page computes the six spreads with the concept-plane explorer's view; the t-SNE exercises below
# read runs the library stores, which the page does not hold: the default site ships their values, the
# class site says to check them live.
WIDEST_PLANE = site_check(__name__, "widest_epithet_plane", rule="choice", compute="widestPlane", values=_plane_values,
                          args={"points": "calling-game", "planes": EPITHET_PLANES}, texts={
    "right": "{answer}: their plane holds {share:.3f} of the spread, more than any other pair of epithets.",
    "wrong": "the plane of {answer} is not the widest; build all six planes and compare their shares."})


def widest_epithet_plane(answer) -> Feedback:
    """Investigate: which two epithets' rows span the plane holding the largest share of the spread."""
    return WIDEST_PLANE.judge(answer)


def page_neighbour(coords, labels, word: str) -> str:
    """The token nearest to `word` on a 2-D page."""
    return labels[int(nearest_indices(coords, 1)[list(labels).index(word), 0])]


# Investigate: a word whose page neighbour the seed decides. The t-SNE explorer shows one seed's layout
# at a time (and its description names the first tokens' neighbours); the count needs all five, and
# the word's neighbour in the full space, which no picture shows.
SEED_WORD, SEED_PERPLEXITY = "banana", 10.0


def full_neighbour(points: str, word: str) -> str:
    """The token nearest to `word` in the full space of `points`, by straight-line distance."""
    ps = point_set(points)
    labels = list(ps.labels)
    d = ((ps.vectors - ps.vectors[labels.index(word)]) ** 2).sum(1)
    d[labels.index(word)] = np.inf
    return labels[int(d.argmin())]


def seeds_keeping(points: str, word: str, perplexity: float) -> int:
    """In how many of the stored seeds' layouts `word`'s nearest token on the page is its nearest in full."""
    labels = point_set(points).labels
    true = full_neighbour(points, word)
    return sum(page_neighbour(layouts(points, perplexity, [s])[0], labels, word) == true for s in SEEDS)


def _seed_values() -> Values:
    return Values(seeds_keeping("calling-game", SEED_WORD, SEED_PERPLEXITY), hints={"every": len(SEEDS)})


SEEDS_KEEPING = site_check(__name__, "seeds_keeping_neighbour", rule="whole", compute=None, values=_seed_values,
                           units=("seeds", "seed"),
                           what="The count", texts={
    "every": "not every seed keeps that neighbour: read " + SEED_WORD + "'s nearest token on each of the five pages."})


def seeds_keeping_neighbour(answer) -> Feedback:
    """Investigate: in how many of the five perplexity-10 layouts banana keeps its full-space nearest token."""
    return SEEDS_KEEPING.judge(answer)


# ------------------------------------------------------------------ predict: a degenerate perplexity
def nearest_kept(points: str, perplexity: float, seed: int) -> int:
    """How many points' nearest neighbour in the full space (by distance) is also their nearest on
    the t-SNE page drawn with `perplexity` from `seed` (a stored, converged run)."""
    x = point_set(points).vectors
    page = tsne_run(x, perplexity, seed).layout
    return int((nearest_indices(x, 1)[:, 0] == nearest_indices(page, 1)[:, 0]).sum())


def _kept_values() -> Values:
    return Values(nearest_kept("calling-game", 27.0, 0), hints={"ordinary": nearest_kept("calling-game", 5.0, 0)})


# An estimate from chance (one in 27 per token) comes within 2 of the count; an estimate from the
# ordinary perplexities does not.
DEGENERATE_KEPT = site_check(__name__, "degenerate_nearest_kept", rule="number", compute=None, values=_kept_values,
                             what="Your estimate", tol=2.0, texts={
    "ordinary": "that is about what an ordinary perplexity keeps; at this one every neighbourhood is the same flat "
                "spread over all the other points."})


def degenerate_nearest_kept(answer) -> Feedback:
    """Predict: at the degenerate perplexity (27, seed 0), how many of the 28 tokens keep their true
    nearest neighbour as their nearest on the page."""
    return DEGENERATE_KEPT.judge(answer)


# ------------------------------------------------------------------ predict: known clusters at a larger perplexity
KNOWN_CHOICES = ("data", "perplexity 10")


def far_over_near(layout) -> float:
    """How many times farther `far` is from `tight` than `near` is (between the clusters' means)."""
    groups = point_set("known-clusters").groups
    return centre_distance(layout, groups, "tight", "far") / centre_distance(layout, groups, "tight", "near")


def _closer_values() -> Values:
    truth = far_over_near(point_set("known-clusters").vectors)
    mean_at = {p: float(np.mean([far_over_near(run("known-clusters", p, s).layout) for s in SEEDS])) for p in (10, 50)}
    expected = "data" if abs(mean_at[50] - truth) < abs(mean_at[50] - mean_at[10]) else "perplexity 10"
    return Values(expected, options=tuple(KNOWN_CHOICES), fields={"at50": mean_at[50], "truth": truth, "at10": mean_at[10]})


KNOWN_DISTANCES_CLOSER = site_check(__name__, "known_distances_closer", rule="choice", compute=None,
                                    values=_closer_values, texts={
    "right": "Yes: at perplexity 50 the ratio averages {at50:.2f} over the five seeds, against {truth:.2f} in the "
             "data and {at10:.2f} at perplexity 10.",
    "wrong": "Not on these clusters. Count what a neighbourhood holds at perplexity 50: more points than one cluster "
             "has, so which clusters does each point now try to keep near?"})


def known_distances_closer(answer) -> Feedback:
    """Predict: at perplexity 50, is the page's far-over-near ratio (mean of the five converged seeds)
    closer to the data's or to perplexity 10's?"""
    return KNOWN_DISTANCES_CLOSER.judge(answer)


# ------------------------------------------------------------------ write: PCA by SVD
def library_pca(x, k) -> tuple[np.ndarray, np.ndarray]:
    """(the top k components as rows [k, dim], each one's share of the total variance [k])."""
    p = pca(np.asarray(x, dtype=float), k)
    return p.components, p.explained_ratio


def _read_pca(value, like):
    """The learner's (components, shares), each component's sign turned to match the library's:
    a component and its negative are the same axis."""
    components, shares = read_like(value, like)
    if components.shape == like[0].shape:
        signs = np.sign(np.einsum("kd,kd->k", components, like[0]))
        components = components * np.where(signs == 0, 1.0, signs)[:, None]
    return components, shares


def _pca_by_hand(x, k, *, centre=True, squared=True, of_kept=False, scale=False, rows_of="vt"):
    """PCA by SVD with switches, each switch one typical mistake (the defaults are right)."""
    x = np.asarray(x, dtype=float)
    c = x - x.mean(0) if centre else x
    if scale:
        c = c / c.std(0)
    u, s, vt = np.linalg.svd(c, full_matrices=False)
    var = s ** 2 if squared else s
    shares = var[:k] / (var[:k].sum() if of_kept else var.sum())
    components = {"vt": vt[:k], "v": vt.T[:k], "u": u[:, :k].T}[rows_of]
    return components, shares



def _pca_cases() -> list[Case]:
    rng = np.random.default_rng(21)
    cloud = rng.normal(size=(30, 7)) * np.linspace(3, 0.5, 7) + 4.0   # off-centre, distinct spreads
    E = load("calling-game").model.W_E.detach().double().numpy()
    return [Case((hw.designed_matrix().astype(float), 2), "the hand-wired table's 40 designed rows, k = 2"),
            Case((cloud, 3), "30 random points in 7 dimensions, far from the origin, k = 3"),
            Case((E, 2), "the shipped model's 28 embedding rows, k = 2"),
            Case((real_words.load().vectors.astype(float), 4), "the 84 real-language rows, k = 4"),
            Case((cloud[:5], 1), "5 points, k = 1"),
            Case((cloud[:, :3], 3), "30 points in 3 dimensions, every component (k = 3)")]


pca_by_svd = WriteCheck(
    name="pca_by_svd",
    cases=_pca_cases,
    reference=library_pca,
    read=_read_pca,
    rtol=1e-6, atol=1e-9,
    mistakes=(
        Mistake(partial(_pca_by_hand, centre=False),
                "the points were not centred: without subtracting their mean, component 1 points toward the "
                "mean instead of along the spread.", part=0),
        Mistake(partial(_pca_by_hand, squared=False),
                "the shares use the singular values; a component's variance is its singular value squared.", part=1),
        Mistake(partial(_pca_by_hand, of_kept=True),
                "the shares were divided by the variance of the k kept components; divide by the total variance "
                "of all of them.", part=1),
        Mistake(partial(_pca_by_hand, rows_of="v"),
                "the components are the columns of Vt, not its rows (np.linalg.svd returns V already transposed).",
                part=0),
        Mistake(partial(_pca_by_hand, rows_of="u"),
                "these are the points' coordinates (columns of U), not the components (rows of Vt).", part=0),
        Mistake(partial(_pca_by_hand, scale=True),
                "every dimension was also divided by its standard deviation; PCA here only centres the points.",
                part=0),
    ),
)


# ------------------------------------------------------------------ write: a plane built from rows, for the null
def _plane_share_by_hand(x, i, j, k, l, m, n, *, centre=True, orthogonal=True, half=True):
    """The share of spread on the plane of x_i - x_j and (x_k + x_l)/2 - (x_m + x_n)/2, with switches, each
    switch one typical mistake (the defaults are right)."""
    x = np.asarray(x, float)
    d1 = x[i] - x[j]
    d2 = (x[k] + x[l] - x[m] - x[n]) / (2 if half else 1)
    e1 = d1 / np.linalg.norm(d1)
    v = d2 - (d2 @ e1) * e1 if orthogonal else d2
    e2 = v / np.linalg.norm(v)
    c = x - x.mean(0) if centre else x
    return float(((c @ e1) ** 2 + (c @ e2) ** 2).sum() / (c ** 2).sum())


def _plane_cases() -> list[Case]:
    X = point_set("calling-game").vectors
    labels = list(point_set("calling-game").labels)
    at = labels.index
    rng = np.random.default_rng(5)
    far = rng.normal(size=(30, 6)) + np.array([20.0, 0, 0, 0, 0, 0])   # far from the origin: centring matters
    slanted = rng.normal(size=(25, 5)) @ np.diag([5.0, 4.0, 1.0, 0.5, 0.2])
    return [Case((X, at("Paolo"), at("Pietro"), at("Tarso"), at("Cefa"), at("capo"), at("vice")),
                 "the concept plane of the 28 calling-game rows"),
            Case((X, 3, 7, 1, 12, 20, 25), "rows 3 - 7 and 1 + 12 - 20 - 25 of the calling-game rows"),
            Case((far, 0, 1, 2, 3, 4, 5), "30 made-up points far from the origin"),
            Case((slanted, 0, 1, 0, 2, 1, 3), "25 made-up points whose two directions are far from perpendicular")]


plane_share = WriteCheck(
    name="plane_share",
    cases=_plane_cases,
    reference=lambda x, i, j, k, l, m, n: float(spread_captured(np.asarray(x, float), gram_schmidt(
        [np.asarray(x[i], float) - x[j], (np.asarray(x[k], float) + x[l] - x[m] - x[n]) / 2]))),
    mistakes=(
        Mistake(partial(_plane_share_by_hand, centre=False),
                "the rows were not centred: spread is measured from the rows' mean, so subtract it before projecting."),
        Mistake(partial(_plane_share_by_hand, orthogonal=False),
                "the second axis was not made perpendicular to the first, so the two projections count part of the "
                "spread twice: subtract its part along the first axis (Gram-Schmidt) before making it length 1."),
    ),
    invariants=(lambda case, got: None if 0 <= got <= 1 + 1e-9 else
                f"a share of spread lies between 0 and 1, and yours is {got:.4g}.",),
)
