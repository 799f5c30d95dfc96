"""The claims of the chapter `chapters/part1/ablation.md`, each with its measurement.

The calling-game claims count over the labelled sets of `lib.analysis.calling_sets`, drawn with the
claim's seed: 40 later calls for each epithet, 40 turn ends where a number was called and 40 where
Pietro or Paolo was. Every head is ranked; none is left out of a ranking by name. A head is
switched off the three ways of `lib.analysis.ablation` (zero, mean and resample, the last drawn
with the claim's seed), and what carries who is calling is also measured by activation patching
(`lib.analysis.patching`). The MiniLM claims measure `lib.chapters.part1.ablation.pronoun_heads` on the split
the claim's seed draws.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from lib.chapters.part1.ablation import pronoun_heads
from lib.analysis.ablation import ablated_logits, all_heads, context_blindness, head_name, reference_set
from lib.analysis.calling_sets import OPENING, answers_held, calling_game, sets, surveys
from lib.analysis.head_survey import HOLDS_AT, Switch, ablation_survey, attention_survey, last_patterns
from lib.analysis.patching import NUMBERS, patch, swap_players
from lib.analysis.positions import without_positions
from lib.claims.registry import claim as register
from lib.content.prompt_sets import places
from lib.model.hooks import replace_heads
from lib.model.readout import softmax, token_prob

# Measured with torch on one thread (the chapter's models are tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True)

PEER, SUBORDINATE = ("Tarso", "Cefa"), ("capo", "vice")


def _heads():
    return [head_name(h) for h in all_heads(calling_game().model)]


def _lost(seed, kind, head, names):
    s = surveys(seed, kind)
    return sum(s[n].lost(head) for n in names)


def _and(names):
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@claim("ablation.attention-off", "ablation",
       "Over {n:.0f} later-call prompts, each against a random context, removing every head and zeroing every "
       "$W_O$ give logits {gap_text}; with attention off, replacing everything between `<BOS>` and the last token "
       "by random tokens changes the last position's logits by {off_text} on every prompt, where the intact "
       "model's move by up to {on:.0f}",
       holds=lambda x: x["gap"] < 1e-5 and x["off"] < 1e-5 and x["on"] > 1,
       note="context_blindness over the Tarso and Cefa later-call sets")
def _attention_off(seed):
    blind = context_blindness(calling_game(), sets(seed)["Cefa"] + sets(seed)["Tarso"], seed=seed)

    def text(v):
        return "exactly the same" if v == 0 else f"within {v:.0e}"
    return {"n": blind["prompts"], "gap": blind["ablate_vs_zero_W_O"], "off": blind["prefix_effect_off"],
            "on": blind["prefix_effect_on"], "gap_text": text(blind["ablate_vs_zero_W_O"]),
            "off_text": "exactly 0" if blind["prefix_effect_off"] == 0 else f"{blind['prefix_effect_off']:.0e}"}


@claim("ablation.attention-off-guesses", "ablation",
       "With every head zeroed, the model still says capo or vice, the epithets of a numbered caller, on "
       "{sub_zero:.0f} of the {n_sub:.0f} prompts that need them, but Tarso or Cefa on {peer_zero:.0f} of the "
       "{n_peer:.0f} that need those; with every head mean-ablated, on {sub_mean:.0f} and {peer_mean:.0f}",
       holds=lambda x: x["sub_zero"] >= 0.3 * x["n_sub"] and x["peer_zero"] <= 0.1 * x["n_peer"]
       and x["sub_mean"] >= 0.3 * x["n_sub"] and x["peer_mean"] <= 0.1 * x["n_peer"],
       note="all eight heads off (zero and mean): 30%+ of capo/vice prompts held, 10% or fewer of Tarso/Cefa")
def _guesses(seed):
    every = {"every head": Switch(heads=tuple(all_heads(calling_game().model)))}
    out = {}
    for kind in ("zero", "mean"):
        for label, names in (("sub", SUBORDINATE), ("peer", PEER)):
            out[f"{label}_{kind}"] = sum(
                int((ablation_survey(calling_game(), sets(seed)[e], every, kind=kind).off["every head"] >= HOLDS_AT).sum())
                for e in names)
    return {**out, "n_sub": sum(len(sets(seed)[e]) for e in SUBORDINATE),
            "n_peer": sum(len(sets(seed)[e]) for e in PEER)}


@claim("ablation.opening-heads", "ablation",
       "Zeroed or mean-ablated alone, each head leaves Tarso at {single_min:.3f} or more. All eight zeroed together bring it down to {all_zero:.2f}; all eight "
       "mean-ablated leave it at {all_mean:.2f}. Resampled, with each head's write taken in turn from every one of "
       "the {rounds:.0f} reference rounds, {worst} loses Tarso on {worst_lost:.0f} of them, every one a round "
       "whose opening call named a number ({callees}) instead of Paolo; no other head loses it on {other_text}",
       holds=lambda x: x["single_min"] > 0.9 and x["all_zero"] < 0.5 and x["all_mean"] > 0.9
       and x["worst_all_numbers"] == 1 and x["other_lost"] <= 5, seeded=False,
       note="P(Tarso) after <BOS> Pietro chiama Paolo: each head off alone (zero, mean), all eight off (zero, mean), "
            "and each head resampled from every reference round")
def _opening_heads(seed):
    lm = calling_game()
    heads = all_heads(lm.model)
    t = lm.vocab.id("Tarso")

    def p(group, kind):
        return float(softmax(ablated_logits(lm, [OPENING], group, (), kind))[0, t])
    ref = reference_set(lm)
    ids = lm.encode(OPENING)
    batch = torch.tensor([ids] * len(ref.rounds))
    callee = [lm.vocab.tokens[r[len(ids) - 1]] for r in ref.rounds]
    lost = {}
    for layer, h in heads:
        writes = ref.writes[f"blocks.{layer}.attn.head_out"][:, :len(ids)]
        hook = (f"blocks.{layer}.attn.head_out", replace_heads([h], lambda x, w=writes: w.to(x.dtype).expand_as(x)))
        with torch.no_grad():
            probs = softmax(lm.model.run_with_hooks(batch, fwd_hooks=[hook])[:, -1].double())[:, t]
        lost[head_name((layer, h))] = [c for c, q in zip(callee, probs.tolist()) if q < 0.5]
    worst = max(lost, key=lambda k: (len(lost[k]), k))
    return {"single_min": min(p([h], k) for h in heads for k in ("zero", "mean")), "all_zero": p(heads, "zero"),
            "all_mean": p(heads, "mean"), "rounds": len(ref.rounds), "worst": worst, "worst_lost": len(lost[worst]),
            "callees": _and(sorted(set(lost[worst]))),
            "worst_all_numbers": int(bool(lost[worst]) and all(c not in ("Pietro", "Paolo") for c in lost[worst])),
            "other_lost": max(len(v) for k, v in lost.items() if k != worst),
            "other_text": ("any" if max(len(v) for k, v in lost.items() if k != worst) == 0 else
                           f"more than {max(len(v) for k, v in lost.items() if k != worst)}")}


@functools.lru_cache(maxsize=1)
def _opening_patches():
    out = []
    for number in NUMBERS:
        corrupted = f"<BOS> {number} chiama Paolo"
        r = patch(calling_game(), OPENING, corrupted, "Tarso", "vice")
        best = max(r.head_cells(), key=lambda c: c["recovered"])
        there = r.heads[:, :, best["position"]].copy()
        layer, head = int(best["head"][1]), int(best["head"][3])
        there[layer, head] = -np.inf
        out.append((number, token_prob(calling_game(), corrupted, "Tarso"), best, float(there.max())))
    return out


@claim("ablation.opening-reads-caller", "ablation",
       "Put a numbered player in Pietro's place, `<BOS> 1 chiama Paolo` and the other seven, and P(Tarso) falls "
       "from {intact:.4f} to {worst:.2f} at most ({low:.0f} of the {n:.0f} below 0.02). Patching each of these "
       "pairs, the one head write that brings back the most of the Tarso-vs-vice logit difference is "
       "{best} at Paolo's position on {best_n:.0f} of {n:.0f}, bringing back {lo:.2f} to {hi:.2f} of it (the "
       "next best head there at most {second:.2f}); without its position embeddings the model gives Tarso "
       "{no_pos:.2f}",
       holds=lambda x: x["worst"] < 0.6 and x["best_n"] == x["n"] and x["lo"] > 0.5 and x["second"] < x["lo"],
       seeded=False,
       note="opening call: the caller's token matters (swap it and Tarso goes); patching finds one head write at "
            "the callee carrying it on every swap")
def _opening_reads(seed):
    found = _opening_patches()
    bests = [b["head"] for _, _, b, _ in found]
    top = max(set(bests), key=bests.count)
    at_callee = [b for _, _, b, _ in found if b["head"] == top and b["position"] == 3]
    return {"intact": token_prob(calling_game(), OPENING, "Tarso"), "worst": max(p for _, p, _, _ in found),
            "low": sum(p < 0.02 for _, p, _, _ in found), "n": len(found), "best": top, "best_n": len(at_callee),
            "lo": min(b["recovered"] for b in at_callee) if at_callee else 0.0,
            "hi": max(b["recovered"] for b in at_callee) if at_callee else 0.0,
            "second": max(s for _, _, _, s in found),
            "no_pos": token_prob(without_positions(calling_game()), OPENING, "Tarso")}


@claim("ablation.reader", "ablation",
       "Switched off, {reader} loses Cefa on {cefa_zero:.0f} of the {cefa_held:.0f} Cefa prompts the model gets "
       "right when zeroed, {cefa_mean:.0f} when mean-ablated and {cefa_resample:.0f} when resampled; capo and vice "
       "on {sub_zero:.0f}, {sub_mean:.0f} and {sub_resample:.0f} of {sub_held:.0f}",
       holds=lambda x: min(x["cefa_zero"], x["cefa_mean"], x["cefa_resample"]) >= 0.5 * x["cefa_held"]
       and max(x["sub_zero"], x["sub_mean"], x["sub_resample"]) <= 0.1 * x["sub_held"],
       note="the head losing the most Cefa answers (zeroed) loses half or more of them all three ways, and 10% or "
            "fewer capo/vice")
def _reader(seed):
    reader = surveys(seed, "zero")["Cefa"].most_damaging()
    out = {"reader": reader, "cefa_held": answers_held(seed, ["Cefa"]), "sub_held": answers_held(seed, SUBORDINATE)}
    for kind in ("zero", "mean", "resample"):
        out[f"cefa_{kind}"] = _lost(seed, kind, reader, ["Cefa"])
        out[f"sub_{kind}"] = _lost(seed, kind, reader, SUBORDINATE)
    return out


PATCHED = 20   # Tarso prompts patched (the first of the set): a patch is some 40 forward passes


@functools.lru_cache(maxsize=None)
def _tarso_patches(seed):
    """Each Tarso prompt patched from its twin with the caller swapped for a number (Tarso vs vice):
    per prompt, every head's best cell."""
    out = []
    for p in sets(seed)["Tarso"][:PATCHED]:
        r = patch(calling_game(), p.text, swap_players(p.text), "Tarso", "vice")
        best = max(r.head_cells(), key=lambda c: c["recovered"])
        out.append((r.heads.max(-1), best, best["position"] == places(p)["the callee"]))
    return out


