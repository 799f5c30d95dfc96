"""The claims of the chapter `chapters/part2/three-ways.md`, each with its measurement."""
from __future__ import annotations

import collections
import functools
import itertools
import random

import numpy as np

from lib.analysis.maps import nearest_indices, pca
from lib.analysis.maps.pca import share_vs_noise
from lib.analysis.maps.views import SEEDS, neighbours_kept, run
from lib.claims.registry import claim
from lib.content import clusters
from lib.content.corpora import calling_game as cg
from lib.content.point_sets import point_set

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
      note="|corr(PC1, absurd)| > |corr(PC1, log frequency)|; the rounds that count the frequencies are seeded")(
    _pc1_numbers)


claim("three-ways.pca-share-vs-noise", "three-ways",
      "The top two components hold {share:.1f}% of the variance of the {n:.0f} rows; points with no structure "
      "({n:.0f} points in {dim:.0f} dimensions, every coordinate drawn independently) give {noise_mean:.1f}% "
      "on average and at most {noise_hi:.1f}% in {draws:.0f} draws",
      holds=lambda x: x["share"] > x["noise_hi"],
      note="the rows' top-2 PCA share exceeds every one of 200 structureless draws of the same shape")(
    lambda seed: share_vs_noise(point_set("calling-game").vectors, seed))


@claim("three-ways.tsne-distances-survive", "three-ways",
       "On the known clusters, the order of the distances from tight (near, then wide, then far) is kept on "
       "{kept_10:.0f} of {seeds:.0f} seeds at perplexity 10, where `far` is drawn {far_10_lo:.2f} to "
       "{far_10_hi:.2f} times as far as `near` (the data: {true_far:.2f}). At perplexity 20, each point's "
       "neighbourhood as large as its cluster, it is kept on {kept_20:.0f} of {seeds:.0f}, and at 30 on "
       "{kept_30:.0f}, with `far` drawn {far_30_lo:.2f} to {far_30_hi:.2f} times as far",
       holds=lambda x: x["kept_10"] < x["seeds"] and x["kept_20"] == x["seeds"] and x["kept_30"] == x["seeds"],
       seeded=False,
       note="stored converged t-SNE runs of the known clusters: the distance order fails at perplexity 10 and "
            "holds on every seed at 20 and 30")
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
            "perplexity 5; ordinary perplexities keep more true neighbours than any degenerate run")
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
