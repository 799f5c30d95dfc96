"""The claims of the chapter `chapters/part3/lever.md`, each with its measurement.

Blocks switched off over later turns are `lib.analysis.head_survey.later_turn_blocks`, shared
with the residual path's chapter.
"""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.analysis.ablation import reference_seed, reference_set
from lib.analysis.head_survey import Switch, ablation_survey, later_turn_blocks
from lib.analysis.lens import direct_logit_attribution, group_by_block
from lib.chapters.part3.lever.logit_difference import difference_view, summarise
from lib.claims.registry import EVERY_RUN, THIS_RUN, claim
from lib.claims.words import Min, Q
from lib.content.prompt_sets import PER_KIND, prompt_set


@functools.lru_cache(maxsize=None)
def _lever_numbers(seed):
    lm = lib.load("calling-game")
    later = [difference_view(lm, p.text, p.target)
             for p in prompt_set("epithet-later-turn", PER_KIND, seed, max_tokens=lm.model.cfg.n_ctx)]
    summary = summarise(later)
    block0_end = later[0].stages.index("blocks.0.mlp")
    return {"n": summary.n, "on_top0": summary.on_top[block0_end], "on_top_final": summary.on_top[-1],
            "p0": float(summary.median_prob[block0_end]), "d0": float(summary.median_difference[block0_end]),
            "dfinal": float(summary.median_difference[-1]), "mlp1_largest": summary.largest["blocks.1.mlp"],
            "mlp1_share": float(summary.median_share["blocks.1.mlp"]),
            "mlp0_share": float(summary.median_share["blocks.0.mlp"])}


claim("lever.block0-ranks", "lever",
      "Read through the logit lens after block 0, the right epithet already comes first on {on_top0:.0f} of "
      "{n:.0f} later turns, with a median probability of only {p0:.2f}; by the end it is first on "
      "{on_top_final:.0f} of them, with a median lead of {dfinal:.1f} logits over the rival epithet",
      words={"already comes first on {on_top0:.0f} of {n:.0f} later turns": Q("on_top0") >= 0.75 * Q("n"),
             "with a median probability of only {p0:.2f}": Q("p0") < 0.9,
             "by the end it is first on {on_top_final:.0f} of them": Q("on_top_final") >= 0.95 * Q("n")},
      note="logit lens on later-turn epithet prompts: first after block 0 on most, nearly all at the end",
      scope=THIS_RUN, models=('calling-game',))(
    _lever_numbers)

claim("lever.mlp1-writes", "lever",
      "On {runs}, MLP 1 writes the largest share of the final lead on most later turns ({mlp1_largest_share:.0%} "
      "of them; median share {mlp1_share:.0%}, MLP 0's {mlp0_share:.0%}): what it writes, which is a different "
      "matter from what the answer needs",
      words={"MLP 1 writes the largest share of the final lead on most later turns": Q("mlp1_largest_share") > 0.5},
      others="MLP 1 writes the largest share on {mlp1_largest_share:.0%} of them",
      note="direct attribution: MLP 1 writes the largest share of the final logit lead on most later turns",
      scope=EVERY_RUN, models=('calling-game',))(
    lambda seed: {**(x := _lever_numbers(seed)), "mlp1_largest_share": x["mlp1_largest"] / x["n"]})


@claim("lever.writes-vs-needs", "lever",
       "On later turns whose answer is Tarso ({held:.0f} answered of {n:.0f}), mean ablation loses "
       "{lost_attn0:.0f} of them without block 0's attention, {lost_mlp0:.0f} without MLP 0, {lost_mlp1:.0f} without "
       "MLP 1 and {lost_attn1:.0f} without block 1's attention; yet block 0's attention writes a median of only "
       "{dla_attn0:+.2f} logits onto Tarso directly (above the average word's), against {dla_mlp1:+.2f} for MLP 1",
       words={"mean ablation loses {lost_attn0:.0f} of them without block 0's attention, {lost_mlp0:.0f} without "
              "MLP 0, {lost_mlp1:.0f} without MLP 1": Min("lost_attn0", "lost_mlp0", "lost_mlp1") >= 0.9 * Q("held"),
              "and {lost_attn1:.0f} without block 1's attention": Q("lost_attn1") <= 0.1 * Q("held"),
              "writes a median of only {dla_attn0:+.2f} logits onto Tarso directly (above the average word's), "
              "against {dla_mlp1:+.2f} for MLP 1": (Q("dla_attn0") < 1, Q("dla_mlp1") > 1)},
       note="mean ablation: attention 0 and both MLPs needed on 90%+ of later-turn Tarso answers, attention 1 on "
            "10% or less; attention 0's median direct attribution to Tarso under one logit",
       scope=THIS_RUN, models=('calling-game',))
def _(seed):
    lm = lib.load("calling-game")
    x = later_turn_blocks(seed)
    tarso = lm.vocab.id("Tarso")
    dla = {"blocks.0.attn": [], "blocks.1.mlp": []}
    for p in prompt_set("epithet-later-turn", 40, seed, lm.model.cfg.n_ctx, target="Tarso"):
        _, cache = lm.model.run_with_cache(lm.encode(p.text))
        shares = group_by_block(direct_logit_attribution(lm.model, cache))
        for k in dla:
            dla[k].append(float(shares[k][tarso] - shares[k].mean()))
    return {"n": x["tarso_n"], "held": x["tarso_held"], "lost_attn0": x["tarso_mean_attn0"],
            "lost_mlp0": x["tarso_mean_mlp0"], "lost_mlp1": x["tarso_mean_mlp1"], "lost_attn1": x["tarso_mean_attn1"],
            "dla_attn0": float(np.median(dla["blocks.0.attn"])), "dla_mlp1": float(np.median(dla["blocks.1.mlp"]))}


@claim("lever.ways-disagree", "lever",
       "Switched off by zeroing, MLP 1 loses {zero:.0f} of the {held:.0f} later-turn Tarso answers; mean-ablated "
       "(its average write at positions of the same role), {mean:.0f}, and on {sep:.0f} of those the model then "
       "says `<SEP>`, the token after a numbered callee; resampled, {resample:.0f}",
       words={"Switched off by zeroing, MLP 1 loses {zero:.0f} of the {held:.0f} later-turn Tarso answers":
              Q("zero") <= 0.3 * Q("held"),
              "(its average write at positions of the same role), {mean:.0f}": Q("mean") >= 0.9 * Q("held"),
              "on {sep:.0f} of those the model then says `<SEP>`": Q("sep") >= 0.75 * Q("mean")},
       note="MLP 1 on the later-turn Tarso set: zeroed it loses 30% or fewer, mean-ablated (role-matched) 90%+, "
            "three quarters of those to <SEP>",
       scope=THIS_RUN, models=('calling-game',))
def _ways(seed):
    lm = lib.load("calling-game")
    group = prompt_set("epithet-later-turn", 40, seed, lm.model.cfg.n_ctx, target="Tarso")
    ref = reference_set(lm, seed=reference_seed(seed))
    switch = {"MLP 1": Switch(mlps=(1,))}
    out = {}
    for kind in ("zero", "mean", "resample"):
        s = ablation_survey(lm, group, switch, kind=kind, reference=ref, seed=seed)
        out[kind] = s.lost("MLP 1")
        if kind == "mean":
            out["sep"] = s.replacements("MLP 1")["<SEP>"]
            out["held"] = s.held()
    return out