@claim("ablation.tarso-heads", "ablation",
       "Ranking all eight heads by the Tarso answers they lose (of {held:.0f}), the top two are {top_two} under "
       "each of the three ways: zeroed they lose {a_zero:.0f} and {b_zero:.0f}, mean-ablated {a_mean:.0f} and "
       "{b_mean:.0f}, resampled {a_resample:.0f} and {b_resample:.0f}. {third}, third when zeroed with "
       "{third_zero:.0f}, loses {third_mean:.0f} mean-ablated and {third_resample:.0f} resampled",
       holds=lambda x: x["same_top"] == 1 and min(x["b_zero"], x["b_mean"], x["b_resample"]) >= x["held"] / 3
       and x["third_mean"] < x["third_zero"],
       note="Tarso later-call set: the same two heads lose the most under zero, mean and resample ablation, each at "
            "least a third of the held prompts; the third head's zero-ablation losses shrink when mean-ablated")
def _tarso_heads(seed):
    kinds = ("zero", "mean", "resample")
    ranked = {k: sorted(_heads(), key=lambda h: (-_lost(seed, k, h, ["Tarso"]), h)) for k in kinds}
    tops = {k: tuple(sorted(r[:2])) for k, r in ranked.items()}
    a, b = tops["zero"]
    third = ranked["zero"][2]
    out = {"held": answers_held(seed, ["Tarso"]), "top_two": " and ".join(tops["zero"]),
           "same_top": int(len(set(tops.values())) == 1), "third": third}
    for k in kinds:
        out[f"a_{k}"], out[f"b_{k}"] = _lost(seed, k, a, ["Tarso"]), _lost(seed, k, b, ["Tarso"])
        out[f"third_{k}"] = _lost(seed, k, third, ["Tarso"])
    return out


