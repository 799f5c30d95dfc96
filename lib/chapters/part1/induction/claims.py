"""The claims of the chapter `chapters/part1/induction.md`, each with its measurement.

The lessons about the recipe are measured on the run in use (`lib.load("induction")`: the pages' run, or each
run of the panel in a process of its own, `lib.claims.panel`), on repeated random segments drawn with the
claim's seed; the heads are found by their role on each run, never by their index, and a run on which the role
a claim speaks of did not form is a measured "no" with its reason (`Absent`). What the trainer recorded
while the run trained (`meta.json`'s `monitored`: the losses and the best heads' scores every 10 steps)
says when each head formed.
"""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.analysis import induction
from lib.analysis.calibration import wilson_interval
from lib.claims.registry import EVERY_RUN, THIS_RUN, Absent, listed
from lib.claims.registry import claim as register
from lib.claims.words import Q
from lib.chapters.part1.induction import pitfalls, real
from lib.model import smollm2
from lib.shipped.presets import get_preset

MODEL = "induction"
# Lessons about the recipe, each measured on one run at a time, with torch on one thread (the model is tiny:
# see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True, scope=EVERY_RUN, models=(MODEL,))

# Sequences of each period a claim measures a run on (9 periods: 72 sequences, in batches of 4 sharing a filler).
PER_PERIOD = 8
# The phase change, measured alike on every run: the first step (of the trainer's held-out measurements,
# every 10 steps) at which the second copy's loss is below this many nats.
PHASE_LOSS = 1.0


def _lm():
    return lib.load(MODEL)


@functools.lru_cache(maxsize=None)
def account(seed: int) -> dict:
    """The run in use's circuit measured on the sequences of `seed` (`induction.circuit`)."""
    c = induction.circuit(_lm().model, induction.sequences(seed, per_period=PER_PERIOD))
    c["steps"] = _lm().meta["steps_trained"]
    return c


def _formed(seed: int) -> dict:
    """The account of a run whose induction head formed; on a run without one, `Absent` says so."""
    c = account(seed)
    if not c["roles"].induction_formed:
        raise Absent(f"no induction head formed (the best score in layer 1 is {c['roles'].induction_score:.2f}; the "
                     f"run copies {c['accuracy']:.0%} of the second copy)")
    return c


def first_step(steps: list[int], values: list[float], at: float, above: bool = True) -> int | None:
    """The first recorded step at which `values` pass `at` (above it, or below it), or None."""
    return next((s for s, v in zip(steps, values) if (v >= at if above else v < at)), None)


def phase_step(steps: list[int], losses: list[float]) -> int | None:
    return first_step(steps, losses, PHASE_LOSS, above=False)


def training_record(lm) -> dict:
    """When the run's heads formed and its loss fell, from what the trainer recorded every 10 steps."""
    mon = lm.meta["monitored"]
    steps = mon["steps"]
    return {"ind_step": first_step(steps, mon["induction_score"], induction.FORMED),
            "prev_step": first_step(steps, mon["previous_score"], induction.FORMED_PREVIOUS),
            "dup_step": first_step(steps, mon["duplicate_score"], induction.FORMED_PREVIOUS),
            "phase": phase_step(steps, mon["second_copy_loss"]), "stop": lm.meta["steps_trained"],
            "ind_best": max(mon["induction_score"]), "start_loss": mon["second_copy_loss"][0]}


@claim("induction.head-forms", "induction",
       "On {runs}, layer 1 has induction heads: from each letter of the second copy, its best head puts {ind:.2f} "
       "of its attention on the letter after that letter's earlier occurrence, {formed:.1f} or more ({n_ind:.0f} of "
       "its {n_heads:.0f} heads do), and the run copies {accuracy:.1%} of the second copy",
       words={"{formed:.1f} or more": Q("ind") >= Q("formed")},
       others="layer 1's best induction score is {ind:.2f}, yet the run copies {accuracy:.1%} of the second copy "
              "(loss {loss:.2f} nats, the first copy's {first_loss:.2f})",
       note="layer 1's best induction score is 0.5 or more")
