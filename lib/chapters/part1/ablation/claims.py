"""The claims of the chapter `chapters/part1/ablation.md`, each with its measurement.

The calling-game claims count over the labelled sets of `lib.analysis.calling_sets`, drawn with the
claim's seed: 40 later calls for each epithet, 40 turn ends where a number was called and 40 where
Pietro or Paolo was. Every head is ranked; none is left out of a ranking by name. A head is
switched off the three ways of `lib.analysis.ablation` (zero, mean and resample, the last drawn
with the claim's seed), and what carries who is calling is also measured by activation patching
(`lib.analysis.patching`). The MiniLM claims measure `lib.chapters.part1.ablation.pronoun_heads` on the split
the claim's seed draws.

The claims "over the shipped runs" (at the end) read `lib.chapters.part1.ablation.runs`, which finds each job's
head by its role on every shipped training run of the calling game, on the prompt sets of one seed.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from lib.chapters.part1.ablation import pronoun_heads
from lib.chapters.part1.ablation.runs import run_roles
from lib.analysis.ablation import ablated_logits, all_heads, context_blindness, head_name, reference_set
from lib.analysis.calling_sets import OPENING, answers_held, calling_game, reference, sets, surveys
from lib.analysis.head_survey import HOLDS_AT, Switch, ablation_survey, attention_survey, last_patterns, whole_blocks
from lib.analysis.patching import NUMBERS, patch
from lib.chapters.part1.ablation.paths import copying_score, path_patch
from lib.content.corpora.calling_game import PLAYERS
from lib.content.corruptions import legal_corruptions
from lib.analysis.positions import without_positions
from lib.claims.registry import listed
from lib.claims.registry import EVERY_RUN, THIS_RUN
from lib.claims.registry import claim as register
from lib.claims.words import Max, Min, Q
from lib.content.prompt_sets import places
from lib.model.hooks import replace_heads
from lib.model.readout import softmax, token_prob

# Measured with torch on one thread (the chapter's models are tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True)

PEER, SUBORDINATE = ("Tarso", "Cefa"), ("capo", "vice")


def _heads():
    return [head_name(h) for h in all_heads(calling_game().model)]


def _lost(seed, kind, head, names, match="role"):
    s = surveys(seed, kind, match)
    return sum(s[n].lost(head) for n in names)


@claim("ablation.attention-off", "ablation",
       "On {runs}, over {n:.0f} later-call prompts, each against a random context, removing every head and "
       "zeroing every $W_O$ give logits within {gap:max:.0e} of each other; with attention off, replacing everything "
       "between `<BOS>` and the last token by random tokens changes the last position's logits by {off:max:.0e} at "
       "most on every prompt, where the intact model's move by up to {on:.0f}",
       words={"removing every head and zeroing every $W_O$ give logits within {gap:max:.0e} of each other":
              Q("gap") < 1e-5,
              "by {off:max:.0e} at most on every prompt": Q("off") < 1e-5,
              "where the intact model's move by up to {on:.0f}": Q("on") > 1},
       others="the two give logits {gap:.0e} apart; with attention off the context moves them by {off:.0e}, "
              "intact by {on:.0f}",
       note="context_blindness over the Tarso and Cefa later-call sets",
       scope=EVERY_RUN, models=('calling-game',))
def _attention_off(seed):
    blind = context_blindness(calling_game(), sets(seed)["Cefa"] + sets(seed)["Tarso"], seed=seed)

    return {"n": blind["prompts"], "gap": blind["ablate_vs_zero_W_O"], "off": blind["prefix_effect_off"],
            "on": blind["prefix_effect_on"]}


@claim("ablation.attention-off-guesses", "ablation",
       "With every head zeroed, the model still says capo or vice, the epithets of a numbered caller, on "
       "{sub_zero:.0f} of the {n_sub:.0f} prompts that need them, but Tarso or Cefa on {peer_zero:.0f} of the "
       "{n_peer:.0f} that need those; with every head mean-ablated, on {sub_mean:.0f} and {peer_mean:.0f}",
       words={"still says capo or vice, the epithets of a numbered caller, on {sub_zero:.0f} of the {n_sub:.0f} "
              "prompts that need them, but Tarso or Cefa on {peer_zero:.0f} of the {n_peer:.0f} that need those":
              (Q("sub_zero") >= 0.3 * Q("n_sub"), Q("peer_zero") <= 0.1 * Q("n_peer")),
              "with every head mean-ablated, on {sub_mean:.0f} and {peer_mean:.0f}":
              (Q("sub_mean") >= 0.3 * Q("n_sub"), Q("peer_mean") <= 0.1 * Q("n_peer"))},
       setup=("With every head zeroed",),
       note="all eight heads off (zero and mean): 30%+ of capo/vice prompts held, 10% or fewer of Tarso/Cefa",
       scope=THIS_RUN, models=('calling-game',))
def _guesses(seed):
    every = {"every head": Switch(heads=tuple(all_heads(calling_game().model)))}
    out = {}
    for kind in ("zero", "mean"):
        for label, names in (("sub", SUBORDINATE), ("peer", PEER)):
            out[f"{label}_{kind}"] = sum(
                int((ablation_survey(calling_game(), sets(seed)[e], every, kind=kind, reference=reference(seed),
                                     seed=seed).off["every head"] >= HOLDS_AT).sum())
                for e in names)
    return {**out, "n_sub": sum(len(sets(seed)[e]) for e in SUBORDINATE),
            "n_peer": sum(len(sets(seed)[e]) for e in PEER)}


@claim("ablation.opening-heads", "ablation",
       "Zeroed or mean-ablated alone, each head leaves Tarso at {single_min:.3f} or more. All eight zeroed together "
       "bring it down to {all_zero:.2f}; all eight mean-ablated leave it at {all_mean:.2f}. Resampled, with each "
       "head's write taken in turn from each of the {rounds:.0f} reference rounds, {worst} loses Tarso on "
       "{worst_lost:.0f} of them, every one a round whose opening call named a number ({callees}) instead of Paolo; "
       "no other head loses it on more than {other_lost:.0f}",
       words={"each head leaves Tarso at {single_min:.3f} or more": Q("single_min") > 0.9,
              "All eight zeroed together bring it down to {all_zero:.2f}": Q("all_zero") < 0.5,
              "all eight mean-ablated leave it at {all_mean:.2f}": Q("all_mean") > 0.9,
              "every one a round whose opening call named a number": Q("worst_all_numbers").eq(1),
              "no other head loses it on more than {other_lost:.0f}": Q("other_lost") <= 5}, seeded=False,
       note="P(Tarso) after <BOS> Pietro chiama Paolo: each head off alone (zero, mean), all eight off (zero, mean), "
            "and each head resampled from every reference round",
       scope=THIS_RUN, models=('calling-game',))
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
            "callees": listed(sorted(set(lost[worst]))),
            "worst_all_numbers": int(bool(lost[worst]) and all(c not in ("Pietro", "Paolo") for c in lost[worst])),
            "other_lost": max(len(v) for k, v in lost.items() if k != worst)}


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
       "Put a numbered player in Pietro's place, `<BOS> 1 chiama Paolo` and the other seven (prompts no round can "
       "begin with: only Pietro opens), and P(Tarso) falls "
       "from {intact:.4f} to {worst:.2f} at most ({low:.0f} of the {n:.0f} below 0.02). Patching each of these "
       "pairs, the one head write that brings back the most of the Tarso-vs-vice logit difference is "
       "{best} at Paolo's position on {best_n:.0f} of {n:.0f}, bringing back {lo:.2f} to {hi:.2f} of it (the "
       "next best head there at most {second:.2f}); without its position embeddings the model gives Tarso "
       "{no_pos:.2f}",
       words={"from {intact:.4f} to {worst:.2f} at most": Q("worst") < 0.6,
              "({low:.0f} of the {n:.0f} below 0.02)": Q("low") >= Q("n") / 2,
              "the one head write that brings back the most of the Tarso-vs-vice logit difference is {best} at "
              "Paolo's position on {best_n:.0f} of {n:.0f}": Q("best_n").eq(Q("n")),
              "bringing back {lo:.2f} to {hi:.2f} of it": Q("lo") > 0.5,
              "the next best head there at most {second:.2f}": Q("second") < Q("lo")},
       setup=("prompts no round can begin with: only Pietro opens",),
       seeded=False,
       note="opening call: the caller's token matters (swap it and Tarso goes); patching finds one head write at "
            "the callee carrying it on every swap",
       scope=THIS_RUN, models=('calling-game',))
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


def _drop(seed, kind, head, names, match="role"):
    """The effect size beside a count: how far the logit difference (answer - rival epithet) falls, on
    average over the named sets' prompts, with `head` switched off the `kind` way."""
    s = surveys(seed, kind, match)
    n = sum(s[e].n for e in names)
    return sum(s[e].drop(head) * s[e].n for e in names) / n