@claim("ablation.tarso-patching", "ablation",
       "Patching asks a different question. Swap Pietro for a number in each of the first {n:.0f} Tarso prompts "
       "(the model then says vice) and patch one head's write at one position back from the clean run: the cell "
       "that brings back the most of the Tarso-vs-vice logit difference is {best} at the callee's position on "
       "{best_n:.0f} of them. Averaged over the prompts, the best cell of {best} brings back {best_mean:.2f}, of "
       "{other} {other_mean:.2f}, of any other head at most {rest:.2f}",
       holds=lambda x: x["best_n"] >= 0.9 * x["n"] and x["best_mean"] > 0.6 and x["other_mean"] < 0.3,
       note="activation patching over the Tarso set: one head's write at the callee carries who is calling on 90%+ "
            "of prompts; the other head ablation needs for Tarso brings back under 0.3 on average")
def _tarso_patching(seed):
    found = _tarso_patches(seed)
    names = [h["head"] for _, h, at in found if at]
    best = max(set(names), key=names.count) if names else ""
    mean = np.mean([m for m, _, _ in found], axis=0)        # [layer, head]
    per = {head_name(hd): float(mean[hd]) for hd in all_heads(calling_game().model)}
    # The other head that ablation finds needed for Tarso (the top two of the zero ranking, less the best here).
    ranked = sorted(_heads(), key=lambda h: (-_lost(seed, "zero", h, ["Tarso"]), h))
    other = next(h for h in ranked if h != best)
    return {"best": best, "best_n": names.count(best), "n": len(found), "best_mean": per.get(best, 0.0),
            "other": other, "other_mean": per[other],
            "rest": max(v for h, v in per.items() if h not in (best, other))}