def _head_forms(seed):
    c = account(seed)
    return {"ind": c["roles"].induction_score, "formed": induction.FORMED, "accuracy": c["accuracy"],
            "n_ind": int((c["scores"]["induction"][1] >= induction.FORMED).sum()), "n_heads": c_heads(),
            "loss": c["clean"]["loss"], "first_loss": c["loss"]["first_copy_loss"],
            "induction_head": list(c["roles"].induction), "previous": c["roles"].previous_score,
            "duplicate": c["roles"].duplicate_score}


def c_heads() -> int:
    return _lm().model.cfg.n_heads


def _route(seed):
    c = _formed(seed)
    base = c["clean"]["loss"]
    return {"route_k": int(c["route"] == "K"), "k_rise": c["paths"]["K"]["loss"] - base,
            "q_rise": c["paths"]["Q"]["loss"] - base, "sender": f"L{c['sender'][0]}H{c['sender'][1]}",
            "sender_prev": c["sender_previous"], "sender_dup": c["sender_duplicate"],
            "formed_previous": induction.FORMED_PREVIOUS, "kc": c["composition"]["K"], "qc": c["composition"]["Q"],
            "baseline": induction.composition_baseline(_lm().model.cfg)["K"]}


claim("induction.route-keys", "induction",
      "On {runs}, the induction heads read a layer-0 head through their keys: path patching only that path, with the "
      "layer-0 head's write taken from another sequence, raises the loss on the second copy by {k_rise:.2f} nats, "
      "more than the same head's path through the queries does ({q_rise:.2f})",
      words={"more than the same head's path through the queries does": Q("route_k").eq(1)},
      others="the path that costs most runs through the induction heads' queries: {q_rise:.2f} nats, the keys' "
             "{k_rise:.2f}",
      setup=("path patching only that path", "the path that costs most"),
      note="over every layer-0 head and both inputs of the induction heads (every layer-1 head scoring 0.5 or more, "
           "patched at once), the path patching that costs the second copy the most loss runs through the keys")(_route)

claim("induction.sender-previous", "induction",
      "On {runs}, that layer-0 head, the induction heads' sender, is a previous-token head: it puts {sender_prev:.2f} "
      "of its attention on the position just before each query, {formed_previous:.1f} or more",
      words={"{formed_previous:.1f} or more": Q("sender_prev") >= Q("formed_previous")},
      others="the sender, {sender}, puts {sender_dup:.2f} of its attention, from each letter of the second copy, on "
             "that letter's earlier occurrence, and {sender_prev:.2f} on the position before",
      note="the layer-0 head whose path into the induction head costs the most has a previous-token score of 0.3 "
           "or more")(_route)


@claim("induction.ablation", "induction",
       "On {runs}, resample-ablating the sender raises the loss on the second copy by {sender_rise:.2f} nats and "
       "ablating the induction heads together ({n_ind:.0f} of them) by {ind_rise:.2f}, each by more than 0.1 nats",
       words={"each by more than 0.1 nats": (Q("sender_rise") > 0.1, Q("ind_rise") > 0.1)},
       others="ablating the sender raises it by {sender_rise:.2f} nats and the induction heads by {ind_rise:.2f}",
       note="resample ablation (each head's write taken from another sequence of the same period and filler)")
def _ablation(seed):
    c = _formed(seed)
    base = c["clean"]["loss"]
    return {"sender_rise": c["ablate_sender"]["loss"] - base, "ind_rise": c["ablate_induction_heads"]["loss"] - base,
            "n_ind": len(c["induction_heads"]), "clean": base, "diff": c["clean"]["logit_diff"]}


@claim("induction.reads-hole", "induction",
       "On {runs}, the induction heads find the earlier occurrence by a hole: every head of layer 0 puts less "
       "attention on the current letter's earlier occurrence than on the positions beside it (at most {max_dip:.2f} "
       "times as much), and filling that hole, the attention there set to the mean of its two neighbours in every "
       "head of layer 0, raises the loss on the second copy by {fill_rise:.2f} nats, more than 1 nat",
       words={"every head of layer 0 puts less attention on the current letter's earlier occurrence than on the "
              "positions beside it (at most {max_dip:.2f} times as much)": Q("max_dip") < 1,
              "more than 1 nat": Q("fill_rise") > 1},
       others="filling the hole raises the loss by {fill_rise:.2f} nats",
       setup=("filling that hole", "the attention there set to the mean of its two neighbours in every head of layer 0"),
       note="each layer-0 head's avoidance ratio (attention on the earlier occurrence over the mean on the two "
            "positions beside it) below 1, and filling the hole in every layer-0 head raises the second copy's loss "
            "by more than 1 nat")
