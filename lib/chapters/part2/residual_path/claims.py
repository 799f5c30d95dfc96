"""The claims of the chapter `chapters/part2/residual-path.md`, each with its measurement.

Blocks switched off over later turns are `lib.analysis.head_survey.later_turn_blocks`, shared
with the lever chapter.
"""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.analysis import nulls
from lib.analysis.ablation import all_heads, head_name
from lib.analysis.lens import stage_residuals
from lib.analysis.head_survey import LATER_TURNS, later_turn_blocks, target_probs
from lib.analysis.patching import patch
from lib.analysis.trajectory import residual_trajectory
from lib.claims.registry import EVERY_RUN, THIS_RUN, claim
from lib.claims.words import Min, Q
from lib.content.corpora.calling_game import PLAYERS, epithet
from lib.content.prompt_sets import prompt_set

FIRST_TURN = "<BOS> Pietro chiama Paolo"
RESAMPLE_DRAWS = 20


@functools.lru_cache(maxsize=None)
def _first_turn_heads(seed):
    lm = lib.load("calling-game")
    heads = all_heads(lm.model)
    block0 = [h for h in heads if h[0] == 0]
    p = {f"{kind}_{name}": float(target_probs(lm, [FIRST_TURN], ["Tarso"], hs, (), kind)[0])
         for kind in ("zero", "mean") for name, hs in (("all", heads), ("b0", block0))}
    # resample ablation: RESAMPLE_DRAWS copies of the prompt in one batch, each with its own drawn round
    resampled = target_probs(lm, [FIRST_TURN] * RESAMPLE_DRAWS, ["Tarso"] * RESAMPLE_DRAWS, heads, (), "resample", seed)
    return {**p, "intact": float(target_probs(lm, [FIRST_TURN], ["Tarso"])[0]), "n_heads": len(heads),
            "draws": RESAMPLE_DRAWS, "resample_kept": int((resampled >= 0.5).sum()),
            "resample_median": float(np.median(resampled))}


claim("residual-path.first-turn-average-enough", "residual-path",
      "On the first turn, zeroing the four heads of block 0 leaves P(Tarso) at {zero_b0:.2f} and zeroing all "
      "{n_heads:.0f} heads {zero_all:.2f}. Mean ablation, each head's write replaced by its average at its position "
      "over the reference rounds, leaves {mean_all:.2f} with all {n_heads:.0f} off. Resample ablation, the writes "
      "of another round at each position, keeps P(Tarso) at 0.5 or more on {resample_kept:.0f} of {draws:.0f} drawn "
      "rounds (median {resample_median:.2f})",
      words={"zeroing all {n_heads:.0f} heads {zero_all:.2f}": Q("zero_all") < 0.5,
             "leaves {mean_all:.2f} with all {n_heads:.0f} off": Q("mean_all") > 0.9,
             "keeps P(Tarso) at 0.5 or more on {resample_kept:.0f} of {draws:.0f} drawn rounds":
             Q("resample_kept") >= Q("draws") / 2},
      note="first turn: P(Tarso) stays above 0.9 with every head mean-ablated and at 0.5 or more on most resampled "
           "rounds (the seed draws them); zeroing every head drops it below 0.5",
      scope=THIS_RUN, models=('calling-game',))(_first_turn_heads)


@claim("residual-path.first-turn-reads-caller", "residual-path",
       "Yet the model does read the caller on the first turn: with each of the {n:.0f} numbered players put in "
       "Pietro's place, P(Tarso) falls to at most {p_hi:.2f} on {fallen:.0f} of them, and patching one "
       "component's write at the last position from the real first turn into that run, the head that brings "
       "back most of the logit difference between Tarso and the game's epithet for that caller (vice) is {best} ({best_lo:.2f} "
       "to {best_hi:.2f} of it)",
       words={"P(Tarso) falls to at most {p_hi:.2f} on {fallen:.0f} of them": Q("fallen") >= Q("n") - 1,
              "the head that brings back most of the logit difference": Q("best_lo") > 0.5}, seeded=False,
       note="caller replaced by each numbered player: P(Tarso) falls; activation patching at the last "
            "position finds one block-0 head carrying most of the difference",
       scope=THIS_RUN, models=('calling-game',))
