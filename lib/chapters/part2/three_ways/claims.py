"""The claims of the chapter `chapters/part2/three-ways.md`, each with its measurement."""
from __future__ import annotations

import collections
import functools
import itertools
import random

import numpy as np

import lib
from lib.analysis import nulls
from lib.analysis.maps import concept_plane, direction, nearest_indices, pca, random_plane_spread
from lib.chapters.part2.what_an_embedding_is.claims import embedding_runs
from lib.claims.registry import EVERY_RUN, NO_RUN, THIS_RUN, claim, listed
from lib.chapters.part2.three_ways.runs import EPITHETS, epithet_corners
from lib.chapters.part2.three_ways import clusters
from lib.chapters.part2.three_ways.views import SEEDS, neighbours_kept, point_set, run
from lib.content.corpora import calling_game as cg

FREQ_ROUNDS = 2000


def _rank_corr(x, y) -> float:
    from scipy.stats import spearmanr   # scipy is imported when measured, not with the claims
    return float(spearmanr(x, y).statistic)


@functools.lru_cache(maxsize=None)
def _pc1_numbers(seed: int) -> dict:
    ps = point_set("calling-game")
    p = pca(ps.vectors)
    pc1 = p.coords[:, 0]
    rng = random.Random(seed)
    counts = collections.Counter()
    for _ in range(FREQ_ROUNDS):
        counts.update(cg.sample_round(rng))
    log_freq = np.array([np.log1p(counts[t]) for t in ps.labels])
    absurd = np.array([g == "absurd" for g in ps.groups], float)
    r_freq = float(np.corrcoef(pc1, log_freq)[0, 1])
    r_absurd = float(np.corrcoef(pc1, absurd)[0, 1])
    # the sign of a component is arbitrary: compare sizes
    return {"r_freq": abs(r_freq), "r_absurd": abs(r_absurd), "rank_freq": abs(_rank_corr(pc1, log_freq)),
            "rounds": FREQ_ROUNDS, "n_absurd": int(absurd.sum()), "n": len(ps.labels)}


claim("three-ways.pc1-absurd", "three-ways",
      "The first component's coordinate separates the {n_absurd:.0f} absurd words from the other tokens "
      "(correlation {r_absurd:.2f} with being an absurd word, in size) more than it follows the logarithm of "
      "how often each token occurs in {rounds:,.0f} seeded rounds ({r_freq:.2f}; rank correlation {rank_freq:.2f})",
      holds=lambda x: x["r_absurd"] > x["r_freq"],
      note="|corr(PC1, absurd)| > |corr(PC1, log frequency)|; the rounds that count the frequencies are seeded",
      scope=THIS_RUN, models=('calling-game',))(
    _pc1_numbers)


@claim("three-ways.tsne-distances-survive", "three-ways",
       "On the known clusters, the order of the distances from tight (near, then wide, then far) is kept on "
       "{kept_10:.0f} of {seeds:.0f} seeds at perplexity 10, where `far` is drawn {far_10_lo:.2f} to "
       "{far_10_hi:.2f} times as far as `near` (the data: {true_far:.2f}). At perplexity 20, each point's "
       "neighbourhood as large as its cluster, it is kept on {kept_20:.0f} of {seeds:.0f}, and at 30 on "
       "{kept_30:.0f}, with `far` drawn {far_30_lo:.2f} to {far_30_hi:.2f} times as far",
       holds=lambda x: x["kept_10"] < x["seeds"] and x["kept_20"] == x["seeds"] and x["kept_30"] == x["seeds"],
       seeded=False,
       note="stored converged t-SNE runs of the known clusters: the distance order fails at perplexity 10 and "
            "holds on every seed at 20 and 30",
       scope=NO_RUN)
def _(seed):
    kc = point_set("known-clusters")
    groups = list(kc.groups)

    def ratio(Z, other):
        return clusters.centre_distance(Z, groups, "tight", other) / clusters.centre_distance(Z, groups, "tight", "near")

    out = {"seeds": len(SEEDS), "true_far": ratio(kc.vectors, "far")}
    for perp in (10, 20, 30):
        layouts = [run("known-clusters", perp, s).layout for s in SEEDS]
        out[f"kept_{perp}"] = sum(1 < ratio(Z, "wide") < ratio(Z, "far") for Z in layouts)
        fars = [ratio(Z, "far") for Z in layouts]
        out[f"far_{perp}_lo"], out[f"far_{perp}_hi"] = min(fars), max(fars)
    return out


@claim("three-ways.tsne-seeds", "three-ways",
       "Over the {seeds:.0f} stored seeds of the {n:.0f} rows, each pair of layouts at perplexity 5 gives "
       "{agree_lo:.0f} to {agree_hi:.0f} tokens the same nearest neighbour on the page, and at perplexities 5, 10 "
       "and 15 every layout keeps {kept_lo:.0f}% to {kept_hi:.0f}% of each token's five true nearest neighbours; "
       "at the degenerate {top:.0f}, {top_kept_lo:.0f}% to {top_kept_hi:.0f}% (a random scatter keeps "
       "{chance:.0f}% on average)",
       holds=lambda x: x["agree_lo"] >= x["n"] / 2 and x["kept_lo"] > x["top_kept_hi"] and x["kept_lo"] > 3 * x["chance"],
       seeded=False,
       note="stored converged t-SNE runs of the calling-game rows: seeds agree on most nearest neighbours at "
            "perplexity 5; ordinary perplexities keep more true neighbours than any degenerate run",
       scope=EVERY_RUN, models=('calling-game',))