def _reads_hole(seed):
    model = _lm().model
    batches = induction.merged(induction.sequences(seed, per_period=PER_PERIOD))
    dips = induction.pattern_scores(model, batches)["avoidance"][0]
    base = induction.clean(model, batches)["loss"]
    return {"max_dip": float(dips.max()), "dips": [float(x) for x in dips], "clean": base,
            "fill_rise": induction.fill_hole(model, batches)["loss"] - base}


@claim("induction.forms-at", "induction",
       "On {runs}, the induction head forms during training, its score passing {formed:.1f} at step {ind_step:.0f}; "
       "training reaches its floor at step {stop:.0f}",
       words={"the induction head forms during training": Q("formed_in_training").eq(1)},
       others="layer 1's best induction score while it trained was {ind_best:.2f}; it stopped at step {stop:.0f}",
       seeded=False, note="the first recorded step at which layer 1's best induction score passes 0.5, on each run")
def _forms_at(seed):
    r = training_record(_lm())
    return {"formed": induction.FORMED, "ind_step": r["ind_step"], "stop": r["stop"], "ind_best": r["ind_best"],
            "formed_in_training": int(r["ind_step"] is not None)}


@claim("induction.heads-order", "induction",
       "On {runs}, the induction head's score passes {formed:.1f} no later than layer 0's best previous-token score "
       "passes {formed_previous:.1f} (by up to {lead:.0f} steps): the two heads form together, or the induction head "
       "first",
       words={"no later than": Q("lead") >= 0},
       others="layer 0's best previous-token score passes {formed_previous:.1f} {lead_back:.0f} steps before the "
              "induction score passes {formed:.1f}",
       seeded=False,
       note="on each run that forms a previous-token head, the step at which the best induction score passes 0.5 "
            "against the step at which layer 0's best previous-token score passes 0.3")
def _heads_order(seed):
    r = training_record(_lm())
    if r["ind_step"] is None:
        raise Absent("its induction score never passed 0.5 while it trained")
    if r["prev_step"] is None:
        raise Absent(f"no head of layer 0 became a previous-token head while it trained (a score of "
                     f"{induction.FORMED_PREVIOUS} or more)")
    return {"formed": induction.FORMED, "formed_previous": induction.FORMED_PREVIOUS,
            "lead": r["prev_step"] - r["ind_step"], "lead_back": r["ind_step"] - r["prev_step"],
            "ind_step": r["ind_step"], "sender_step": r["prev_step"]}


@claim("induction.plateau", "induction",
       "On {runs}, the loss on the second copy sits at the first copy's level, within 0.2 nats of it, for the "
       "first {depart:.0f} steps, then takes {slide:.0f} steps to slide to 2 nats and {fall:.0f} to fall from 2 "
       "nats to 1 nat, faster than it slid",
       words={"faster than it slid": Q("fall") < Q("slide")},
       others="it leaves the first copy's level at step {depart:.0f}, takes {slide:.0f} steps to reach 2 nats "
              "and {fall:.0f} to go from 2 nats to 1",
       setup=("within 0.2 nats of it",),
       seeded=False,
       note="from the trainer's record every 10 steps: the first step the second copy's loss is 0.2 nats below the "
            "first copy's, then below 2 nats, then below 1 nat; the last stretch shorter than the one before")
def _plateau(seed):
    mon = _lm().meta["monitored"]
    depart = next((s for s, a, b in zip(mon["steps"], mon["second_copy_loss"], mon["first_copy_loss"]) if a < b - 0.2),
                  None)
    two = first_step(mon["steps"], mon["second_copy_loss"], 2.0, above=False)
    one = phase_step(mon["steps"], mon["second_copy_loss"])
    if depart is None or two is None or one is None:
        raise Absent("the second copy's loss never fell below 1 nat while it trained")
    return {"start": mon["second_copy_loss"][0], "depart": depart, "slide": two - depart, "fall": one - two,
            "phase": one}