def _base(seed, names):
    """The intact model's logit difference (answer - rival), on average over the named sets."""
    s = surveys(seed, "zero")
    return sum(s[e].mean_diff() * s[e].n for e in names) / sum(s[e].n for e in names)


PATCHED = 20   # Tarso prompts patched (the first of the set): a patch is some 40 forward passes


@functools.lru_cache(maxsize=None)
def _tarso_patches(seed):
    """Each of the first Tarso prompts patched from a legal corruption (`legal_corruptions`, drawn with the
    seed: the caller of Paolo changes to a numbered player, the rules' answer becomes vice), Tarso vs
    vice, denoising: per prompt, every head's best cell, the best cell, whether it stands at the callee,
    and how far the logit difference moves between the runs."""
    out = []
    for p in sets(seed)["Tarso"][:PATCHED]:
        bad = legal_corruptions(p.text, 1, seed=seed)
        if not bad:
            continue
        r = patch(calling_game(), p.text, bad[0], "Tarso", "vice")
        best = max(r.head_cells(), key=lambda c: c["recovered"])
        out.append((r.heads.max(-1), best, best["position"] == places(p)["the callee"], r.moved, r.mlps.max(-1)))
    return out


def reader_head(seed) -> str:
    """The head found by its role: the one whose write, patched at the callee from a legal clean run into
    its corrupted twin, brings back the most of Tarso over vice on the most prompts."""
    names = [b["head"] for _, b, at, _, _ in _tarso_patches(seed) if at]
    return max(sorted(set(names)), key=names.count) if names else ""