def _(seed):
    NUMBERS = [p for p in PLAYERS if p.isdigit()]
    lm = lib.load("calling-game")
    ps, best, fracs = [], [], []
    for number in NUMBERS:
        corrupted = FIRST_TURN.replace("Pietro", number)
        ps.append(float(target_probs(lm, [corrupted], ["Tarso"])[0]))
        pt = patch(lm, FIRST_TURN, corrupted, target="Tarso", against=epithet(number, "Paolo"))
        last = pt.heads[:, :, -1]
        layer, h = np.unravel_index(int(np.argmax(last)), last.shape)
        best.append(head_name((int(layer), int(h))))
        fracs.append(float(last[layer, h]))
    fallen = [p for p in ps if p < 0.5]
    return {"n": len(NUMBERS), "fallen": len(fallen), "p_hi": max(fallen) if fallen else 1.0,
            "best": " / ".join(dict.fromkeys(best)), "best_lo": min(fracs), "best_hi": max(fracs)}


@claim("residual-path.first-turn-mlps", "residual-path",
       "On the first turn, zeroing MLP 1, the largest push, leaves P(Tarso) at {zero_mlp1:.2f}, while mean "
       "ablation of MLP 1 leaves {mean_mlp1:.3f}; MLP 0 off leaves {zero_mlp0:.3f} zeroed and {mean_mlp0:.3f} "
       "mean-ablated",
       words={"zeroing MLP 1, the largest push, leaves P(Tarso) at {zero_mlp1:.2f}, while mean ablation of MLP 1 "
              "leaves {mean_mlp1:.3f}": (Q("zero_mlp1") > 0.5, Q("mean_mlp1") < 0.1),
              "MLP 0 off leaves {zero_mlp0:.3f} zeroed and {mean_mlp0:.3f} mean-ablated":
              (Q("zero_mlp0") < 0.1, Q("mean_mlp0") < 0.1)},
       seeded=False,
       note="first turn: both MLPs needed under mean ablation; zeroing MLP 1 alone leaves Tarso above 0.5",
       scope=THIS_RUN, models=('calling-game',))
def _(seed):
    lm = lib.load("calling-game")
    return {f"{kind}_mlp{m}": float(target_probs(lm, [FIRST_TURN], ["Tarso"], (), (m,), kind)[0])
            for kind in ("zero", "mean") for m in (0, 1)}


claim("residual-path.later-turn-block0", "residual-path",
      "On later turns where Pietro calls Paolo, the intact model gives Tarso at least {holds_at:.1f} on "
      "{tarso_held:.0f} of {tarso_n:.0f}; mean-ablating block 0's four heads loses {tarso_mean_attn0:.0f} of those "
      "(zeroing them, {tarso_zero_attn0:.0f}), mean-ablating block 1's heads {tarso_mean_attn1:.0f}, and each MLP "
      "mean-ablated loses {tarso_mean_mlp1:.0f} (MLP 1) and {tarso_mean_mlp0:.0f} (MLP 0)",
      words={"the intact model gives Tarso at least {holds_at:.1f} on {tarso_held:.0f} of {tarso_n:.0f}":
             Q("tarso_held") >= Q("tarso_n") / 2,
             "mean-ablating block 0's four heads loses {tarso_mean_attn0:.0f} of those":
             Q("tarso_mean_attn0") >= 0.9 * Q("tarso_held"),
             "mean-ablating block 1's heads {tarso_mean_attn1:.0f}": Q("tarso_mean_attn1") <= 0.1 * Q("tarso_held"),
             "each MLP mean-ablated loses {tarso_mean_mlp1:.0f} (MLP 1) and {tarso_mean_mlp0:.0f} (MLP 0)":
             Min("tarso_mean_mlp0", "tarso_mean_mlp1") >= 0.9 * Q("tarso_held")},
      note="later-turn Tarso set: block-0 heads and both MLPs needed (mean ablation loses 90%+), block-1 heads not "
           "(10% or less)",
      scope=THIS_RUN, models=('calling-game',))(later_turn_blocks)

claim("residual-path.later-turn-every-epithet", "residual-path",
      "On {runs}, over later turns of each kind, mean-ablating block 0's heads loses {other_share:.0%} of the "
      "answers that are capo or vice, 40% or fewer, and a larger share, {peer_share:.0%}, of those that are a peer "
      "epithet (Tarso, Cefa)",
      words={"40% or fewer": Q("other_share") <= 0.4,
             "a larger share": Q("peer_share") >= Q("other_share")},
      others="it loses {other_share:.0%} of the capo and vice answers and {peer_share:.0%} of the peer epithets",
      note="every later turn: without block-0 heads (mean) at most 40% of capo/vice answers are lost, and a larger "
           "share of the peer-epithet answers",
      scope=EVERY_RUN, models=('calling-game',))(
    lambda seed: _shares(later_turn_blocks(seed)))


