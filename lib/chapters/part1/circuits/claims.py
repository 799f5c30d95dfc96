"""The claims of the chapter `chapters/part1/circuits.md`, each with its measurement.

The prompts are the labelled sets of `lib.analysis.calling_sets`, drawn with the claim's seed;
every head is ranked, none is left out of a ranking by name.
"""
from __future__ import annotations

import functools

import numpy as np

from lib.analysis.ablation import all_heads, head_name
from lib.analysis.calling_sets import EPITHETS4, N, calling_game, sets, surveys
from lib.chapters.part1.circuits.circuits import head_habits, ov_circuit, ov_copies, qk_circuit
from lib.analysis.head_survey import attention_survey
from lib.claims.registry import EVERY_RUN, THIS_RUN
from lib.claims.registry import claim as register
from lib.claims.words import Max, Min, Q
from lib.content.corpora.calling_game import PLAYERS

# Measured with torch on one thread (the chapter's models are tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True)


@claim("circuits.rank", "circuits",
       "On {runs}, each circuit is {d_model:.0f} by {d_model:.0f}, yet {n_rank:.0f} of the {n:.0f} have rank "
       "{d_head:.0f} exactly: past the head's width the singular values are rounding noise (at most {tail:max:.0e} "
       "of the largest)",
       words={"{n_rank:.0f} of the {n:.0f} have rank {d_head:.0f} exactly": Q("n_rank").eq(Q("n")),
              "at most {tail:max:.0e} of the largest": Q("tail") < 1e-5},
       others="{n_rank:.0f} of the {n:.0f} have rank {d_head:.0f}, and the singular values past it reach {tail:.0e} "
              "of the largest", seeded=False,
       note="every QK and OV circuit of the calling-game model has rank d_head",
       scope=EVERY_RUN, models=('calling-game',))
def _rank(seed):
    cfg = calling_game().model.cfg
    ranks, tails = [], []
    for layer, h in all_heads(calling_game().model):
        for M in (qk_circuit(calling_game().model, layer, h), ov_circuit(calling_game().model, layer, h)):
            sv = np.linalg.svd(M, compute_uv=False)
            ranks.append(int((sv > sv[0] * 1e-5).sum()))
            tails.append(sv[cfg.d_head] / sv[0])
    return {"d_model": cfg.d_model, "d_head": cfg.d_head, "n": len(ranks),
            "n_rank": sum(r == cfg.d_head for r in ranks), "tail": float(max(tails))}


@functools.lru_cache(maxsize=None)
def _attention(seed):
    """Where each head looks from the callee, on the four later-call epithet sets of `seed`."""
    by_epithet = {e: attention_survey(calling_game(), sets(seed)[e], ["where the caller was called"]) for e in EPITHETS4}
    habits = head_habits(calling_game(), [p for e in EPITHETS4 for p in sets(seed)[e]])
    return habits, by_epithet


@claim("circuits.finder", "circuits",
       "No head looks at the caller's own token two places back: the largest share any head gives it is "
       "{caller_max:.2f}. {finder} looks to where the caller was called, with {share:.2f} of its attention on "
       "average, and puts its largest weight there on {Tarso:.0f} of the Tarso prompts and {Cefa:.0f} of the "
       "Cefa prompts, against {capo:.0f} capo and {vice:.0f} vice prompts",
       words={"No head looks at the caller's own token two places back": Q("caller_max") < 0.2,
              "against {capo:.0f} capo and {vice:.0f} vice prompts": (Min("Tarso", "Cefa") >= 0.6 * Q("n"),
                                                                       Max("capo", "vice") <= 0.15 * Q("n"))},
       note="attention from the callee over 40 later calls per epithet: the head with the largest share on where "
            "the caller was called gets its largest weight there on 60%+ of the peer prompts, 15% or fewer of the "
            "subordinate",
       scope=THIS_RUN, models=('calling-game',))
def _finder(seed):
    habits, by_epithet = _attention(seed)
    called = "where the caller was called"
    heads = all_heads(calling_game().model)
    finder = max(heads, key=lambda hd: habits.shares[hd][called])
    return {"caller_max": max(habits.shares[hd]["the caller"] for hd in heads), "finder": head_name(finder), "n": N,
            "share": habits.shares[finder][called],
            **{e: by_epithet[e][finder][called].largest for e in EPITHETS4}}