@claim("ablation.copies", "ablation",
       "When a number was called, {copier} switched off loses the next caller on {zero:.0f} of {held:.0f} prompts "
       "zeroed, {mean:.0f} mean-ablated, {resample:.0f} resampled",
       holds=lambda x: min(x["zero"], x["mean"], x["resample"]) >= 0.6 * x["held"],
       note="the next-caller set after a number: the head losing the most (zeroed) loses 60%+ all three ways")
def _copies(seed):
    s = surveys(seed, "zero")["next: a number"]
    copier = s.most_damaging()
    return {"copier": copier, "held": s.held(),
            **{k: surveys(seed, k)["next: a number"].lost(copier) for k in ("zero", "mean", "resample")}}


@functools.lru_cache(maxsize=None)
def _sharpness(seed):
    """Each head's largest weight from the last position, averaged over every prompt of the six sets."""
    rows = [row for group in sets(seed).values() for row in last_patterns(calling_game(), group)]
    return {head_name(hd): float(np.mean([r[hd].max() for r in rows])) for hd in all_heads(calling_game().model)}, len(rows)


def _lost_all(seed, kind, head):
    return sum(s.lost(head) for s in surveys(seed, kind).values())


@claim("ablation.flat-head", "ablation",
       "{flat}, whose pattern is {rank} of the eight (mean largest weight {weight:.2f}), is one of the two heads "
       "Tarso needs (mean-ablated, it loses {tarso_mean:.0f} of the {held:.0f} Tarso answers). Zeroed it also loses "
       "{sub_zero:.0f} capo and vice answers; mean-ablated, {sub_mean:.0f}: most of those losses came from the "
       "missing average, not from what it says about the round",
       holds=lambda x: x["rank_i"] <= 2 and x["sub_mean"] <= 0.5 * x["sub_zero"] and x["tarso_mean"] >= x["held"] / 3,
       note="the head with the most answers lost (zeroed) besides the Cefa reader: among the three flattest "
            "patterns; its capo/vice losses mostly vanish under mean ablation, its Tarso losses do not")