@claim("ablation.reader-indispensable", "ablation",
       "Switched off, {reader} loses Cefa on {cefa_zero:.0f} of the {cefa_held:.0f} Cefa prompts the model gets "
       "right when zeroed, {cefa_mean:.0f} when mean-ablated and {cefa_resample:.0f} when resampled, and the "
       "logit difference between Cefa and capo falls by {cefa_dzero:.1f}, {cefa_dmean:.1f} and {cefa_dresample:.1f}, "
       "more than its {cefa_base:.1f}. On capo and vice it loses {sub_zero:.0f}, {sub_mean:.0f} and "
       "{sub_resample:.0f} answers of {sub_held:.0f}, and the logit difference to the rival epithet falls by at most "
       "{sub_dmost:.1f} of its {sub_base:.1f}",
       words={"loses Cefa on": Min("cefa_zero", "cefa_mean", "cefa_resample") >= 0.5 * Q("cefa_held"),
              "more than its {cefa_base:.1f}": Min("cefa_dzero", "cefa_dmean", "cefa_dresample") > Q("cefa_base"),
              "On capo and vice it loses {sub_zero:.0f}, {sub_mean:.0f} and {sub_resample:.0f} answers of "
              "{sub_held:.0f}": Max("sub_zero", "sub_mean", "sub_resample") <= 0.1 * Q("sub_held"),
              "falls by at most {sub_dmost:.1f} of its {sub_base:.1f}": Q("sub_dmost") < 0.2 * Q("sub_base")},
       note="the head that patching finds carrying the caller, on the pages' run: loses half or more of the Cefa "
            "answers all three ways "
            "(role-matched mean and resample), its logit difference falling by more than it was; capo/vice: 10% or "
            "fewer answers, and under a fifth of the logit difference",
       scope=THIS_RUN, models=('calling-game',))
def _reader(seed):
    reader = reader_head(seed)
    out = {"reader": reader, "cefa_held": answers_held(seed, ["Cefa"]), "sub_held": answers_held(seed, SUBORDINATE),
           "cefa_base": _base(seed, ["Cefa"]), "sub_base": _base(seed, SUBORDINATE)}
    for kind in ("zero", "mean", "resample"):
        out[f"cefa_{kind}"] = _lost(seed, kind, reader, ["Cefa"])
        out[f"sub_{kind}"] = _lost(seed, kind, reader, SUBORDINATE)
        out[f"cefa_d{kind}"] = _drop(seed, kind, reader, ["Cefa"])
    out["sub_dmost"] = max(_drop(seed, k, reader, SUBORDINATE) for k in ("zero", "mean", "resample"))
    return out


@claim("ablation.tarso-heads", "ablation",
       "Zeroed, two heads lose the most of the {held:.0f} Tarso answers: {first} {a_zero:.0f} and {second} "
       "{b_zero:.0f}. With a role-matched reference only {first} stays needed: mean-ablated it loses "
       "{a_mean:.0f} (resampled {a_resample:.0f}), {second} {b_mean:.0f} ({b_resample:.0f}); the logit difference "
       "between Tarso and vice, {base:.1f} intact, falls by {b_dzero:.1f} with {second} zeroed and by {b_dmean:.1f} "
       "mean-ablated. Matched by position instead, the mean write costs {second} {b_pos:.0f} answers, as zeroing does",
       words={"two heads lose the most of the {held:.0f} Tarso answers": Min("a_zero", "b_zero") >= Q("third_zero"),
              "only {first} stays needed": (Q("a_mean") >= 0.9 * Q("held"), Q("b_mean") <= Q("b_zero") / 2),
              "falls by {b_dzero:.1f} with {second} zeroed and by {b_dmean:.1f} mean-ablated":
              Q("b_dmean") < Q("b_dzero") / 1.5,
              "the mean write costs {second} {b_pos:.0f} answers, as zeroing does": Q("b_pos") >= Q("b_zero") / 2},
       note="Tarso later-call set: the head patching finds loses 90%+ of the answers mean-ablated (role-matched); "
            "the other head of the zero ranking's top two loses under half as many mean-ablated, and its logit "
            "difference drop shrinks by a third or more, while a position-matched mean costs half or more of what "
            "zeroing does",
       scope=THIS_RUN, models=('calling-game',))
def _tarso_heads(seed):
    first = reader_head(seed)
    second = max((h for h in _heads() if h != first), key=lambda h: (_lost(seed, "zero", h, ["Tarso"]), h))
    out = {"held": answers_held(seed, ["Tarso"]), "first": first, "second": second, "base": _base(seed, ["Tarso"]),
           "b_pos": _lost(seed, "mean", second, ["Tarso"], "position"),
           "third_zero": max(_lost(seed, "zero", h, ["Tarso"]) for h in _heads() if h not in (first, second))}
    for k in ("zero", "mean", "resample"):
        out[f"a_{k}"], out[f"b_{k}"] = _lost(seed, k, first, ["Tarso"]), _lost(seed, k, second, ["Tarso"])
        out[f"b_d{k}"] = _drop(seed, k, second, ["Tarso"])
    return out


