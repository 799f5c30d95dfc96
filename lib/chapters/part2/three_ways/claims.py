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
from lib.claims.registry import EVERY_RUN, NO_RUN, THIS_RUN, claim, listed
from lib.errors import require
from lib.claims.words import Q
from lib.chapters.part2.three_ways.runs import EPITHETS, corners
from lib.chapters.part2.three_ways import clusters
from lib.chapters.part2.three_ways.views import SEEDS, neighbours_kept, point_set, run
from lib.content.corpora import calling_game as cg

FREQ_ROUNDS = 2000


def _rank_corr(x, y) -> float:
    from scipy.stats import spearmanr   # scipy is imported when measured, not with the claims
    return float(spearmanr(x, y).statistic)


PC1_BOOTSTRAP = 1000   # resamples of the tokens for the interval of PC1's lead


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
    # how sure the lead is, over 28 tokens: the tokens resampled with replacement, the lead each time
    boot = np.random.default_rng(seed)
    leads = []
    for _ in range(PC1_BOOTSTRAP):
        at = boot.integers(0, len(pc1), len(pc1))
        if absurd[at].std() > 0 and log_freq[at].std() > 0:
            leads.append(abs(np.corrcoef(pc1[at], absurd[at])[0, 1]) - abs(np.corrcoef(pc1[at], log_freq[at])[0, 1]))
    lead_lo, lead_hi = (float(q) for q in np.percentile(leads, [2.5, 97.5]))
    # the sign of a component is arbitrary: compare sizes
    return {"r_freq": abs(r_freq), "r_absurd": abs(r_absurd), "rank_freq": abs(_rank_corr(pc1, log_freq)),
            "lead_lo": lead_lo, "lead_hi": lead_hi, "bootstrap": PC1_BOOTSTRAP,
            # the two correlations of one run go together: the page prints their difference over runs
            "lead": abs(r_absurd) - abs(r_freq), "lead_back": abs(r_freq) - abs(r_absurd),
            "rounds": FREQ_ROUNDS, "n_absurd": int(absurd.sum()), "n": len(ps.labels)}


claim("three-ways.pc1-absurd", "three-ways",
      "The first component's coordinate separates the {n_absurd:.0f} absurd words from the other tokens "
      "(correlation {r_absurd:.2f} with being an absurd word, in size) more than it follows the logarithm of "
      "how often each token occurs in {rounds:,.0f} seeded rounds ({r_freq:.2f}; rank correlation {rank_freq:.2f})",
      words={"more than it follows the logarithm of how often each token occurs": Q("r_absurd") > Q("r_freq")},
      note="|corr(PC1, absurd)| > |corr(PC1, log frequency)|; the rounds that count the frequencies are seeded",
      scope=THIS_RUN, models=('calling-game',))(
    _pc1_numbers)

claim("three-ways.pc1-over-runs", "three-ways",
      "On {runs}, the first component follows the absurd words more than the tokens' frequency, by more than the "
      "28 tokens leave in doubt: its correlation with being an absurd word is larger, in size, than with the "
      "logarithm of the frequency, by {lead:.2f}, and the 95% bootstrap interval of that lead, the tokens "
      "resampled, stays above 0",
      words={"follows the absurd words more than the tokens' frequency, by more than the 28 tokens leave in doubt":
             Q("lead_lo") > 0,
             "is larger, in size, than with the logarithm of the frequency, by {lead:.2f}": Q("lead") > 0,
             "stays above 0": Q("lead_lo") > 0},
      others="the lead of the absurd words is {lead:.2f}, which resampling the tokens cannot tell from none, or "
             "turns the other way",
      setup=("the tokens resampled", "which resampling the tokens cannot tell from none, or turns the other way"),
      note="on each run of the panel, |corr(PC1, absurd)| - |corr(PC1, log frequency)|, its 95% bootstrap interval "
           "(1,000 resamples of the 28 tokens) above 0",
      scope=EVERY_RUN, models=('calling-game',))(_pc1_numbers)