@functools.lru_cache(maxsize=None)
def _copying(seed):
    return {name: attention_survey(calling_game(), sets(seed)[name], ["the callee", "the epithet the callee earned"])
            for name in ("next: a number", "next: Pietro or Paolo")}


@claim("circuits.copier", "circuits",
       "{copier} puts its largest weight from `<SEP>` on the player just called on {largest:.0f} of the {n:.0f} "
       "prompts where a number was called (mean share {share:.2f}); its OV circuit makes each of {ov:.0f} players "
       "raise its own logit more than any other; and switched off it loses the answer on {zero:.0f} of the "
       "{held:.0f} prompts the model gets right when zeroed, {mean:.0f} when mean-ablated, {resample:.0f} when "
       "resampled",
       words={"puts its largest weight from `<SEP>` on the player just called on {largest:.0f} of the {n:.0f}":
              Q("largest") >= 0.75 * Q("n"),
              "raise its own logit more than any other": Q("ov") >= 8,
              "switched off it loses the answer": Min("zero", "mean", "resample") >= 0.6 * Q("held")},
       note="the head looking hardest at the callee from <SEP> (a number called) copies it (OV), is needed for it "
            "under all three ablations, and is the head that finds where the caller was called",
       scope=THIS_RUN, models=('calling-game',))
def _copier(seed):
    looks = _copying(seed)["next: a number"]
    copier = max(all_heads(calling_game().model), key=lambda hd: looks[hd]["the callee"].largest)
    name = head_name(copier)
    ids = [calling_game().vocab.id(p) for p in PLAYERS]
    s = {k: surveys(seed, k)["next: a number"] for k in ("zero", "mean", "resample")}
    return {"copier": name, "largest": looks[copier]["the callee"].largest, "n": s["zero"].n,
            "share": looks[copier]["the callee"].mean, "ov": sum(ov_copies(calling_game().model, *copier, ids)),
            "held": s["zero"].held(), **{k: v.lost(name) for k, v in s.items()},
            "is_finder": int(name == _finder(seed)["finder"])}


@claim("circuits.peer-next-caller", "circuits",
       "When Pietro or Paolo was called, {copier} puts its largest weight on the callee on {copier_largest:.0f} of "
       "the {n:.0f} prompts and switching it off loses {copier_lost:.0f} of {held:.0f}; {reader} reads the epithet "
       "just before `<SEP>` (its largest weight, on {reader_largest:.0f} prompts), and no single head loses half "
       "the answers: the most any one loses is {most_zero:.0f} zeroed, {most_mean:.0f} mean-ablated. Yet "
       "mean-ablating {reader} cuts the logit difference between the next caller and the model's second choice "
       "by {reader_drop:.1f} of its {base:.1f}",
       words={"switching it off loses {copier_lost:.0f} of {held:.0f}": Q("copier_lost") <= 5,
              "no single head loses half the answers: the most any one loses is":
              Max("most_zero", "most_mean") <= Q("held") / 2,
              "cuts the logit difference between the next caller and the model's second choice by {reader_drop:.1f} "
              "of its {base:.1f}": Q("reader_drop") >= 0.4 * Q("base")},
       note="next-caller prompts after Pietro or Paolo: no single head (zero or mean ablation) loses half of them, "
            "but the epithet reader's mean ablation takes 40%+ of their logit difference",
       scope=THIS_RUN, models=('calling-game',))
def _peer_next(seed):
    heads = all_heads(calling_game().model)
    number_looks = _copying(seed)["next: a number"]
    looks = _copying(seed)["next: Pietro or Paolo"]
    copier = max(heads, key=lambda hd: number_looks[hd]["the callee"].largest)
    reader = max(heads, key=lambda hd: looks[hd]["the epithet the callee earned"].largest)
    zero, mean = surveys(seed, "zero")["next: Pietro or Paolo"], surveys(seed, "mean")["next: Pietro or Paolo"]
    return {"copier": head_name(copier), "copier_largest": looks[copier]["the callee"].largest, "n": zero.n,
            "copier_lost": zero.lost(head_name(copier)), "held": zero.held(), "reader": head_name(reader),
            "reader_largest": looks[reader]["the epithet the callee earned"].largest,
            "most_zero": max(zero.lost(k) for k in zero.off), "most_mean": max(mean.lost(k) for k in mean.off),
            "reader_drop": mean.drop(head_name(reader)), "base": mean.mean_diff()}