@claim("ablation.tarso-patching", "ablation",
       "Patching asks a different question. Pair each of the first {n:.0f} Tarso prompts with a legal round, token "
       "for token, in which a numbered player calls Paolo (the rules then want vice, and the Tarso-vs-vice logit "
       "difference moves by {moved:.1f} on average), and patch one head's write at one position back from the "
       "clean run: the cell that brings back the most is {best} at the callee's position on {best_n:.0f} of them. "
       "Averaged over the prompts, the best cell of {best} brings back {best_mean:.2f}, of {second} "
       "{second_mean:.2f}, of the next head {rest:.2f}; the MLPs' best cells bring back {mlp0:.2f} (MLP 0) "
       "and {mlp1:.2f} (MLP 1)",
       words={"the Tarso-vs-vice logit difference moves by {moved:.1f} on average": Q("moved") > 5,
              "the cell that brings back the most is {best} at the callee's position on {best_n:.0f} of them":
              Q("best_n") >= 0.75 * Q("n"),
              "the best cell of {best} brings back {best_mean:.2f}, of {second} {second_mean:.2f}":
              Q("best_mean") > 2 * Q("second_mean")},
       note="activation patching over the Tarso set with legal corruptions: one head's write at the callee is the "
            "best cell on 75%+ of prompts, and brings back more than twice what the next head does on average",
       scope=THIS_RUN, models=('calling-game',))
def _tarso_patching(seed):
    found = _tarso_patches(seed)
    best = reader_head(seed)
    names = [h["head"] for _, h, at, _, _ in found if at]
    mean = np.mean([m for m, *_ in found], axis=0)        # [layer, head]
    per = {head_name(hd): float(mean[hd]) for hd in all_heads(calling_game().model)}
    second = max((h for h in per if h != best), key=per.get)
    mlps = np.mean([m for *_, m in found], axis=0)
    return {"best": best, "best_n": names.count(best), "n": len(found), "best_mean": per.get(best, 0.0),
            "second": second, "second_mean": per[second], "moved": float(np.mean([m for _, _, _, m, _ in found])),
            "rest": max(v for h, v in per.items() if h not in (best, second)),
            "mlp0": float(mlps[0]), "mlp1": float(mlps[1])}


@claim("ablation.copies", "ablation",
       "When a number was called, {copier} switched off loses the next caller on {zero:.0f} of {held:.0f} prompts "
       "zeroed, {mean:.0f} mean-ablated, {resample:.0f} resampled; the logit difference between the next caller "
       "and the model's second choice, {base:.1f} intact, falls by {dzero:.1f}, {dmean:.1f} and {dresample:.1f}",
       words={"switched off loses the next caller on {zero:.0f} of {held:.0f} prompts zeroed, {mean:.0f} "
              "mean-ablated, {resample:.0f} resampled": Min("zero", "mean", "resample") >= 0.6 * Q("held"),
              "falls by {dzero:.1f}, {dmean:.1f} and {dresample:.1f}": Min("dzero", "dmean", "dresample") > 0.5 * Q("base")},
       note="the next-caller set after a number: the head losing the most (zeroed) loses 60%+ all three ways, and "
            "over half the logit difference",
       scope=THIS_RUN, models=('calling-game',))
def _copies(seed):
    s = surveys(seed, "zero")["next: a number"]
    copier = s.most_damaging()
    return {"copier": copier, "held": s.held(), "base": s.mean_diff(),
            **{k: surveys(seed, k)["next: a number"].lost(copier) for k in ("zero", "mean", "resample")},
            **{f"d{k}": surveys(seed, k)["next: a number"].drop(copier) for k in ("zero", "mean", "resample")}}


@functools.lru_cache(maxsize=None)
def _copy_paths(seed):
    """The copier's write at `<SEP>` on the next-caller prompts after a number, replaced by its role-matched
    mean (noising), split by path (`lib.chapters.part1.ablation.paths.path_patch`), averaged over the prompts; and the
    copying score of every head."""
    lm = calling_game()
    copier = surveys(seed, "zero")["next: a number"].most_damaging()
    head = next(h for h in all_heads(lm.model) if head_name(h) == copier)
    group = sets(seed)["next: a number"]
    s = surveys(seed, "zero")["next: a number"]
    value = reference(seed).role_means[f"blocks.{head[0]}.attn.head_out"]["<SEP>"][head[1]]
    acc: dict[str, list[float]] = {}
    for p, rival in zip(group, s.rivals):
        e = path_patch(lm, p.text, head, -1, value, p.target, rival)
        for k, v in {**e.paths, "total": e.total, "base": e.base_diff}.items():
            acc.setdefault(k, []).append(v)
    ids = [lm.vocab.id(p) for p in PLAYERS]
    scores = {head_name(h): copying_score(lm.model, *h, ids) for h in all_heads(lm.model)}
    return copier, head, {k: float(np.mean(v)) for k, v in acc.items()}, scores


@claim("ablation.copy-paths", "ablation",
       "Replace {copier}'s write at `<SEP>` by its average over `<SEP>` positions, one path at a time: the next "
       "caller's lead over the second choice ({base:.1f} intact) falls by {total:.1f} when the change reaches "
       "everything, by {direct:.2f} through the direct path to the read-out, by {mlp0:.1f} through MLP 0 and by "
       "{mlp1:.1f} through MLP 1, and rises by {attn1:.1f} through the heads of layer 1",
       words={"by {mlp0:.1f} through MLP 0 and by {mlp1:.1f} through MLP 1": Min("mlp0", "mlp1") > 3 * Q("direct"),
              "rises by {attn1:.1f} through the heads of layer 1": Q("attn1") > 0},
       note="path patching of the copying head's write (role-matched mean, noising): MLP 0 and MLP 1 each carry "
            "three times or more what the direct path does; the layer-1 heads work against the copy",
       scope=THIS_RUN, models=('calling-game',))