@claim("three-ways.tsne-distances-survive", "three-ways",
       "On the known clusters, the order of the distances from tight (near, then wide, then far) is kept on "
       "{kept_10:.0f} of {seeds:.0f} seeds at perplexity 10, where `far` is drawn {far_10_lo:.2f} to "
       "{far_10_hi:.2f} times as far as `near` (the data: {true_far:.2f}). At perplexity 20, each point's "
       "neighbourhood as large as its cluster, it is kept on {kept_20:.0f} of {seeds:.0f}, and at 30 on "
       "{kept_30:.0f}, with `far` drawn {far_30_lo:.2f} to {far_30_hi:.2f} times as far",
       words={"is kept on {kept_10:.0f} of {seeds:.0f} seeds at perplexity 10": Q("kept_10") < Q("seeds"),
              "it is kept on {kept_20:.0f} of {seeds:.0f}, and at 30 on {kept_30:.0f}":
              (Q("kept_20").eq(Q("seeds")), Q("kept_30").eq(Q("seeds")))},
       setup=("times as far as `near`", "each point's neighbourhood as large as its cluster"),
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
       "{agree_lo:.0f} to {agree_hi:.0f} tokens the same nearest neighbour on the page, at least half of them, and at "
       "perplexities 5, 10 and 15 each layout keeps {kept_lo:.0f}% to {kept_hi:.0f}% of each token's five true "
       "nearest neighbours, more than any layout at the degenerate {top:.0f} ({top_kept_hi:.0f}% at most) and more "
       "than three times what a random scatter keeps on average ({chance:.0f}%)",
       words={"tokens the same nearest neighbour on the page, at least half of them": Q("agree_lo") >= Q("n") / 2,
              "more than any layout at the degenerate {top:.0f} ({top_kept_hi:.0f}% at most)":
              Q("kept_lo") > Q("top_kept_hi"),
              "more than three times what a random scatter keeps on average": Q("kept_lo") > 3 * Q("chance")},
       seeded=False,
       note="stored converged t-SNE runs of the calling-game rows: seeds agree on most nearest neighbours at "
            "perplexity 5; ordinary perplexities keep more true neighbours than any degenerate run",
       scope=THIS_RUN, models=('calling-game',))
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
PLANE_ROLES = ("player", "epithet")  # the kinds of token the plane is built from, and its rivals too


@functools.lru_cache(maxsize=None)
def _plane_numbers(seed):
    """The concept plane of the run in use against planes at random, inside the rows' span and built the same
    way from random tokens (`PLANE_DRAWS` of each, drawn with `seed`)."""
    lm = lib.load("calling-game")
    tokens = list(lm.vocab.tokens)
    E = lm.model.W_E.detach().double().numpy()
    v = {w: E[i] for i, w in enumerate(tokens)}
    plane = concept_plane(E, direction(v, ["Paolo"], ["Pietro"]), direction(v, ["Tarso", "Cefa"], ["capo", "vice"]))
    inside = nulls.in_span_planes(E, PLANE_DRAWS, seed)
    # role-matched: the plane is built from players and epithets, so its rivals are built from them too (not from
    # the absurd words or the special tokens, which sit apart and would hand the rivals spread for free)
    roles = point_set("calling-game")
    require(list(roles.labels) == tokens, "the map's rows are the vocabulary's, in its order")
    pool = [i for i, g in enumerate(roles.groups) if g in PLANE_ROLES]
    built = nulls.same_construction_planes(E, PLANE_RECIPE, PLANE_DRAWS, seed, pool=pool)
    across = random_plane_spread(E, PLANE_DRAWS, seed)
    return {"spread": 100 * plane.spread, "across_mean": 100 * float(across.mean()),
            "in_mean": 100 * float(inside.mean()), "in_95": 100 * float(np.percentile(inside, 95)),
            "in_pct": nulls.percentile_of(plane.spread, inside), "sc_median": 100 * float(np.median(built)),
            "sc_pct": nulls.percentile_of(plane.spread, built), "draws": PLANE_DRAWS,
            "span": len(nulls.span_basis(E)), "n": 28, "dim": E.shape[1]}