@claim("induction.pitfall-small-init", "induction",
       "Initialised with std {std:.2f} instead of {shipped_std:.1f}, one run of the recipe had not got its "
       "second-copy loss down to {phase:.0f} nat after {steps:.0f} steps: it was still at {loss:.2f} nats, above the "
       "floor of {floor:.2f}, and no induction head had formed (layer 1's best induction score {small_ind:.2f}). On "
       "{runs}, the shipped recipe gets there in less than half as many steps, by step {shipped_phase:.0f}",
       words={"had not got its second-copy loss down to {phase:.0f} nat after {steps:.0f} steps":
              Q("small_reached").eq(0),
              "still at {loss:.2f} nats, above the floor of {floor:.2f}": Q("loss") > Q("floor"),
              "no induction head had formed": Q("small_ind") < induction.FORMED,
              "in less than half as many steps": 2 * Q("shipped_phase") < Q("steps")},
       others="it gets there by step {shipped_phase:.0f}",
       seeded=False,
       note="the step at which each run's second-copy loss passes below 1 nat, beside one run of the shipped recipe "
            "with init_std 0.02 trained for a fixed number of steps (pitfalls.json), whose loss never got below 1 nat")
def _small(seed):
    f = pitfalls.read()["small-init"]
    every = f["train"]["monitor_every"]
    small = phase_step([i * every for i in range(len(f["second_copy_loss"]))], f["second_copy_loss"])
    mine = training_record(_lm())["phase"]
    if mine is None:
        raise Absent("its second-copy loss never fell below 1 nat")
    return {"std": pitfalls.SMALL_INIT_STD, "shipped_std": _lm().model.cfg.init_std, "steps": f["steps_trained"],
            "phase": PHASE_LOSS, "small_reached": int(small is not None), "shipped_phase": mine,
            "loss": f["varying"]["second_copy_loss"], "small_ind": f["varying"]["induction_layer1"],
            "floor": get_preset(MODEL).train.stop_below}


# ----------------------------------------------------------------------------- other recipes, measured once
@claim("induction.pitfall-fixed-period", "induction",
       "Trained on one fixed period ({period:.0f} letters), the model reaches the floor in {steps:.0f} steps, "
       "and on that period its heads look one period minus one back (a layer-0 head scores {l0:.2f}, a "
       "layer-1 head {l1:.2f}): by position, since nothing else tells them where to look. On periods it never "
       "saw, layer 1's best induction score is {l1_other:.2f} and the second copy costs {loss_other:.1f} nats, "
       "more than the first ({first_other:.1f})",
       words={"layer 1's best induction score is {l1_other:.2f}": Q("l1_other") < induction.FORMED,
              "more than the first": Q("loss_other") > Q("first_other")},
       seeded=False, scope=THIS_RUN, models=(), setup=("On periods it never saw",),
       note="one run of the shipped recipe with the period fixed at 8, measured once (pitfalls.json)")
def _fixed(seed):
    f = pitfalls.read()["fixed-period"]
    return {"period": pitfalls.FIXED_PERIOD, "steps": f["steps_trained"],
            "l1": f["trained_period"]["induction_layer1"], "l0": f["trained_period"]["induction_layer0"],
            "l1_other": f["varying"]["induction_layer1"], "loss_other": f["varying"]["second_copy_loss"],
            "first_other": f["varying"]["first_copy_loss"]}