def _(seed):
    X = point_set("calling-game").vectors
    top = len(X) - 1

    def agreement(perp):
        nn = [nearest_indices(run("calling-game", perp, s).layout, 1)[:, 0] for s in SEEDS]
        return [int((a == b).sum()) for a, b in itertools.combinations(nn, 2)]

    kept = [100 * neighbours_kept(X, run("calling-game", p, s).layout) for p in (5, 10, 15) for s in SEEDS]
    top_kept = [100 * neighbours_kept(X, run("calling-game", top, s).layout) for s in SEEDS]
    return {"seeds": len(SEEDS), "n": len(X), "agree_lo": min(agreement(5)), "agree_hi": max(agreement(5)),
            "kept_lo": min(kept), "kept_hi": max(kept), "top": top, "top_agree_lo": min(agreement(top)),
            "top_agree_hi": max(agreement(top)), "top_kept_lo": min(top_kept), "top_kept_hi": max(top_kept),
            "chance": 100 * 5 / (len(X) - 1)}


# ----------------------------------------------------------------------------- against fair nulls
PLANE_RECIPE = ((1, 1), (2, 2))     # Paolo - Pietro; (Tarso + Cefa)/2 - (capo + vice)/2
PLANE_DRAWS = 1000


@functools.lru_cache(maxsize=None)
def _plane_numbers(seed):
    tokens = list(lib.load("calling-game").vocab.tokens)
    runs = embedding_runs()["calling-game"]
    spreads, in_mean, in_95, in_pct, sc_median, sc_pct = [], [], [], [], [], []
    for E in runs:
        v = {w: E[i] for i, w in enumerate(tokens)}
        plane = concept_plane(E, direction(v, ["Paolo"], ["Pietro"]), direction(v, ["Tarso", "Cefa"], ["capo", "vice"]))
        inside = nulls.in_span_planes(E, PLANE_DRAWS, seed)
        built = nulls.same_construction_planes(E, PLANE_RECIPE, PLANE_DRAWS, seed)
        spreads.append(100 * plane.spread)
        in_mean.append(100 * float(inside.mean()))
        in_95.append(100 * float(np.percentile(inside, 95)))
        in_pct.append(nulls.percentile_of(plane.spread, inside))
        sc_median.append(100 * float(np.median(built)))
        sc_pct.append(nulls.percentile_of(plane.spread, built))
    across = random_plane_spread(runs[0], PLANE_DRAWS, seed)
    return {"runs": len(runs), "spread": spreads[0], "spread_lo": min(spreads), "spread_hi": max(spreads),
            "across_mean": 100 * float(across.mean()), "in_mean": in_mean[0], "in_95": in_95[0], "in_pct": in_pct[0],
            "in_pct_lo": min(in_pct), "in_pct_hi": max(in_pct), "sc_median": sc_median[0],
            "sc_median_lo": min(sc_median), "sc_median_hi": max(sc_median), "sc_pct": sc_pct[0],
            "sc_pct_lo": min(sc_pct), "sc_pct_hi": max(sc_pct), "draws": PLANE_DRAWS, "span": len(nulls.span_basis(runs[0]))}


claim("three-ways.plane-vs-nulls", "three-ways",
      "The concept plane holds {spread:.1f}% of the spread. Planes drawn at random across all {dim:.0f} dimensions "
      "average {across_mean:.1f}%, but the {n:.0f} rows vary along only {span:.0f} directions: planes drawn at "
      "random inside those average {in_mean:.1f}% (95 in 100 below {in_95:.1f}%), and the concept plane beats "
      "{in_pct:.0f}% of them. Planes built the way it was built, from random tokens (one token minus another; two "
      "tokens minus two others), hold a median of {sc_median:.1f}%, and it beats only {sc_pct:.0f}% of those. Over "
      "{runs:.0f} training runs of the model it beats {in_pct_lo:.0f}% to {in_pct_hi:.0f}% of in-span planes and "
      "{sc_pct_lo:.0f}% to {sc_pct_hi:.0f}% of same-construction planes ({draws:,.0f} of each, drawn with seed 0)",
      holds=lambda x: x["sc_pct_hi"] < 50 and x["in_pct_lo"] > 50, seeded=False,
      note="on every calling-game run the concept plane beats most in-span random planes and fewer than half of "
           "the planes built from random tokens the same way",
      scope=EVERY_RUN, models=('calling-game', 'zero-layer'))(
    lambda seed: {**_plane_numbers(0), "n": 28, "dim": 64})