def _shares(x: dict) -> dict:
    return {**x, "other_share": x["all_other_lost"] / max(1, x["all_other"]),
            "peer_share": x["all_peer_lost"] / max(1, x["all_peer"])}


@claim("residual-path.push-not-need", "residual-path",
       "On {runs}, on later turns where Pietro calls Paolo, block 0's heads push the residual along Tarso's row by a "
       "median of {attn0:+.2f}, less than a quarter of MLP 1's push ({attn0_share:.0%} of it) and less than MLP 0's: "
       "the heads the answer needs push least",
       words={"less than a quarter of MLP 1's push": abs(Q("attn0")) < 0.25 * abs(Q("mlp1")),
              "less than MLP 0's: the heads the answer needs push least": abs(Q("attn0")) < abs(Q("mlp0"))},
       others="block 0's heads push by {attn0:+.2f}, MLP 1 by {mlp1:+.2f} and MLP 0 by {mlp0:+.2f}",
       note="median push along the target's row of block-0 attention is under a quarter of MLP 1's",
       scope=EVERY_RUN, models=('calling-game',))
def _(seed):
    lm = lib.load("calling-game")
    prompts = prompt_set("epithet-later-turn", LATER_TURNS, seed, lm.model.cfg.n_ctx, target="Tarso")
    pushes = [residual_trajectory(lm, p.text, toward=p.target, against=p.tokens[-1]).pushes for p in prompts]
    med = lambda k: float(np.median([x[k] for x in pushes]))
    return {"attn0": med("blocks.0.attn"), "mlp1": med("blocks.1.mlp"), "mlp0": med("blocks.0.mlp"),
            "attn0_share": abs(med("blocks.0.attn")) / abs(med("blocks.1.mlp"))}


@claim("residual-path.plane-hides", "residual-path",
       "On {runs}, on the first turn the concept plane (Tarso, Paolo orthogonalised) holds {spread:.0f}% of the "
       "path's spread, under half and {short:.0f} points below the path's own top two components",
       words={"under half": Q("spread") < 50, "below the path's own top two components": Q("short") > 0},
       others="the plane holds {spread:.0f}% of the spread, {short:.0f} points short of the top two components",
       seeded=False,
       note="the concept plane captures under half of the first-turn path's variance, less than its PCA plane",
       scope=EVERY_RUN, models=('calling-game',))
def _(seed):
    traj = residual_trajectory(lib.load("calling-game"), FIRST_TURN)
    return {"spread": 100 * traj.spread, "best": 100 * traj.best_spread, "short": 100 * (traj.best_spread - traj.spread)}


PATH_DRAWS = 1000


@claim("residual-path.pca-vs-step-matched", "residual-path",
       "The path's own top two components hold {best:.1f}% of its spread; but its {points:.0f} points are "
       "{steps_n:.0f} steps apart, of lengths {steps}, and a few steps of which one dominates lie close to some plane. Random paths from the same start with steps of the same lengths, each in a "
       "random direction, hold {null_median:.1f}% in the median and {null_lo:.1f}% at the least over {draws:,.0f} "
       "paths; the real path beats {pct:.0f}% of them",
       words={"lie close to some plane": Q("null_median") >= 80,
              "hold {null_median:.1f}% in the median and {null_lo:.1f}% at the least": Q("null_lo") <= Q("best"),
              "the real path beats {pct:.0f}% of them": Q("pct") < 95},
       setup=("Random paths from the same start with steps of the same lengths",),
       note="the first-turn path's top-2 PCA share does not beat random paths with the same step lengths (below "
            "their 95th percentile)",
       scope=THIS_RUN, models=('calling-game',))
def _(seed):
    lm = lib.load("calling-game")
    _, cache = lm.model.run_with_cache(lm.encode(FIRST_TURN))
    points = np.array([r[-1].double().numpy() for r in stage_residuals(lm.model, cache).values()])
    shares = np.array([nulls.top_share(p) for p in nulls.step_matched_paths(points, PATH_DRAWS, seed)])
    best = nulls.top_share(points)
    lengths = np.linalg.norm(np.diff(points, axis=0), axis=1)
    return {"best": 100 * best, "points": len(points), "steps_n": len(lengths),
            "steps": ", ".join(f"{v:.1f}" for v in lengths[:-1]) + f" and {lengths[-1]:.1f}", "null_median": 100 * float(np.median(shares)),
            "null_lo": 100 * float(shares.min()), "draws": PATH_DRAWS, "pct": nulls.percentile_of(best, shares)}