def _flat(seed):
    weights, _ = _sharpness(seed)
    reader = surveys(seed, "zero")["Cefa"].most_damaging()
    flat = max((h for h in _heads() if h != reader), key=lambda h: (_lost_all(seed, "zero", h), h))
    order = sorted(weights, key=weights.get)
    i = order.index(flat)
    return {"flat": flat, "weight": weights[flat], "rank_i": i,
            "rank": (("the flattest", "the second flattest", "the third flattest")[i] if i < 3
                     else f"number {i + 1} by flatness"),
            "sub_zero": _lost(seed, "zero", flat, SUBORDINATE), "sub_mean": _lost(seed, "mean", flat, SUBORDINATE),
            "tarso_mean": _lost(seed, "mean", flat, ["Tarso"]), "held": answers_held(seed, ["Tarso"])}


@claim("ablation.looker", "ablation",
       "On the Cefa prompts {looker} puts its largest weight on the epithet Paolo earned when he was called on "
       "{largest:.0f} of {n:.0f}, with {share:.2f} of its attention on average; yet switched off it loses Cefa on "
       "{zero:.0f} prompts zeroed, {mean:.0f} mean-ablated",
       holds=lambda x: x["largest"] >= 0.5 * x["n"] and max(x["zero"], x["mean"]) <= 0.25 * x["n"],
       note="the head looking hardest at the caller's epithet on Cefa prompts loses at most a quarter of them")
def _looker(seed):
    place = "the epithet the caller earned"
    earned = attention_survey(calling_game(), sets(seed)["Cefa"], [place])
    looker = max(all_heads(calling_game().model), key=lambda hd: earned[hd][place].largest)
    name = head_name(looker)
    return {"looker": name, "largest": earned[looker][place].largest, "n": earned[looker][place].present,
            "share": earned[looker][place].mean, "zero": _lost(seed, "zero", name, ["Cefa"]),
            "mean": _lost(seed, "mean", name, ["Cefa"])}


@claim("ablation.sharp-not-needed", "ablation",
       "Over all {n:.0f} prompts of the six sets, the largest weight from the last position averages "
       "{reader_weight:.2f} for {reader} and {twin_weight:.2f} for {twin}, the head closest to it in sharpness. "
       "Switched off, the first loses {reader_zero:.0f} answers zeroed ({reader_mean:.0f} mean-ablated), the second "
       "{twin_zero:.0f} ({twin_mean:.0f})",
       holds=lambda x: abs(x["reader_weight"] - x["twin_weight"]) < 0.1 and x["twin_mean"] <= 0.2 * x["reader_mean"],
       note="two heads within 0.1 in mean largest weight, one losing five times the answers of the other (mean "
            "ablation)")
def _sharp(seed):
    weights, n = _sharpness(seed)
    reader = surveys(seed, "zero")["Cefa"].most_damaging()
    twin = min((h for h in weights if h != reader), key=lambda h: abs(weights[h] - weights[reader]))
    return {"n": n, "reader": reader, "twin": twin, "reader_weight": weights[reader], "twin_weight": weights[twin],
            **{f"{who}_{k}": _lost_all(seed, k, h) for who, h in (("reader", reader), ("twin", twin))
               for k in ("zero", "mean")}}


@claim("ablation.zero-vs-mean", "ablation",
       "Zeroed, {t_head} loses Tarso on {t_zero:.0f} of the Tarso prompts; mean-ablated, on {t_mean:.0f}; "
       "resampled, on {t_resample:.0f}. Zeroed, {s_head} loses {s_zero:.0f} of the capo and vice prompts; "
       "mean-ablated {s_mean:.0f}; resampled {s_resample:.0f}",
       holds=lambda x: x["t_mean"] < x["t_zero"] / 2 and x["s_mean"] < x["s_zero"] / 2,
       note="the head third in losing Tarso zeroed, and the head losing most capo/vice zeroed: mean ablation loses "
            "under half as many")