def _copy_paths_claim(seed):
    copier, _, paths, _ = _copy_paths(seed)
    layer1 = f"attention {calling_game().model.cfg.n_layers - 1}"
    return {"copier": copier, "base": paths["base"], "total": paths["total"], "direct": paths["direct"],
            "mlp0": paths["MLP 0"], "mlp1": paths["MLP 1"], "attn1": -paths[layer1]}


@claim("ablation.mlps-needed", "ablation",
       "On {runs}, mean-ablated with a role-matched reference, each MLP loses 70% or more of the Tarso and Cefa "
       "answers the run holds (MLP 0 {mlp0_share:.0%}, MLP 1 {mlp1_share:.0%}; the four heads of layer 1 together "
       "{attn1_share:.0%}); what the model says instead, with either MLP switched off, is `<SEP>` on "
       "{sep_share:.0%} of them: the MLP's average write at a callee is that of a numbered callee, after whom the "
       "turn ends",
       words={"each MLP loses 70% or more": Min("mlp0_share", "mlp1_share") >= 0.7},
       others="MLP 0 loses {mlp0_share:.0%} and MLP 1 {mlp1_share:.0%} of the Tarso and Cefa answers",
       note="role-matched mean ablation of whole blocks over the peer epithets: each MLP loses 70%+ (layer 1's "
            "attention is counted, not required: from a few to most, by run)",
       scope=EVERY_RUN, models=('calling-game',))
def _mlps_needed(seed):
    lm = calling_game()
    blocks = whole_blocks(lm.model)
    found = {}
    for e in PEER:
        found[e] = ablation_survey(lm, sets(seed)[e], blocks, kind="mean", reference=reference(seed), seed=seed)
    layer1 = f"attention {lm.model.cfg.n_layers - 1}"
    held = sum(s.held() for s in found.values())
    lost = {k: sum(s.lost(k) for s in found.values()) for k in ("MLP 0", "MLP 1", layer1)}
    sep = sum(s.replacements(m)["<SEP>"] for s in found.values() for m in ("MLP 0", "MLP 1"))
    return {"peer_held": held, "mlp0_share": lost["MLP 0"] / held, "mlp1_share": lost["MLP 1"] / held,
            "attn1_share": lost[layer1] / held, "sep_share": sep / max(1, lost["MLP 0"] + lost["MLP 1"])}


@functools.lru_cache(maxsize=None)
def _sharpness(seed):
    """Each head's largest weight from the last position, averaged over every prompt of the six sets."""
    rows = [row for group in sets(seed).values() for row in last_patterns(calling_game(), group)]
    return {head_name(hd): float(np.mean([r[hd].max() for r in rows])) for hd in all_heads(calling_game().model)}, len(rows)


def _lost_all(seed, kind, head):
    return sum(s.lost(head) for s in surveys(seed, kind).values())


@claim("ablation.flat-head", "ablation",
       "{flat}, whose pattern is {rank} of the eight (mean largest weight {weight:.2f}), loses {all_zero:.0f} "
       "answers over the six sets when zeroed and {all_mean:.0f} mean-ablated; mean-ablated, it loses "
       "{next_mean:.0f} of the {next_held:.0f} next callers the model gets right after Pietro or Paolo was just "
       "called, where it cuts the logit difference by {next_drop:.1f} of {next_base:.1f}",
       words={"whose pattern is {rank} of the eight": Q("rank_i") <= 2,
              "{next_mean:.0f} of the {next_held:.0f} next callers": Q("next_mean") >= 0.15 * Q("next_held"),
              "where it cuts the logit difference by {next_drop:.1f} of {next_base:.1f}":
              Q("next_drop") >= 0.4 * Q("next_base")},
       note="the head losing the most answers (zeroed) besides the reader: among the three flattest patterns; "
            "mean-ablated it still loses 15%+ of the next callers after Pietro or Paolo and 40%+ of their logit "
            "difference",
       scope=THIS_RUN, models=('calling-game',))
def _flat(seed):
    weights, _ = _sharpness(seed)
    reader = reader_head(seed)
    flat = max((h for h in _heads() if h != reader), key=lambda h: (_lost_all(seed, "zero", h), h))
    order = sorted(weights, key=weights.get)
    i = order.index(flat)
    nxt = surveys(seed, "mean")["next: Pietro or Paolo"]
    return {"flat": flat, "weight": weights[flat], "rank_i": i,
            "rank": (("the flattest", "the second flattest", "the third flattest")[i] if i < 3
                     else f"number {i + 1} by flatness"),
            "all_zero": _lost_all(seed, "zero", flat), "all_mean": _lost_all(seed, "mean", flat),
            "next_mean": nxt.lost(flat), "next_held": nxt.held(), "next_drop": nxt.drop(flat),
            "next_base": nxt.mean_diff()}