claim("three-ways.plane-vs-nulls", "three-ways",
      "The concept plane holds {spread:.1f}% of the spread. Planes drawn at random across the {dim:.0f} dimensions "
      "average {across_mean:.1f}%, but the {n:.0f} rows vary along only {span:.0f} directions: planes drawn at "
      "random inside those average {in_mean:.1f}% (their 95th percentile {in_95:.1f}%), and the concept plane beats "
      "{in_pct:.0f}% of them. Planes built the way it was built, from players and epithets drawn at random (one "
      "minus another; two minus two others), hold a median of {sc_median:.1f}%, and it beats only {sc_pct:.0f}% of "
      "those "
      "({draws:,.0f} planes of each kind, drawn with seed 0)",
      words={"but the {n:.0f} rows vary along only {span:.0f} directions": Q("span") < Q("dim"),
             "the concept plane beats {in_pct:.0f}% of them": Q("in_pct") > 50,
             "it beats only {sc_pct:.0f}% of those": Q("sc_pct") < 50},
      seeded=False,
      note="the shipped run's concept plane beats most in-span random planes and fewer than half of the planes built "
           "from random players and epithets the same way",
      scope=THIS_RUN, models=('calling-game',))(lambda seed: _plane_numbers(0))

claim("three-ways.plane-over-runs", "three-ways",
      "On {runs}, the concept plane beats more than half of the planes drawn inside the rows' span "
      "({in_pct:.0f}%) and fewer than half of the planes built the same way from random players and epithets "
      "({sc_pct:.0f}%)",
      words={"beats more than half of the planes drawn inside the rows' span": Q("in_pct") > 50,
             "fewer than half of the planes built the same way from random players and epithets": Q("sc_pct") < 50},
      others="its share of the spread sits at the {in_pct:.0f}th percentile of the in-span planes and the "
             "{sc_pct:.0f}th of the planes built from random players and epithets",
      seeded=False, note="the concept plane against both nulls, on each run of the panel",
      scope=EVERY_RUN, models=('calling-game',))(lambda seed: _plane_numbers(0))

claim("three-ways.plane-unremarkable", "three-ways",
      "On {runs}, the concept plane is not beyond the 95th percentile of the in-span planes either ({in_pct:.0f}% "
      "of them beaten): its share of the spread is not the mark of a direction the data prefers",
      words={"is not beyond the 95th percentile of the in-span planes either": Q("in_pct") < 95,
             "its share of the spread is not the mark of a direction the data prefers": Q("in_pct") < 95},
      others="its share is at the {in_pct:.0f}th percentile of the in-span planes",
      seeded=False, note="the concept plane's spread is below the 95th percentile of in-span random planes",
      scope=EVERY_RUN, models=('calling-game',))(lambda seed: _plane_numbers(0))


claim("three-ways.pca-share-vs-permuted", "three-ways",
      "On {runs}, the top two components hold {share:.1f}% of the variance of the {n:.0f} rows, more than any of "
      "{draws:.0f} data sets of their shape with no structure: {over_gauss:.1f} times the largest share that points "
      "drawn independently give, and {over_perm:.1f} times the largest that the rows' own columns give, each shuffled "
      "on its own (the fairer null)",
      words={"more than any of {draws:.0f} data sets of their shape with no structure":
             (Q("over_gauss") > 1, Q("over_perm") > 1)},
      others="the top two components hold {share:.1f}%, {over_perm:.1f} times the largest share of the shuffled "
             "columns",
      note="the rows' top-2 PCA share exceeds every one of 100 column-permuted and 100 Gaussian data sets of the "
           "same shape",
      scope=EVERY_RUN, models=('calling-game',))(
    lambda seed: nulls.top_share_against_nulls(point_set("calling-game").vectors, seed))


NOISE_SEEDS = (0, 1, 2)


@functools.lru_cache(maxsize=1)
def _noise_map_numbers():
    """The real rows' layouts beside those of Gaussian noise of their shape, each 2-D layout measured the same
    way: k-means' silhouette, and that silhouette beyond a Gaussian cloud of the layout's own spread."""
    X = point_set("calling-game").vectors
    real = [run("calling-game", 5, s).layout for s in SEEDS]
    real_pca = pca(X, 2).coords
    noise = [nulls.noise_map(X, "gaussian", 5, s) for s in NOISE_SEEDS]
    tsne_kept = [100 * neighbours_kept(X, Z) for Z in real]
    beyond = lambda Z: nulls.clumps_beyond_chance(Z, 4)  # noqa: E731
    return {"seeds": len(NOISE_SEEDS), "dim": X.shape[1],
            "noise_tsne_lo": min(m.tsne_clumpy for m in noise), "noise_tsne_hi": max(m.tsne_clumpy for m in noise),
            "noise_pca_lo": min(m.pca_clumpy for m in noise), "noise_pca_hi": max(m.pca_clumpy for m in noise),
            "noise_tsne_beyond_hi": max(beyond(m.tsne) for m in noise),
            "noise_pca_beyond_hi": max(beyond(m.pca) for m in noise),
            "real_tsne_beyond_lo": min(beyond(Z) for Z in real), "real_tsne_beyond_hi": max(beyond(Z) for Z in real),
            "real_pca_beyond": beyond(real_pca), "tsne_kept_lo": min(tsne_kept), "tsne_kept_hi": max(tsne_kept),
            "pca_kept": 100 * nulls.neighbours_kept(X, real_pca),
            "noise_tsne_kept_lo": 100 * min(m.tsne_kept for m in noise),
            "noise_tsne_kept_hi": 100 * max(m.tsne_kept for m in noise),
            "noise_pca_kept_hi": 100 * max(m.pca_kept for m in noise)}