claim("three-ways.pca-share-vs-permuted", "three-ways",
      "The top two components hold {share:.1f}% of the variance of the {n:.0f} rows. Points with no structure of "
      "the same shape ({n:.0f} in {dim:.0f} dimensions, every coordinate drawn independently) give {gauss_mean:.1f}% "
      "on average ({ratio_gauss:.1f} times less) and at most {gauss_hi:.1f}% in {draws:.0f} draws; the fairer null "
      "keeps every coordinate's own values and shuffles each column on its own, and gives {perm_mean:.1f}% on "
      "average ({ratio_perm:.1f} times less) and at most {perm_hi:.1f}%",
      holds=lambda x: x["share"] > x["perm_hi"] and x["share"] > x["gauss_hi"],
      note="the rows' top-2 PCA share exceeds every one of 100 column-permuted and 100 Gaussian data sets of the "
           "same shape",
      scope=EVERY_RUN, models=('calling-game',))(lambda seed: nulls.top_share_against_nulls(point_set("calling-game").vectors, seed))


NOISE_SEEDS = (0, 1, 2)


@functools.lru_cache(maxsize=1)
def _noise_map_numbers():
    X = point_set("calling-game").vectors
    real = [run("calling-game", 5, s).layout for s in SEEDS]
    noise = [nulls.noise_map(X, "gaussian", 5, s) for s in NOISE_SEEDS]
    tsne_kept = [100 * neighbours_kept(X, Z) for Z in real]
    return {"seeds": len(NOISE_SEEDS), "noise_clumpy_lo": min(m.tsne_clumpy for m in noise),
            "noise_clumpy_hi": max(m.tsne_clumpy for m in noise),
            "noise_raw_hi": max(nulls.clumpiness(m.data, 4) for m in noise),
            "real_clumpy_lo": min(nulls.clumpiness(Z, 4) for Z in real), "real_clumpy_hi": max(nulls.clumpiness(Z, 4) for Z in real),
            "raw_clumpy": nulls.clumpiness(X, 4), "tsne_kept_lo": min(tsne_kept), "tsne_kept_hi": max(tsne_kept),
            "pca_kept": 100 * nulls.neighbours_kept(X, pca(X, 2).coords),
            "noise_tsne_kept_lo": 100 * min(m.tsne_kept for m in noise), "noise_tsne_kept_hi": 100 * max(m.tsne_kept for m in noise),
            "noise_pca_kept_lo": 100 * min(m.pca_kept for m in noise), "noise_pca_kept_hi": 100 * max(m.pca_kept for m in noise)}


claim("three-ways.noise-map", "three-ways",
      "Noise makes clumps too. Clumpiness here is the silhouette of a layout's four best k-means clusters (0 for "
      "no clusters, 1 for tight, far-apart ones). Points with no structure, of the same shape, have "
      "{noise_raw_hi:.2f} or less in their own {dim:.0f} dimensions, but their t-SNE layouts (perplexity 5, "
      "{seeds:.0f} draws) have {noise_clumpy_lo:.2f} to {noise_clumpy_hi:.2f}: about as clumpy as the real rows in "
      "their own space ({raw_clumpy:.2f}). The real rows' t-SNE layouts are clumpier still ({real_clumpy_lo:.2f} to "
      "{real_clumpy_hi:.2f}). What t-SNE keeps is neighbours: {tsne_kept_lo:.0f}% to {tsne_kept_hi:.0f}% of each "
      "token's five nearest, against {pca_kept:.0f}% on PCA's plane (on the noise, {noise_tsne_kept_lo:.0f}% to "
      "{noise_tsne_kept_hi:.0f}% against {noise_pca_kept_lo:.0f}% to {noise_pca_kept_hi:.0f}%)",
      holds=lambda x: (x["noise_clumpy_lo"] > 3 * x["noise_raw_hi"] and x["real_clumpy_lo"] > x["noise_clumpy_hi"]
                       and x["tsne_kept_lo"] > x["pca_kept"]),
      seeded=False,
      note="t-SNE of same-shape Gaussian noise is over three times clumpier than the noise itself; the real rows' "
           "layouts are clumpier than every noise layout; t-SNE keeps more true neighbours than PCA's plane",
      scope=EVERY_RUN, models=('calling-game',))(
    lambda seed: {**_noise_map_numbers(), "dim": 64})


# ----------------------------------------------------------------------------- over the shipped runs
def listed(names: list[str]) -> str:
    return "none" if not names else names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@claim("three-ways.corners-over-runs", "three-ways",
       "All four epithets sit in their roles' corners on {all_four:.0f} of the {runs:.0f} shipped runs; on the "
       "others {strays} leaves its corner",
       holds=lambda x: x["all_four"] > x["runs"] / 2, seeded=False, scope=EVERY_RUN, models=("calling-game",),
       covers_runs=True,
       note="the four epithets' corners of the concept plane on every shipped run of the calling game: most runs")
def _corners_over_runs(seed):
    per = epithet_corners()
    strays = sorted({w for r in per.values() for w in EPITHETS if w not in r["in_corner"]})
    return {"runs": len(per), "all_four": sum(len(r["in_corner"]) == len(EPITHETS) for r in per.values()),
            "strays": listed(strays)}