@claim("ablation.looker", "ablation",
       "On the Cefa prompts {looker} puts its largest weight on the epithet Paolo earned when he was called on "
       "{largest:.0f} of {n:.0f}, with {share:.2f} of its attention on average; yet switched off it loses Cefa on "
       "{zero:.0f} prompts zeroed, {mean:.0f} mean-ablated, and the Cefa-capo logit difference falls by "
       "{dmean:.1f} of {base:.1f} mean-ablated",
       words={"puts its largest weight on the epithet Paolo earned when he was called on {largest:.0f} of {n:.0f}":
              Q("largest") >= 0.5 * Q("n"),
              "yet switched off it loses Cefa on {zero:.0f} prompts zeroed, {mean:.0f} mean-ablated":
              Max("zero", "mean") <= 0.25 * Q("n"),
              "falls by {dmean:.1f} of {base:.1f} mean-ablated": Q("dmean") < 0.5 * Q("base")},
       note="the head looking hardest at the caller's epithet on Cefa prompts loses at most a quarter of them, and "
            "under half the logit difference",
       scope=THIS_RUN, models=('calling-game',))
def _looker(seed):
    place = "the epithet the caller earned"
    earned = attention_survey(calling_game(), sets(seed)["Cefa"], [place])
    looker = max(all_heads(calling_game().model), key=lambda hd: earned[hd][place].largest)
    name = head_name(looker)
    return {"looker": name, "largest": earned[looker][place].largest, "n": earned[looker][place].present,
            "share": earned[looker][place].mean, "zero": _lost(seed, "zero", name, ["Cefa"]),
            "mean": _lost(seed, "mean", name, ["Cefa"]), "dmean": _drop(seed, "mean", name, ["Cefa"]),
            "base": _base(seed, ["Cefa"])}


@claim("ablation.sharp-not-needed", "ablation",
       "Over the {n:.0f} prompts of the six sets, the largest weight from the last position averages "
       "{reader_weight:.2f} for {reader} and {twin_weight:.2f} for {twin}, the head closest to it in sharpness. "
       "Switched off, the first loses {reader_zero:.0f} answers zeroed ({reader_mean:.0f} mean-ablated), the second "
       "{twin_zero:.0f} ({twin_mean:.0f})",
       words={"the head closest to it in sharpness": abs(Q("reader_weight") - Q("twin_weight")) < 0.1,
              "the second {twin_zero:.0f} ({twin_mean:.0f})": Q("twin_mean") <= 0.2 * Q("reader_mean")},
       note="two heads within 0.1 in mean largest weight, one losing five times the answers of the other (mean "
            "ablation)",
       scope=THIS_RUN, models=('calling-game',))
def _sharp(seed):
    weights, n = _sharpness(seed)
    reader = reader_head(seed)
    twin = min((h for h in weights if h != reader), key=lambda h: abs(weights[h] - weights[reader]))
    return {"n": n, "reader": reader, "twin": twin, "reader_weight": weights[reader], "twin_weight": weights[twin],
            **{f"{who}_{k}": _lost_all(seed, k, h) for who, h in (("reader", reader), ("twin", twin))
               for k in ("zero", "mean")}}


@claim("ablation.zero-vs-mean", "ablation",
       "Zeroed, {s_head} loses {s_zero:.0f} of the capo and vice answers; mean-ablated against a reference matched "
       "by position, {s_pos:.0f}; matched by role, {s_mean:.0f}; resampled by role, {s_resample:.0f}. On Tarso, "
       "{t_head} loses {t_zero:.0f}, {t_pos:.0f}, {t_mean:.0f} and {t_resample:.0f}",
       words={"matched by role, {s_mean:.0f}": Q("s_mean") < Q("s_zero") / 2,
              "On Tarso, {t_head} loses {t_zero:.0f}, {t_pos:.0f}, {t_mean:.0f} and {t_resample:.0f}":
              (Q("t_mean") < Q("t_zero") / 2, Q("t_pos") > Q("t_mean"))},
       note="the head losing most capo/vice zeroed, and the second on Tarso: role-matched mean ablation loses under "
            "half as many as zeroing, position-matched more than role-matched on Tarso",
       scope=THIS_RUN, models=('calling-game',))
def _zero_vs_mean(seed):
    t_head = _tarso_heads(seed)["second"]
    s_head = max(_heads(), key=lambda h: (_lost(seed, "zero", h, SUBORDINATE), h))
    out = {"t_head": t_head, "s_head": s_head, "t_pos": _lost(seed, "mean", t_head, ["Tarso"], "position"),
           "s_pos": _lost(seed, "mean", s_head, SUBORDINATE, "position")}
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
    return listed([f"L{layer}H{head}" for layer, head in heads])


@claim("ablation.minilm-beat-chance", "ablation",
       "Of the {k:.0f} heads chosen on one half ({best}), the weakest hits the antecedent {lo:.0f} times on the "
       "other half's {n:.0f} sentences and the strongest {hi:.0f}, where a key picked at random among the words "
       "would hit {chance:.1f} times",
       words={"the weakest hits the antecedent {lo:.0f} times on the other half's {n:.0f} sentences":
              Q("lo") >= 2 * Q("chance")}, setup=("chosen on one half",),
       note="MiniLM: every best head (chosen on the selection half) hits at least twice chance on the report half",
       scope=THIS_RUN)
def _minilm_chance(seed):
    f = pronoun_finding(seed)
    return {"k": f.k, "best": _names(f.best), "lo": min(f.best_report_hits), "hi": max(f.best_report_hits),
            "n": f.n_report, "chance": f.report_baselines["chance"]}