@claim("induction.pitfall-start-at-bos", "induction",
       "Trained with every repeat right after `<BOS>` and no filler, {n_short:.0f} of {n:.0f} runs ({shortcut_seeds}) "
       "copy the second copy ({short_acc_lo:.1%} to {short_acc_hi:.1%} of it) with no induction head: layer 1's best "
       "induction score is {short_ind:.2f} at most. Put the repeat after filler and those runs copy only "
       "{short_filler_hi:.0%} of it at the most, where the runs with the head keep {head_filler_lo:.0%} at the least: "
       "where the copy begins was their cue, and filler takes it away",
       words={"with no induction head: layer 1's best induction score is {short_ind:.2f} at most":
              (Q("short_ind") < induction.FORMED, Q("n_short") >= 1),
              "copy only {short_filler_hi:.0%} of it at the most, where the runs with the head keep "
              "{head_filler_lo:.0%} at the least": Q("short_filler_hi") < Q("head_filler_lo")},
       seeded=False, scope=THIS_RUN, models=(), setup=("Trained with every repeat right after `<BOS>` and no filler",),
       note="the recipe without filler trained on ten seeds, measured once (pitfalls.json): the runs that copy "
            "without an induction head copy less after filler than every run with one")
def _start_at_bos(seed):
    runs = pitfalls.shortcut_runs()
    short = [r for r in runs if r["varying"]["induction_layer1"] < induction.FORMED]
    head = [r for r in runs if r["varying"]["induction_layer1"] >= induction.FORMED]
    if not short:
        raise Absent("every run of the recipe without filler formed an induction head")
    return {"n": len(runs), "n_short": len(short), "shortcut_seeds": "seeds " + listed([r["seed"] for r in short]),
            "short_acc_lo": min(r["varying"]["accuracy"] for r in short),
            "short_acc_hi": max(r["varying"]["accuracy"] for r in short),
            "short_ind": max(r["varying"]["induction_layer1"] for r in short),
            "short_filler_hi": max(r["after_filler"]["accuracy"] for r in short),
            "head_filler_lo": min(r["after_filler"]["accuracy"] for r in head) if head else 0.0}


# ----------------------------------------------------------------------------- the same circuit in SmolLM2
# Facts about one pretrained model's fixed weights (scoped as MiniLM's claims are: "this run", no trained
# model named), measured once on repeated random tokens by `python -m lib.chapters.part1.induction.real`
# (100 ablations of random heads take minutes) and read from the file it writes.
def _head_names(heads) -> str:
    return listed([f"L{layer}H{h}" for layer, h in heads])


@claim("induction.smollm2-heads", "induction",
       "On {n_seq:.0f} sequences of {period:.0f} random tokens repeated, {k:.0f} of SmolLM2's {n_heads:.0f} heads "
       "({quant}) have an induction score of {formed:.1f} or more: {names}, in layers {first:.0f} to {last:.0f}, "
       "scoring {ind_lo:.2f} to {ind_hi:.2f}. Their previous-token scores are at most {their_prev:.2f}; the heads with "
       "the highest previous-token scores are {prev_names} ({prev_lo:.2f} to {prev_hi:.2f}), and {n_prev_before:.0f} "
       "heads in layers before {first:.0f} have a previous-token score of {formed_previous:.1f} or more",
       words={"have an induction score of {formed:.1f} or more": Q("k") >= 1,
              "in layers {first:.0f} to {last:.0f}": Q("first") >= 1,
              "heads in layers before {first:.0f} have a previous-token score of {formed_previous:.1f} or more":
              Q("n_prev_before") >= 1,
              "Their previous-token scores are at most {their_prev:.2f}": Q("their_prev") < induction.FORMED_PREVIOUS},
       seeded=False, scope=THIS_RUN, models=(),
       note="SmolLM2 has induction heads (score >= 0.5 on repeated random tokens), none in layer 0, and previous-token "
            "heads in earlier layers (real.py, measured once: data/runs/induction/smollm2.json)")
def _smollm2_heads(seed):
    f = real.read()
    prev, ind = np.array(f["previous"]), np.array(f["induction"])
    heads = [tuple(hd) for hd in f["heads"]]
    best_prev = sorted(((layer, h) for layer in range(prev.shape[0]) for h in range(prev.shape[1])),
                       key=lambda hd: -prev[hd])[:3]
    first = min(layer for layer, _ in heads)
    return {"n_seq": f["recipe"]["sequences"], "period": f["recipe"]["period"], "k": len(heads), "n_heads": prev.size,
            "formed": induction.FORMED, "names": _head_names(heads), "first": first,
            "last": max(layer for layer, _ in heads), "ind_lo": min(ind[hd] for hd in heads),
            "ind_hi": max(ind[hd] for hd in heads), "their_prev": max(prev[hd] for hd in heads),
            "prev_names": _head_names(best_prev), "prev_lo": min(prev[hd] for hd in best_prev),
            "prev_hi": max(prev[hd] for hd in best_prev), "formed_previous": induction.FORMED_PREVIOUS,
            "n_prev_before": sum(1 for hd in f["previous_heads"] if hd[0] < first),
            "quant": smollm2.quantisation(short=True)}