claim("three-ways.noise-map", "three-ways",
      "Any scatter looks clumpy to k-means: the silhouette of four k-means clusters (0 for no clusters, 1 for "
      "tight, far-apart ones) is {noise_tsne_lo:.2f} to {noise_tsne_hi:.2f} on the t-SNE layouts of points with no "
      "structure ({seeds:.0f} draws of Gaussian noise of the rows' shape, perplexity 5) and {noise_pca_lo:.2f} to "
      "{noise_pca_hi:.2f} on their PCA planes, which are round clouds. Measured against a Gaussian cloud of each "
      "layout's own spread, noise's layouts have no clumps beyond chance ({noise_tsne_beyond_hi:+.2f} at most for "
      "t-SNE, {noise_pca_beyond_hi:+.2f} for PCA), and the real rows' do: {real_tsne_beyond_lo:+.2f} to "
      "{real_tsne_beyond_hi:+.2f} on their t-SNE layouts, {real_pca_beyond:+.2f} on their PCA plane. What t-SNE "
      "keeps is neighbours: {tsne_kept_lo:.0f}% to {tsne_kept_hi:.0f}% of each token's five nearest, against "
      "{pca_kept:.0f}% on PCA's plane (on the noise, {noise_tsne_kept_lo:.0f}% to {noise_tsne_kept_hi:.0f}% "
      "against {noise_pca_kept_hi:.0f}% at most)",
      words={"noise's layouts have no clumps beyond chance ({noise_tsne_beyond_hi:+.2f} at most for t-SNE, "
             "{noise_pca_beyond_hi:+.2f} for PCA), and the real rows' do":
             (Q("real_tsne_beyond_lo") > Q("noise_tsne_beyond_hi"), Q("real_pca_beyond") > Q("noise_pca_beyond_hi"),
              Q("noise_tsne_beyond_hi") < 0.1, Q("real_tsne_beyond_lo") > 0.1),
             "Any scatter looks clumpy to k-means": (Q("noise_tsne_lo") > 0.25, Q("noise_pca_lo") > 0.25),
             "against {pca_kept:.0f}% on PCA's plane": Q("tsne_kept_lo") > Q("pca_kept"),
             "against {noise_pca_kept_hi:.0f}% at most": Q("noise_tsne_kept_lo") > Q("noise_pca_kept_hi")},
      setup=("0 for no clusters", "points with no structure"),
      seeded=False,
      note="k-means silhouettes of 2-D layouts against Gaussian clouds of their own spread: noise's t-SNE and PCA "
           "layouts no clumpier than chance (under 0.1 beyond), the real rows' t-SNE layouts clumpier than every "
           "noise layout; t-SNE keeps more true neighbours than PCA's plane",
      scope=THIS_RUN, models=('calling-game',))(lambda seed: _noise_map_numbers())


# ----------------------------------------------------------------------------- over the panel of runs
@claim("three-ways.corners-over-runs", "three-ways",
       "On {runs}, all four epithets sit in their roles' corners of the plane",
       words={"all four epithets sit in their roles' corners": Q("in_corner").eq(4)},
       others="{strays} leaves its corner",
       seeded=False, scope=EVERY_RUN, models=("calling-game",),
       note="the four epithets' corners of the concept plane, on each run of the panel")
def _corners_over_runs(seed):
    r = corners()
    return {"in_corner": len(r["in_corner"]), "strays": listed([w for w in EPITHETS if w not in r["in_corner"]]),
            "at": [r["at"][w] for w in EPITHETS]}