@claim("ablation.minilm-nearest-noun", "ablation",
       "The plain rule \"the nearest noun before the pronoun\" hits {nearest:.0f} times on those sentences (the "
       "first noun of the sentence, {first:.0f}), and {beating:.0f} of the {n_heads:.0f} heads beat it (on other "
       "splits, at most one)",
       words={"heads beat it (on other splits, at most one)": Q("beating") <= 1},
       note="MiniLM: at most one head of 72 hits the antecedent more often than the nearest-noun rule on the report "
            "half (none on the pages' splits; one on 2 of 11 splits measured)",
       scope=THIS_RUN)
def _minilm_nearest(seed):
    f = pronoun_finding(seed)
    return {"nearest": f.report_baselines["nearest noun"], "first": f.report_baselines["first noun"],
            "beating": f.heads_beating_nearest, "n_heads": f.n_heads}


@claim("ablation.minilm-winograd", "ablation",
       "On the {pairs:.0f} Winograd pairs of that half, where the meaning alone tells the antecedents apart, the most "
       "pairs any chosen head gets right in both sentences is {both:.0f}",
       words={"the most pairs any chosen head gets right in both sentences is {both:.0f}": Q("both") <= 1},
       setup=("Winograd pairs of that half",),
       note="MiniLM: no best head finds the antecedent in both sentences of more than one Winograd pair",
       scope=THIS_RUN)
def _minilm_winograd(seed):
    f = pronoun_finding(seed)
    return {"pairs": f.pairs_report, "both": max(f.pairs_both_right.values())}


@claim("ablation.minilm-ablation", "ablation",
       "Intact, the pronoun's final vector is closer to its antecedent's than to the other nouns' on {clean:.0f} of "
       "the {n:.0f} sentences; with the {k:.0f} chosen heads mean-ablated, on {ablated:.0f}. The gap between the "
       "two cosines moves by {best:+.3f} on average; mean-ablating {k:.0f} heads drawn at random moves it by "
       "{control:+.3f} (average of {draws:.0f} draws)",
       words={"is closer to its antecedent's than to the other nouns' on {clean:.0f} of the {n:.0f} sentences; "
              "with the {k:.0f} chosen heads mean-ablated, on {ablated:.0f}":
              abs(Q("clean") - Q("ablated")) <= 0.1 * Q("n"),
              "moves by {best:+.3f} on average": abs(Q("best")) < 0.02,
              "moves it by {control:+.3f}": abs(Q("control")) < 0.02},
       note="MiniLM: mean-ablating the best heads moves the antecedent margin by under 0.02 on average, as random "
            "heads do",
       scope=THIS_RUN)
def _minilm_ablation(seed):
    f = pronoun_finding(seed)
    return {"clean": f.margin_positive_clean, "ablated": f.margin_positive_ablated, "n": f.n_report, "k": f.k,
            "best": f.margin_change_best, "control": f.margin_change_control, "draws": f.control_draws}


# ----------------------------------------------------------------------------- over the panel of runs
# Each job's head found by its role on the run in use (`runs.run_roles`: the pages' run, or each run of the
# panel in a process of its own), prompt sets drawn with `runs.SEED`: the lessons the recipe teaches, and on
# how many of the panel's runs each holds. The numbers kept for each run also draw the section's table.
@claim("ablation.copier-over-runs", "ablation",
       "On {runs}, the head whose zeroing loses the most next callers after a number sits in layer 0 and is the "
       "layer-0 head with the highest copying score ({copier_score:.2f}, above 0.8); zeroed, it loses "
       "{copier_share:.0%} of the answers the run holds",
       words={"the head whose zeroing loses the most next callers after a number":
              Q("copier_lost") >= Q("runner_up_lost"),
              "sits in layer 0": Q("copier_layer").eq(0),
              "is the layer-0 head with the highest copying score": Q("copier_top_score").eq(1),
              "above 0.8": Q("copier_score") > 0.8},
       others="the copier is {copier} (copying score {copier_score:.2f}), and zeroed it loses {copier_share:.0%} of "
              "the next callers",
       seeded=False, scope=EVERY_RUN, models=("calling-game",),
       note="the copier (found by zeroing, next callers after a number) is in layer 0 and is its layer's best copier "
            "by OV copying score (above 0.8)")
def _copier_over_runs(seed):
    r = run_roles()
    return {k: r[k] for k in ("copier", "copier_layer", "copier_score", "copier_top_score", "copier_lost",
                              "copier_held", "runner_up", "runner_up_lost")} | {
        "copier_share": r["copier_lost"] / r["copier_held"]}


@claim("ablation.copy-suppression", "ablation",
       "On {runs}, most of the {later:.0f} heads of layer 1 have a copying score below -0.5 ({suppressors:.0f} of "
       "them; the lowest {lo:.2f}): read from the embedding, their OV circuits lower the logit of the player "
       "they read (copy suppression, as the weights have it; the score does not say what the heads attend to)",
       words={"most of the {later:.0f} heads of layer 1 have a copying score below -0.5":
              Q("suppressors") > Q("later") / 2},
       others="{suppressors:.0f} of the {later:.0f} heads of layer 1 have such a score (the layer's copying scores "
              "run from {lo:.2f} to {hi:.2f})",
       setup=("their OV circuits lower the logit of the player they read",
              "the score does not say what the heads attend to"),
       seeded=False, scope=EVERY_RUN, models=("calling-game",),
       note="OV copying scores (eigenvalues) of the layer-1 heads: over half below -0.5")
