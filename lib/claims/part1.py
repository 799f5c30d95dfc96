"""The claims of Part 1 (attention mechanics), each with its measurement.

The calling-game claims count over labelled prompt sets drawn with the claim's seed
(`lib.content.prompt_sets`): 40 later calls for each epithet, 40 turn ends where a number was called
and 40 where Pietro or Paolo was. Every head is ranked; none is left out of a ranking by name. A head
is switched off the three ways of `lib.analysis.ablation` (zero, mean and resample, the last drawn
with the claim's seed), and what carries who is calling is also measured by activation patching
(`lib.analysis.patching`). The worked examples of the early chapters are fixed weights: their claims
say `seeded=False`.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from lib.claims.registry import claim as _register


class _one_thread:
    """torch on one thread while a claim is measured: these are tiny models, and on a busy 2-core machine
    the second thread costs far more in waiting than it gains."""

    def __enter__(self):
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc):
        torch.set_num_threads(self.threads)


def claim(*args, **kwargs):
    """`lib.claims.registry.claim`, measuring on one thread."""
    def register(measure):
        @functools.wraps(measure)
        def on_one_thread(seed):
            with _one_thread():
                return measure(seed)
        _register(*args, **kwargs)(on_one_thread)
        return measure
    return register


N = 40                       # prompts per labelled set
EPITHETS4 = ("Tarso", "Cefa", "capo", "vice")
PEER, SUBORDINATE = ("Tarso", "Cefa"), ("capo", "vice")
OPENING = "<BOS> Pietro chiama Paolo"


@functools.lru_cache(maxsize=None)
def _lm():
    import lib
    return lib.load("calling-game")


def _n_ctx():
    return _lm().model.cfg.n_ctx


@functools.lru_cache(maxsize=None)
def sets(seed: int) -> dict:
    """The six labelled sets of the chapters, drawn with `seed`: the four epithets of a later call,
    and the next caller after a number and after Pietro or Paolo."""
    from lib.content.corpora.calling_game import PLAYERS
    from lib.content.prompt_sets import epithet_sets, prompt_set

    numbers = tuple(p for p in PLAYERS if p not in ("Pietro", "Paolo"))
    out = dict(epithet_sets(N, seed, max_tokens=_n_ctx()))
    out["next: a number"] = prompt_set("next-caller", N, seed, max_tokens=_n_ctx(), target=numbers)
    out["next: Pietro or Paolo"] = prompt_set("next-caller", N, seed, max_tokens=_n_ctx(), target=("Pietro", "Paolo"))
    return out


@functools.lru_cache(maxsize=None)
def surveys(seed: int, kind: str) -> dict:
    """Each set of `sets(seed)`, every head switched off alone the `kind` way (resample draws with `seed`)."""
    from lib.analysis.head_survey import ablation_survey

    return {name: ablation_survey(_lm(), group, kind=kind, seed=seed) for name, group in sets(seed).items()}


def _heads():
    from lib.analysis.ablation import all_heads, head_name
    return [head_name(h) for h in all_heads(_lm().model)]


def _lost(seed, kind, head, names):
    s = surveys(seed, kind)
    return sum(s[n].lost(head) for n in names)


def _held(seed, names):
    s = surveys(seed, "zero")
    return sum(s[n].held() for n in names)


def _and(names):
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# ============================================================================= why-attention
@claim("why-attention.filters", "why-attention",
       "The vertical-stroke filter fires where the stroke lines up with its centre column ({centre:.0f}, "
       "against {left:.0f} one column to the left); the horizontal filter stays silent on this image, every "
       "window cancelling to {horizontal:.0f}",
       holds=lambda x: x["centre"] > 0 > x["left"] and x["horizontal"] == 0 and x["p"] > 0.5, seeded=False,
       note="the worked convolution: the vertical filter's map peaks on the stroke, the horizontal one is all zero")
def _filters(seed):
    from lib.content.convolution import convolve, ocr_pass
    from lib.content.worked_examples import FILTERS, stroke_image

    image = stroke_image()
    run = ocr_pass(image, FILTERS)
    return {"centre": float((image[0:3, 1:4] * FILTERS["vertical"]).sum()),
            "left": float((image[0:3, 0:3] * FILTERS["vertical"]).sum()),
            "horizontal": float(np.abs(convolve(image, FILTERS["horizontal"])).max()),
            "p": float(run["probs"][0])}


# ============================================================================= bigrams
@claim("bigrams.table-learned", "bigrams",
       "With {params:,.0f} parameters the zero-layer model learns the counted bigram table almost exactly: no "
       "entry differs by more than {gap:.3f}",
       holds=lambda x: x["gap"] < 0.05, seeded=False,
       note="largest gap between the zero-layer model's next-token table and the table counted on 20,000 rounds")
def _table(seed):
    import lib
    from lib.analysis.bigrams import bigram_table, model_table

    zl = lib.load("zero-layer")
    _, counts, probs = _bigram_table()
    seen = counts.sum(1) > 0
    return {"params": zl.model.n_params(), "gap": float(np.abs(model_table(zl)[seen] - probs[seen]).max())}


@functools.lru_cache(maxsize=1)
def _bigram_table():
    from lib.analysis.bigrams import bigram_table
    return bigram_table()


@claim("bigrams.losses", "bigrams",
       "On {rounds:.0f} fresh rounds the zero-layer model loses {zl:.3f} nats per token, the same as the bigram "
       "table itself ({bi:.3f}); the two-layer calling-game model loses {cg:.3f}, close to the {rules:.3f} of "
       "the rules themselves, the floor no model can beat",
       holds=lambda x: abs(x["zl"] - x["bi"]) < 0.02 and x["cg"] - x["rules"] < 0.05 and x["cg"] < x["zl"] - 0.1,
       note="loss per token (nats) on 300 rounds drawn with seed 12345 + seed: zero-layer = table; 2-layer within "
            "0.05 of the rules' floor")
def _losses(seed):
    import lib
    from lib.analysis.bigrams import (bigram_loss_per_token, held_out_rounds, loss_per_token,
                                      rules_loss_per_token)

    tokens, _, probs = _bigram_table()
    rounds = held_out_rounds(300, 12345 + seed)
    return {"rounds": len(rounds), "zl": loss_per_token(lib.load("zero-layer"), rounds),
            "bi": bigram_loss_per_token(rounds, probs, tokens), "cg": loss_per_token(_lm(), rounds),
            "rules": rules_loss_per_token(rounds)}


@claim("bigrams.epithets-need-context", "bigrams",
       "Over {n:.0f} later turns of the game, {each:.0f} for each epithet, the zero-layer model gives the right "
       "epithet a probability of at least one half on {zl:.0f} of them, the two-layer model on {lm:.0f}",
       holds=lambda x: x["zl"] <= 0.6 * x["n"] and x["lm"] >= 0.95 * x["n"],
       note="later-turn epithet prompts held (P >= 0.5): the zero-layer model at most 60%, the two-layer model 95%+")
def _epithets_need_context(seed):
    import lib
    from lib.analysis.head_survey import ablation_survey

    zl = lib.load("zero-layer")
    groups = [sets(seed)[e] for e in EPITHETS4]
    return {"n": sum(len(g) for g in groups), "each": N,
            "zl": sum(ablation_survey(zl, g, {}).held() for g in groups), "lm": _held(seed, EPITHETS4)}


# ============================================================================= one-head
@functools.lru_cache(maxsize=1)
def _cat_sat():
    from lib.content.worked_examples import cat_sat

    ex = cat_sat()
    _, cache = ex.model.run_with_cache(ex.tokens)
    return ex, cache


@claim("one-head.sat-reads-the", "one-head",
       "To make the output for *sat*, the head takes {the:.3f} of *the*, {cat:.3f} of *cat* and {sat:.3f} of "
       "itself: more from *the* than from *cat*",
       holds=lambda x: x["the"] > x["cat"], seeded=False,
       note="the worked head's pattern row for sat (the source note's printed row has it the other way)")
def _sat_row(seed):
    _, cache = _cat_sat()
    row = cache["blocks.0.attn.pattern"][0, 2].double().numpy()
    return {"the": float(row[0]), "cat": float(row[1]), "sat": float(row[2])}


@claim("one-head.echo", "one-head",
       "Put each of the {vocab:.0f} words after *the cat* in turn: the word just read comes first for {echo:.0f} "
       "of them, where a blind guess would manage one",
       holds=lambda x: x["echo"] >= x["vocab"] / 2, seeded=False,
       note="the tied worked model's top word is the word it just read for at least half the vocabulary")
def _echo(seed):
    from lib.content.worked_examples import echo_count

    ex, _ = _cat_sat()
    echo, vocab = echo_count(ex)
    return {"echo": echo, "vocab": vocab}


@claim("one-head.order-blind", "one-head",
       "In the other order, *cat the sat*, the head's write at *sat* changes by {write_text} at most, its logits "
       "by {logits_text}: the output does not move",
       holds=lambda x: x["write"] < 1e-5 and x["logits"] < 1e-5, seeded=False,
       note="one head without positions: the last position's write does not depend on the order of the others")
def _order_blind(seed):
    from lib.analysis.positions import order_test

    ex, _ = _cat_sat()
    change = order_test(ex.model, [ex.tokens], shuffles=3, stages=("blocks.0.attn_out", "logits"), keep_first=False)
    write, logits = change.largest["blocks.0.attn_out"], change.largest["logits"]
    return {"shuffles": change.shuffles, "write": write, "logits": logits,
            "write_text": "exactly 0" if write == 0 else f"{write:.0e}",
            "logits_text": "exactly 0" if logits == 0 else f"{logits:.0e}"}


# ============================================================================= many-heads
@claim("many-heads.heads-differ", "many-heads",
       "Averaged over every pair of layer-0 heads and {n:.0f} later-turn prompts, the total-variation distance "
       "between two heads' rows of weights is {trained:.2f} for the trained model, against {fresh:.4f} for the "
       "same model before training",
       holds=lambda x: x["trained"] > 10 * x["fresh"],
       note="layer 0's heads disagree (mean total-variation distance) ten times more after training than before")
def _heads_differ(seed):
    from lib.analysis.head_survey import head_disagreement, untrained_twin
    from lib.content.prompt_sets import prompt_set

    later = prompt_set("epithet-later-turn", N, seed, max_tokens=_n_ctx())
    return {"n": len(later), "trained": head_disagreement(_lm(), later, 0),
            "fresh": head_disagreement(untrained_twin(_lm()), later, 0)}


@claim("many-heads.writes-add", "many-heads",
       "In the trained model, over {n:.0f} later-turn prompts and both layers, the attention write is the sum of "
       "its four heads' terms {gap_text}",
       holds=lambda x: x["gap"] < 1e-4,
       note="largest gap between a layer's attention write and the sum of its heads' writes")
def _writes_add(seed):
    from lib.content.prompt_sets import prompt_set

    lm = _lm()
    gap = 0.0
    for p in prompt_set("epithet-later-turn", N, seed, max_tokens=_n_ctx()):
        _, c = lm.model.run_with_cache(lm.encode(p.text))
        for layer in range(lm.model.cfg.n_layers):
            parts = c[f"blocks.{layer}.attn.head_out"].sum(1)
            gap = max(gap, float((parts - c[f"blocks.{layer}.attn_out"]).abs().max()))
    return {"n": N, "gap": gap, "gap_text": "exactly" if gap == 0 else f"to within {gap:.0e}"}


@functools.lru_cache(maxsize=None)
def _order_tests(seed):
    from lib.analysis.positions import order_test, without_positions
    from lib.content.prompt_sets import prompt_set

    lm = _lm()
    sequences = [lm.encode(p.text) for p in prompt_set("epithet-later-turn", N, seed, max_tokens=_n_ctx())]
    return (order_test(without_positions(lm).model, sequences, seed=seed), order_test(lm.model, sequences, seed=seed))


@claim("many-heads.order-from-positions", "many-heads",
       "Over {shuffled:.0f} shuffled later-turn prompts, without positions layer 0's write at the last position "
       "never changes by more than {flat_l0:.0e}, float rounding, while layer 1's changes by up to {flat_l1:.2f}; "
       "with the learned positions, layer 0 already changes by up to {pos_l0:.2f}",
       holds=lambda x: x["flat_l0"] < 1e-4 and x["flat_l1"] > 0.1 and x["pos_l0"] > 0.1,
       note="order_test on the later-turn set: layer 0 is order-blind without positions, layer 1 is not")
def _order_from_positions(seed):
    flat, pos = _order_tests(seed)
    return {"shuffled": flat.shuffles, "flat_l0": flat.largest["blocks.0.attn_out"],
            "flat_l1": flat.largest["blocks.1.attn_out"], "pos_l0": pos.largest["blocks.0.attn_out"]}


@claim("many-heads.rhythm", "many-heads",
       "Positions {lag:.0f} apart are the most alike (mean cosine {cos:.2f}, the next best {next:.2f})",
       holds=lambda x: x["lag"] == 4 and x["cos"] > x["next"], seeded=False,
       note="the learned position embeddings are most alike four apart, the length of a turn without an epithet")
def _rhythm(seed):
    from lib.analysis.positions import lag_similarity

    lags = lag_similarity(_lm().model, max_lag=10)
    return {"lag": int(np.argmax(lags)) + 1, "cos": float(lags.max()), "next": float(np.sort(lags)[-2])}


@claim("many-heads.l0h3-distances", "many-heads",
       "From the positions alone, L0H3's two favourite distances back are {best:.0f} and {second:.0f}",
       holds=lambda x: {x["best"], x["second"]} == {1, 5}, seeded=False,
       note="offset_preference of L0H3: distances 1 and 5 score highest")
def _l0h3(seed):
    from lib.analysis.positions import offset_preference

    prefs = offset_preference(_lm().model, 0, 3, max_offset=10)
    top = np.argsort(-prefs[1:])[:2] + 1
    return {"best": int(top[0]), "second": int(top[1])}


@claim("many-heads.positions-needed", "many-heads",
       "Without its position embeddings the model keeps {held_without:.0f} of the {held_with:.0f} answers it "
       "holds over the five labelled sets ({n:.0f} prompts); {hurt:.0f} of the five sets lose prompts, and the "
       "opening call loses its one prompt: on `<BOS> Pietro chiama Paolo` Tarso falls from {first_with:.4f} to "
       "{first_without:.2f}",
       holds=lambda x: x["hurt"] >= 4 and x["first_without"] < 0.5 and x["held_without"] < x["held_with"],
       note="held answers (P >= 0.5) with and without positions, over the five kinds of labelled prompts")
def _positions_needed(seed):
    from lib.analysis.head_survey import ablation_survey
    from lib.analysis.positions import without_positions
    from lib.content.prompt_sets import KINDS, prompt_set
    from lib.model.readout import token_prob

    lm = _lm()
    flat = without_positions(lm)
    hurt = held_with = held_without = n = 0
    for kind in KINDS:
        group = prompt_set(kind, N, seed, max_tokens=_n_ctx())
        w, wo = ablation_survey(lm, group, {}).held(), ablation_survey(flat, group, {}).held()
        hurt += wo < w
        held_with, held_without, n = held_with + w, held_without + wo, n + len(group)
    return {"n": n, "held_with": held_with, "held_without": held_without, "hurt": hurt,
            "first_with": token_prob(lm, OPENING, "Tarso"), "first_without": token_prob(flat, OPENING, "Tarso")}


# ============================================================================= circuits
@claim("circuits.rank", "circuits",
       "Each circuit is {d_model:.0f} by {d_model:.0f}, yet {n_rank:.0f} of the {n:.0f} have rank {d_head:.0f} "
       "exactly: past the head's width the singular values are rounding noise (at most {tail:.0e} of the largest)",
       holds=lambda x: x["n_rank"] == x["n"] and x["tail"] < 1e-5, seeded=False,
       note="every QK and OV circuit of the calling-game model has rank d_head")
def _rank(seed):
    from lib.analysis.ablation import all_heads
    from lib.analysis.circuits import ov_circuit, qk_circuit

    cfg = _lm().model.cfg
    ranks, tails = [], []
    for layer, h in all_heads(_lm().model):
        for M in (qk_circuit(_lm().model, layer, h), ov_circuit(_lm().model, layer, h)):
            sv = np.linalg.svd(M, compute_uv=False)
            ranks.append(int((sv > sv[0] * 1e-5).sum()))
            tails.append(sv[cfg.d_head] / sv[0])
    return {"d_model": cfg.d_model, "d_head": cfg.d_head, "n": len(ranks),
            "n_rank": sum(r == cfg.d_head for r in ranks), "tail": float(max(tails))}


@functools.lru_cache(maxsize=None)
def _attention(seed):
    """Where each head looks from the callee, on the four later-call epithet sets of `seed`."""
    from lib.analysis.circuits import head_habits
    from lib.analysis.head_survey import attention_survey

    by_epithet = {e: attention_survey(_lm(), sets(seed)[e], ["where the caller was called"]) for e in EPITHETS4}
    habits = head_habits(_lm(), [p for e in EPITHETS4 for p in sets(seed)[e]])
    return habits, by_epithet


@claim("circuits.finder", "circuits",
       "No head looks at the caller's own token two places back: the largest share any head gives it is "
       "{caller_max:.2f}. {finder} looks to where the caller was called, with {share:.2f} of its attention on "
       "average, and puts its largest weight there on {Tarso:.0f} of the Tarso prompts and {Cefa:.0f} of the "
       "Cefa prompts, against {capo:.0f} capo and {vice:.0f} vice prompts",
       holds=lambda x: x["caller_max"] < 0.2 and min(x["Tarso"], x["Cefa"]) >= 0.6 * N
       and max(x["capo"], x["vice"]) <= 0.15 * N,
       note="attention from the callee over 40 later calls per epithet: the head with the largest share on where "
            "the caller was called gets its largest weight there on 60%+ of the peer prompts, 15% or fewer of the "
            "subordinate")
def _finder(seed):
    from lib.analysis.ablation import all_heads, head_name

    habits, by_epithet = _attention(seed)
    called = "where the caller was called"
    heads = all_heads(_lm().model)
    finder = max(heads, key=lambda hd: habits.shares[hd][called])
    return {"caller_max": max(habits.shares[hd]["the caller"] for hd in heads), "finder": head_name(finder),
            "share": habits.shares[finder][called],
            **{e: by_epithet[e][finder][called].largest for e in EPITHETS4}}


@functools.lru_cache(maxsize=None)
def _copying(seed):
    from lib.analysis.head_survey import attention_survey

    return {name: attention_survey(_lm(), sets(seed)[name], ["the callee", "the epithet the callee earned"])
            for name in ("next: a number", "next: Pietro or Paolo")}


@claim("circuits.copier", "circuits",
       "{copier} puts its largest weight from `<SEP>` on the player just called on {largest:.0f} of the {n:.0f} "
       "prompts where a number was called (mean share {share:.2f}); its OV circuit makes each of {ov:.0f} players "
       "raise its own logit more than any other; and switched off it loses the answer on {zero:.0f} of the "
       "{held:.0f} prompts the model gets right when zeroed, {mean:.0f} when mean-ablated, {resample:.0f} when "
       "resampled",
       holds=lambda x: x["largest"] >= 0.75 * x["n"] and x["ov"] >= 8 and min(x["zero"], x["mean"], x["resample"])
       >= 0.6 * x["held"] and x["is_finder"] == 1,
       note="the head looking hardest at the callee from <SEP> (a number called) copies it (OV), is needed for it "
            "under all three ablations, and is the head that finds where the caller was called")
def _copier(seed):
    from lib.analysis.ablation import all_heads, head_name
    from lib.analysis.circuits import ov_copies
    from lib.content.corpora.calling_game import PLAYERS

    looks = _copying(seed)["next: a number"]
    copier = max(all_heads(_lm().model), key=lambda hd: looks[hd]["the callee"].largest)
    name = head_name(copier)
    ids = [_lm().vocab.id(p) for p in PLAYERS]
    s = {k: surveys(seed, k)["next: a number"] for k in ("zero", "mean", "resample")}
    return {"copier": name, "largest": looks[copier]["the callee"].largest, "n": s["zero"].n,
            "share": looks[copier]["the callee"].mean, "ov": sum(ov_copies(_lm().model, *copier, ids)),
            "held": s["zero"].held(), **{k: v.lost(name) for k, v in s.items()},
            "is_finder": int(name == _finder(seed)["finder"])}


@claim("circuits.peer-next-caller", "circuits",
       "When Pietro or Paolo was called, {copier} puts its largest weight on the callee on {copier_largest:.0f} of "
       "the {n:.0f} prompts and switching it off loses {copier_lost:.0f} of {held:.0f}; {reader} reads the epithet "
       "just before `<SEP>` (its largest weight, on {reader_largest:.0f} prompts), and no single head is "
       "indispensable: the most any one loses is {most_zero:.0f} zeroed, {most_mean:.0f} mean-ablated",
       holds=lambda x: max(x["most_zero"], x["most_mean"]) <= x["held"] / 2 and x["copier_lost"] <= 5,
       note="next-caller prompts after Pietro or Paolo: no single head (zero or mean ablation) loses half of them")
def _peer_next(seed):
    from lib.analysis.ablation import all_heads, head_name

    heads = all_heads(_lm().model)
    number_looks = _copying(seed)["next: a number"]
    looks = _copying(seed)["next: Pietro or Paolo"]
    copier = max(heads, key=lambda hd: number_looks[hd]["the callee"].largest)
    reader = max(heads, key=lambda hd: looks[hd]["the epithet the callee earned"].largest)
    zero, mean = surveys(seed, "zero")["next: Pietro or Paolo"], surveys(seed, "mean")["next: Pietro or Paolo"]
    return {"copier": head_name(copier), "copier_largest": looks[copier]["the callee"].largest, "n": zero.n,
            "copier_lost": zero.lost(head_name(copier)), "held": zero.held(), "reader": head_name(reader),
            "reader_largest": looks[reader]["the epithet the callee earned"].largest,
            "most_zero": max(zero.lost(k) for k in zero.off), "most_mean": max(mean.lost(k) for k in mean.off)}


# ============================================================================= ablation
@claim("ablation.attention-off", "ablation",
       "Over {n:.0f} later-call prompts, each against a random context, removing every head and zeroing every "
       "$W_O$ give logits {gap_text}; with attention off, replacing everything between `<BOS>` and the last token "
       "by random tokens changes the last position's logits by {off_text} on every prompt, where the intact "
       "model's move by up to {on:.0f}",
       holds=lambda x: x["gap"] < 1e-5 and x["off"] < 1e-5 and x["on"] > 1,
       note="context_blindness over the Tarso and Cefa later-call sets")
def _attention_off(seed):
    from lib.analysis.ablation import context_blindness

    blind = context_blindness(_lm(), sets(seed)["Cefa"] + sets(seed)["Tarso"], seed=seed)

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
    from lib.analysis.ablation import all_heads
    from lib.analysis.head_survey import HOLDS_AT, Switch, ablation_survey

    every = {"every head": Switch(heads=tuple(all_heads(_lm().model)))}
    out = {}
    for kind in ("zero", "mean"):
        for label, names in (("sub", SUBORDINATE), ("peer", PEER)):
            out[f"{label}_{kind}"] = sum(
                int((ablation_survey(_lm(), sets(seed)[e], every, kind=kind).off["every head"] >= HOLDS_AT).sum())
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
    from lib.analysis.ablation import ablated_logits, all_heads, head_name, reference_set
    from lib.model.hooks import replace_heads
    from lib.model.readout import softmax

    lm = _lm()
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
    from lib.analysis.patching import NUMBERS, patch
    from lib.model.readout import token_prob

    out = []
    for number in NUMBERS:
        corrupted = f"<BOS> {number} chiama Paolo"
        r = patch(_lm(), OPENING, corrupted, "Tarso", "vice")
        best = max(r.head_cells(), key=lambda c: c["recovered"])
        there = r.heads[:, :, best["position"]].copy()
        layer, head = int(best["head"][1]), int(best["head"][3])
        there[layer, head] = -np.inf
        out.append((number, token_prob(_lm(), corrupted, "Tarso"), best, float(there.max())))
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
    from lib.analysis.positions import without_positions
    from lib.model.readout import token_prob

    found = _opening_patches()
    bests = [b["head"] for _, _, b, _ in found]
    top = max(set(bests), key=bests.count)
    at_callee = [b for _, _, b, _ in found if b["head"] == top and b["position"] == 3]
    return {"intact": token_prob(_lm(), OPENING, "Tarso"), "worst": max(p for _, p, _, _ in found),
            "low": sum(p < 0.02 for _, p, _, _ in found), "n": len(found), "best": top, "best_n": len(at_callee),
            "lo": min(b["recovered"] for b in at_callee) if at_callee else 0.0,
            "hi": max(b["recovered"] for b in at_callee) if at_callee else 0.0,
            "second": max(s for _, _, _, s in found),
            "no_pos": token_prob(without_positions(_lm()), OPENING, "Tarso")}


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
    out = {"reader": reader, "cefa_held": _held(seed, ["Cefa"]), "sub_held": _held(seed, SUBORDINATE)}
    for kind in ("zero", "mean", "resample"):
        out[f"cefa_{kind}"] = _lost(seed, kind, reader, ["Cefa"])
        out[f"sub_{kind}"] = _lost(seed, kind, reader, SUBORDINATE)
    return out


PATCHED = 20   # Tarso prompts patched (the first of the set): a patch is some 40 forward passes


@functools.lru_cache(maxsize=None)
def _tarso_patches(seed):
    """Each Tarso prompt patched from its twin with the caller swapped for a number (Tarso vs vice):
    per prompt, every head's best cell."""
    from lib.analysis.patching import patch, swap_players
    from lib.content.prompt_sets import places

    out = []
    for p in sets(seed)["Tarso"][:PATCHED]:
        r = patch(_lm(), p.text, swap_players(p.text), "Tarso", "vice")
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
    out = {"held": _held(seed, ["Tarso"]), "top_two": " and ".join(tops["zero"]),
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
    from lib.analysis.ablation import all_heads, head_name

    found = _tarso_patches(seed)
    names = [h["head"] for _, h, at in found if at]
    best = max(set(names), key=names.count) if names else ""
    mean = np.mean([m for m, _, _ in found], axis=0)        # [layer, head]
    per = {head_name(hd): float(mean[hd]) for hd in all_heads(_lm().model)}
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
    from lib.analysis.ablation import all_heads, head_name
    from lib.analysis.head_survey import last_patterns

    rows = [row for group in sets(seed).values() for row in last_patterns(_lm(), group)]
    return {head_name(hd): float(np.mean([r[hd].max() for r in rows])) for hd in all_heads(_lm().model)}, len(rows)


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
            "tarso_mean": _lost(seed, "mean", flat, ["Tarso"]), "held": _held(seed, ["Tarso"])}


@claim("ablation.looker", "ablation",
       "On the Cefa prompts {looker} puts its largest weight on the epithet Paolo earned when he was called on "
       "{largest:.0f} of {n:.0f}, with {share:.2f} of its attention on average; yet switched off it loses Cefa on "
       "{zero:.0f} prompts zeroed, {mean:.0f} mean-ablated",
       holds=lambda x: x["largest"] >= 0.5 * x["n"] and max(x["zero"], x["mean"]) <= 0.25 * x["n"],
       note="the head looking hardest at the caller's epithet on Cefa prompts loses at most a quarter of them")
def _looker(seed):
    from lib.analysis.ablation import all_heads, head_name
    from lib.analysis.head_survey import attention_survey

    place = "the epithet the caller earned"
    earned = attention_survey(_lm(), sets(seed)["Cefa"], [place])
    looker = max(all_heads(_lm().model), key=lambda hd: earned[hd][place].largest)
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
# The split seed of lib.analysis.pronoun_heads is the claim's seed: the heads are chosen on one half of
# the labelled set and counted on the other.
@functools.lru_cache(maxsize=None)
def pronoun_finding(seed: int):
    from lib.analysis import pronoun_heads

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