def _zero_vs_mean(seed):
    # The third of the zero ranking on Tarso (the top two lose Tarso whichever way they are switched off).
    t_head = sorted(_heads(), key=lambda h: (-_lost(seed, "zero", h, ["Tarso"]), h))[2]
    s_head = max(_heads(), key=lambda h: (_lost(seed, "zero", h, SUBORDINATE), h))
    out = {"t_head": t_head, "s_head": s_head}
    for k in ("zero", "mean", "resample"):
        out[f"t_{k}"] = _lost(seed, k, t_head, ["Tarso"])
        out[f"s_{k}"] = _lost(seed, k, s_head, SUBORDINATE)
    return out


# ----------------------------------------------------------------------------- MiniLM's pronoun heads
# The split seed of lib.chapters.part1.ablation.pronoun_heads is the claim's seed: the heads are chosen on one half of
# the labelled set and counted on the other.
@functools.lru_cache(maxsize=None)
def pronoun_finding(seed: int):
    return pronoun_heads.measure(seed)


def _names(heads):
    return _and([f"L{layer}H{head}" for layer, head in heads])


@claim("ablation.minilm-beat-chance", "ablation",
       "Of the {k:.0f} heads chosen on one half ({best}), the weakest hits the antecedent {lo:.0f} times on the "
       "other half's {n:.0f} sentences and the strongest {hi:.0f}, where a key picked at random among the words "
       "would hit {chance:.1f} times",
       holds=lambda x: x["lo"] >= 2 * x["chance"],
       note="MiniLM: every best head (chosen on the selection half) hits at least twice chance on the report half")
def _minilm_chance(seed):
    f = pronoun_finding(seed)
    return {"k": f.k, "best": _names(f.best), "lo": min(f.best_report_hits), "hi": max(f.best_report_hits),
            "n": f.n_report, "chance": f.report_baselines["chance"]}


@claim("ablation.minilm-nearest-noun", "ablation",
       "The plain rule \"the nearest noun before the pronoun\" hits {nearest:.0f} times on the same sentences (the "
       "first noun of the sentence, {first:.0f}), and {beating:.0f} of the {n_heads:.0f} heads beat it (on other "
       "splits, at most one)",
       holds=lambda x: x["beating"] <= 1,
       note="MiniLM: at most one head of 72 hits the antecedent more often than the nearest-noun rule on the report "
            "half (none on the pages' splits; one on 2 of 11 splits measured)")
def _minilm_nearest(seed):
    f = pronoun_finding(seed)
    return {"nearest": f.report_baselines["nearest noun"], "first": f.report_baselines["first noun"],
            "beating": f.heads_beating_nearest, "n_heads": f.n_heads}


@claim("ablation.minilm-winograd", "ablation",
       "On the {pairs:.0f} Winograd pairs of that half, where only the meaning tells the antecedents apart, the most "
       "pairs any chosen head gets right in both sentences is {both:.0f}",
       holds=lambda x: x["both"] <= 1,
       note="MiniLM: no best head finds the antecedent in both sentences of more than one Winograd pair")
def _minilm_winograd(seed):
    f = pronoun_finding(seed)
    return {"pairs": f.pairs_report, "both": max(f.pairs_both_right.values())}


@claim("ablation.minilm-ablation", "ablation",
       "Intact, the pronoun's final vector is closer to its antecedent's than to the other nouns' on {clean:.0f} of "
       "the {n:.0f} sentences; with the {k:.0f} chosen heads mean-ablated, on {ablated:.0f}. The gap between the "
       "two cosines moves by {best:+.3f} on average; mean-ablating {k:.0f} heads drawn at random moves it by "
       "{control:+.3f} (average of {draws:.0f} draws)",
       holds=lambda x: abs(x["best"]) < 0.02 and abs(x["control"]) < 0.02,
       note="MiniLM: mean-ablating the best heads moves the antecedent margin by under 0.02 on average, as random "
            "heads do")
def _minilm_ablation(seed):
    f = pronoun_finding(seed)
    return {"clean": f.margin_positive_clean, "ablated": f.margin_positive_ablated, "n": f.n_report, "k": f.k,
            "best": f.margin_change_best, "control": f.margin_change_control, "draws": f.control_draws}