def _suppression(seed):
    r = run_roles()
    return {"suppressors": r["suppressors"], "later": r["later_heads"], "lo": r["later_lo"], "hi": r["later_hi"]}


@claim("ablation.reader-over-runs", "ablation",
       "On {runs}, one head's write at the callee, patched back from the clean run, brings back a quarter or more "
       "of who is calling ({reader_recovery:.2f} of the Tarso-vs-vice difference on average) and is the best cell "
       "on 40% or more of the Tarso prompts patched ({best_share:.0%})",
       words={"brings back a quarter or more": Q("reader_recovery") >= 0.25,
              "40% or more": Q("best_share") >= 0.4},
       others="the head whose write at the callee brings back the most, {reader}, brings back {reader_recovery:.2f} "
              "and is the best cell on {best_share:.0%} of the prompts",
       setup=("whose write at the callee brings back the most",),
       seeded=False, scope=EVERY_RUN, models=("calling-game",),
       note="one head's write at the callee brings back a quarter or more of the patched Tarso-vs-vice difference, "
            "and is the best cell on 40%+ of the prompts")
def _reader_over_runs(seed):
    r = run_roles()
    return {k: r[k] for k in ("reader", "reader_layer", "reader_recovery", "reader_best", "patched", "recovery",
                              "copier", "cefa_head", "cefa_head_lost")} | {"best_share": r["reader_best"] / r["patched"]}


@claim("ablation.reader-layer", "ablation",
       "On {runs}, that reader sits in layer 0",
       words={"sits in layer 0": Q("reader_layer").eq(0)},
       others="it is {reader}, a head of layer {reader_layer:.0f}",
       seeded=False, scope=EVERY_RUN, models=("calling-game",),
       note="the reader found by patching is a layer-0 head")
def _reader_layer(seed):
    r = run_roles()
    return {"reader": r["reader"], "reader_layer": r["reader_layer"]}


@claim("ablation.reader-copies", "ablation",
       "On {runs}, the reader and the copier are the same head",
       words={"the same head": Q("same_head").eq(1)},
       others="they are two heads (the reader {reader}, the copier {copier})",
       seeded=False, scope=EVERY_RUN, models=("calling-game",),
       note="the head patching finds carrying the caller is also the head whose zeroing loses the most next callers")
def _reader_copies(seed):
    r = run_roles()
    return {"reader": r["reader"], "copier": r["copier"], "same_head": r["same_head"]}


@claim("ablation.mlps-over-runs", "ablation",
       "On {runs}, patched the same way, MLP 1's best cell brings back 60% or more of the difference "
       "({mlp1:.2f}; MLP 0's {mlp0:.2f})",
       words={"60% or more": Q("mlp1") >= 0.6}, setup=("patched the same way",),
       others="MLP 1's best cell brings back {mlp1:.2f} and MLP 0's {mlp0:.2f}",
       seeded=False, scope=EVERY_RUN, models=("calling-game",),
       note="MLP 1's best cell brings back 60%+ of the patched Tarso-vs-vice difference")
def _mlps_over_runs(seed):
    r = run_roles()
    return {"mlp0": r["mlp0"], "mlp1": r["mlp1"]}


@claim("ablation.reader", "ablation",
       "On {runs}, mean-ablated, the reader costs who is calling more than a numbered caller's epithet: the "
       "Cefa-capo logit difference falls by {cefa_drop_share:.0%} of its size and the capo-and-vice one by "
       "{sub_drop_share:.0%}; it loses {cefa_lost_share:.0%} of the Cefa answers the run holds, and of the capo and "
       "vice ones, where the caller is a numbered player anyway, {sub_lost_share:.0%}, 10% or fewer",
       words={"costs who is calling more than a numbered caller's epithet":
              (Q("cefa_drop_share") > Q("sub_drop_share"), Q("cefa_drop") > 0),
              "10% or fewer": Q("sub_lost_share") <= 0.1},
       others="the Cefa-capo difference falls by {cefa_drop_share:.0%} and the capo-and-vice one by "
              "{sub_drop_share:.0%}, and it loses {cefa_lost_share:.0%} of the Cefa answers and {sub_lost_share:.0%} "
              "of the capo and vice ones",
       seeded=False, scope=EVERY_RUN, models=("calling-game",),
       note="the reader found by patching, mean-ablated (role-matched): the Cefa-capo logit difference falls by a "
            "larger share than the capo/vice one does, and it loses 10% or fewer capo/vice answers")
def _reader_over(seed):
    r = run_roles()
    return {"reader": r["reader"], "cefa_lost": r["cefa_lost"], "cefa_held": r["cefa_held"], "cefa_drop": r["cefa_drop"],
            "cefa_base": r["cefa_base"], "sub_lost": r["sub_lost"], "sub_held": r["sub_held"], "sub_drop": r["sub_drop"],
            "sub_base": r["sub_base"], "cefa_drop_share": r["cefa_drop"] / r["cefa_base"],
            "sub_drop_share": r["sub_drop"] / r["sub_base"], "cefa_lost_share": r["cefa_lost"] / max(1, r["cefa_held"]),
            "sub_lost_share": r["sub_lost"] / max(1, r["sub_held"])}