@claim("induction.smollm2-ablation", "induction",
       "Intact, SmolLM2 ({quant}) predicts {clean:.0f}% of the second copy's {n:.0f} predictable tokens (95% "
       "interval {clean_lo:.0f}% to {clean_hi:.0f}%; loss {clean_loss:.2f} nats). With its {k:.0f} induction heads "
       "resample-ablated, {ablated:.0f}% ({ablated_lo:.0f}% to {ablated_hi:.0f}%; loss {ablated_loss:.2f}), less "
       "than half as many, interval against interval. With {k:.0f} other heads drawn at random resample-ablated "
       "instead, {rand_lo:.0f}% to {rand_hi:.0f}% (median {rand_median:.0f}%) over {draws:.0f} draws; {as_costly:.0f} "
       "of them, 5 in 100 or fewer, cost the copy as much as the induction heads, and {with_previous:.0f} of those, "
       "all of them, took a previous-token head with them ({costly_previous}). {previous_head}, the strongest "
       "previous-token head before layer {first:.0f}, resample-ablated alone, leaves {previous_alone:.0f}% (loss "
       "{previous_loss:.2f}), less than half too",
       words={"less than half as many, interval against interval": Q("ablated_hi") < Q("clean_lo") / 2,
              "5 in 100 or fewer, cost the copy as much as the induction heads": Q("as_costly") <= 0.05 * Q("draws"),
              "all of them": Q("with_previous").eq(Q("as_costly")),
              "less than half too": Q("previous_alone") < Q("clean") / 2},
       seeded=False, scope=THIS_RUN, models=(),
       note="ablating SmolLM2's induction heads halves its copy at least; at most 5 of 100 random sets of as many other "
            "heads cost as much, each holding a previous-token head; the strongest previous-token head alone halves it "
            "too (real.py, measured once: data/runs/induction/smollm2.json)")
def _smollm2_ablation(seed):
    f = real.read()
    rand = [r["accuracy"] for r in f["random"]]
    previous = {tuple(hd) for hd in f["previous_heads"]}
    costly = [r for r in f["random"] if r["accuracy"] <= f["ablated"]["accuracy"]]
    taken = sorted({tuple(hd) for r in costly for hd in r["heads"] if tuple(hd) in previous})
    n = f["clean"]["n"]
    (clean_lo, ablated_lo), (clean_hi, ablated_hi) = wilson_interval(
        [round(f["clean"]["accuracy"] * n), round(f["ablated"]["accuracy"] * n)], [n, n])
    return {"clean": 100 * f["clean"]["accuracy"], "n": f["clean"]["n"], "clean_loss": f["clean"]["loss"],
            "clean_lo": 100 * clean_lo, "clean_hi": 100 * clean_hi,
            "ablated_lo": 100 * ablated_lo, "ablated_hi": 100 * ablated_hi,
            "k": len(f["heads"]), "ablated": 100 * f["ablated"]["accuracy"], "ablated_loss": f["ablated"]["loss"],
            "rand_lo": 100 * min(rand), "rand_hi": 100 * max(rand), "rand_median": 100 * float(np.median(rand)),
            "draws": len(rand), "as_costly": len(costly),
            "with_previous": sum(any(tuple(hd) in previous for hd in r["heads"]) for r in costly),
            "costly_previous": _head_names(taken), "first": min(hd[0] for hd in f["heads"]),
            "previous_head": _head_names([f["previous_head"]]),
            "previous_alone": 100 * f["previous_ablated"]["accuracy"], "previous_loss": f["previous_ablated"]["loss"],
            "quant": smollm2.quantisation(short=True)}

