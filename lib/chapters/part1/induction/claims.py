"""The claims of the chapter `chapters/part1/induction.md`, each with its measurement.

The lessons about the recipe are measured on every training run of the `induction` model
(`over_runs.run_folders`: the run in use, then the other shipped runs), all of them inside one
measurement (`covers_runs`), each on repeated random segments drawn with the claim's seed: the
statements count runs ("on 5 of the 6 runs"), which a claim measured run by run could not say. Every statement gives the range
over all runs (and seeds: `{x_lo.lo}` is the lowest over both, `{x_hi.hi}` the highest). The heads are
found by their role on each run, never by their index.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from lib.analysis import induction
from lib.analysis.over_runs import run_folders
from lib.claims.registry import EVERY_RUN, THIS_RUN, listed
from lib.claims.registry import claim as register
from lib.model.store import load_checkpoints, read_model
from lib.chapters.part1.induction import pitfalls, real
from lib.shipped.presets import get_preset

MODEL = "induction"
# Lessons about the recipe, each measured once over every run (the measurement reads them all), with torch
# on one thread (the model is tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True, scope=EVERY_RUN, models=(MODEL,), covers_runs=True)


def _runs() -> list[tuple[str, Path]]:
    """Every run of the model, as (label, folder): the run in use first."""
    return list(run_folders(MODEL).items())


@functools.lru_cache(maxsize=None)
def _model(folder):
    return read_model(MODEL, folder)


# Sequences of each period a claim measures a run on (9 periods: 72 sequences).
PER_PERIOD = 8


@functools.lru_cache(maxsize=None)
def account(folder, seed: int) -> dict:
    """One run's circuit measured on the sequences of `seed`."""
    lm = _model(folder)
    c = induction.circuit(lm.model, induction.sequences(seed, per_period=PER_PERIOD))
    c["steps"] = lm.meta["steps_trained"]
    return c


@functools.lru_cache(maxsize=None)
def formed_at(folder) -> int | None:
    """The first checkpoint at which layer 1's best induction score passes `FORMED` (None: never),
    measured on the sequences of seed 0: a fact of the run's checkpoints, not of a sample."""
    lm = _model(folder)
    batches = induction.sequences(0, per_period=PER_PERIOD)
    for step, m in load_checkpoints(lm, folder):
        if induction.roles(induction.pattern_scores(m, batches)).induction_score >= induction.FORMED:
            return step
    return None


def _over_runs(seed: int) -> list[dict]:
    return [account(folder, seed) for _, folder in _runs()]


def _formed(seed: int) -> list[dict]:
    """The runs on which both heads formed: the circuit the route and the ablations take apart."""
    return [r for r in _over_runs(seed) if r["roles"].formed]


def _span(values, name):
    return {f"{name}_lo": float(min(values)), f"{name}_hi": float(max(values))}


@claim("induction.heads-form", "induction",
       "On {n_formed} of the {n_runs} runs, layer 0 has a previous-token head (score {prev_lo.lo:.2f} to "
       "{prev_hi.hi:.2f}, where attention spread evenly would give {uniform:.2f}) and layer 1 an induction head "
       "(score {ind_lo.lo:.2f} to {ind_hi.hi:.2f}; {n_ind_lo.lo:.0f} to {n_ind_hi.hi:.0f} of layer 1's "
       "{n_heads:.0f} heads score above {formed:.1f}). On the other{odd_runs}, no head of layer 1 passes "
       "{odd_ind.hi:.2f}, yet the second copy costs {odd_loss.hi:.2f} nats: it found another way",
       holds=lambda x: x["n_formed"] > x["n_runs"] / 2,
       note="previous-token score of layer 0's best head >= 0.3 and induction score of layer 1's best >= 0.5, "
            "on most runs; the runs without them listed")
def _heads_form(seed):
    every = _over_runs(seed)
    odd = [(label, r) for (label, _), r in zip(_runs(), every) if not r["roles"].formed]
    runs = [r for r in every if r["roles"].formed]
    batches = induction.sequences(seed)
    # what attention spread evenly over the positions so far gives to the previous token
    uniform = np.mean([1 / (q + 1) for b in batches for q in range(1, b.ids.shape[1])])
    return {"n_runs": len(every), "n_formed": len(runs), "uniform": float(uniform),
            "odd_runs": "".join(f" ({label})" for label, _ in odd) or "s (none)",
            "odd_ind": max([r["roles"].induction_score for _, r in odd] or [0.0]),
            "odd_loss": max([r["clean"]["loss"] for _, r in odd] or [0.0]),
            **_span([r["roles"].previous_score for r in runs], "prev"),
            **_span([r["roles"].induction_score for r in runs], "ind"),
            **_span([int((r["scores"]["induction"][1] > induction.FORMED).sum()) for r in runs], "n_ind"),
            "n_heads": runs[0]["scores"]["induction"].shape[1], "formed": induction.FORMED}


@claim("induction.forms-at", "induction",
       "Where it forms, the induction head does so between step {step_lo:.0f} and step {step_hi:.0f} (its score "
       "passing {formed:.1f}, on {n_formed:.0f} of {n_runs:.0f} runs); training reaches its floor {stop_lo:.0f} "
       "to {stop_hi:.0f} steps in",
       holds=lambda x: x["n_formed"] > x["n_runs"] / 2, seeded=False,
       note="the first checkpoint at which layer 1's best induction score passes 0.5, on each run")
def _forms_at(seed):
    folders = [f for _, f in _runs()]
    steps = [s for s in (formed_at(f) for f in folders) if s is not None]
    return {"n_runs": len(folders), "n_formed": len(steps), "formed": induction.FORMED,
            **_span(steps or [0], "step"), **_span([_model(f).meta["steps_trained"] for f in folders], "stop")}


@claim("induction.route", "induction",
       "The previous-token head reaches the induction head through its keys on {k_runs:.0f} of the {n_runs:.0f} runs "
       "where both formed: "
       "path patching only that path raises the loss on the second copy from {clean_lo.lo:.2f}-{clean_hi.hi:.2f} "
       "nats to {k_lo.lo:.2f}-{k_hi.hi:.2f}, the path through its queries to {q_lo.lo:.2f}-{q_hi.hi:.2f}. "
       "The pair's K-composition score is {kc_lo.lo:.2f} to {kc_hi.hi:.2f}, its Q-composition "
       "{qc_lo.lo:.2f} to {qc_hi.hi:.2f}; random matrices of the same shapes score {baseline:.2f}",
       holds=lambda x: x["k_runs"] + x["q_runs"] == x["n_runs"] and x["k_runs"] > x["n_runs"] / 2,
       note="path patching previous-token head -> induction head's keys (queries) -> logits, the route being the "
            "path that costs more; composition scores beside a Gaussian baseline")
def _route(seed):
    runs = _formed(seed)
    base = induction.composition_baseline(registry_cfg())
    return {"n_runs": len(runs), "k_runs": sum(r["route"] == "K" for r in runs),
            "q_runs": sum(r["route"] == "Q" for r in runs), "baseline": base["K"],
            **_span([r["clean"]["loss"] for r in runs], "clean"),
            **_span([r["paths"]["K"]["loss"] for r in runs], "k"),
            **_span([r["paths"]["Q"]["loss"] for r in runs], "q"),
            **_span([r["composition"]["K"] for r in runs], "kc"),
            **_span([r["composition"]["Q"] for r in runs], "qc")}


def registry_cfg():
    return _model(_runs()[0][1]).model.cfg


@claim("induction.ablation", "induction",
       "On the runs where both heads formed, resample-ablating the previous-token head raises the loss on the second copy from {clean_lo.lo:.2f}-"
       "{clean_hi.hi:.2f} nats to {prev_lo.lo:.2f}-{prev_hi.hi:.2f} and cuts the right letter's lead over the "
       "others from {diff_lo.lo:.1f}-{diff_hi.hi:.1f} to {pdiff_lo.lo:.1f}-{pdiff_hi.hi:.1f}; ablating the "
       "induction head raises it to {ind_lo.lo:.2f}-{ind_hi.hi:.2f} (lead {idiff_lo.lo:.1f}-{idiff_hi.hi:.1f})",
       holds=lambda x: x["prev_lo"] > x["clean_hi"] + 0.1 and x["ind_lo"] > x["clean_hi"] + 0.1,
       note="resample ablation (each head's write taken from another sequence of the same period), on every run")
def _ablation(seed):
    runs = _formed(seed)
    return {**_span([r["clean"]["loss"] for r in runs], "clean"),
            **_span([r["clean"]["logit_diff"] for r in runs], "diff"),
            **_span([r["ablate_previous"]["loss"] for r in runs], "prev"),
            **_span([r["ablate_previous"]["logit_diff"] for r in runs], "pdiff"),
            **_span([r["ablate_induction"]["loss"] for r in runs], "ind"),
            **_span([r["ablate_induction"]["logit_diff"] for r in runs], "idiff")}


# The phase change, measured alike on every run: the first step (of the trainer's held-out measurements,
# every 10 steps) at which the second copy's loss is below this many nats.
PHASE_LOSS = 1.0


def phase_step(steps: list[int], losses: list[float]) -> int | None:
    return next((s for s, x in zip(steps, losses) if x < PHASE_LOSS), None)


@claim("induction.pitfall-fixed-period", "induction",
       "Trained on one fixed period ({period:.0f} letters), the model reaches the floor in {steps:.0f} steps, "
       "and on that period its heads look one period minus one back (a layer-0 head scores {l0:.2f}, a "
       "layer-1 head {l1:.2f}): by position, since nothing else tells them where to look. On periods it never "
       "saw, layer 1's best induction score is {l1_other:.2f} and the second copy costs {loss_other:.1f} nats, "
       "more than the first ({first_other:.1f})",
       holds=lambda x: x["l1_other"] < induction.FORMED and x["loss_other"] > x["first_other"], seeded=False,
       scope="this run", models=(), covers_runs=False,
       note="one run of the shipped recipe with the period fixed at 8, measured once (pitfalls.json)")
def _fixed(seed):
    f = pitfalls.read()["fixed-period"]
    return {"period": pitfalls.FIXED_PERIOD, "steps": f["steps_trained"],
            "l1": f["trained_period"]["induction_layer1"], "l0": f["trained_period"]["induction_layer0"],
            "l1_other": f["varying"]["induction_layer1"], "loss_other": f["varying"]["second_copy_loss"],
            "first_other": f["varying"]["first_copy_loss"]}


@claim("induction.pitfall-small-init", "induction",
       "Initialised with std {std:.2f} instead of {shipped_std:.1f}, the second copy's loss first falls below "
       "{phase:.0f} nat at step {small_phase:.0f}, against steps {phase_lo:.0f} to {phase_hi:.0f} on the shipped "
       "runs; after {steps:.0f} steps it is still {loss:.2f} nats, above the floor of {floor:.2f}",
       holds=lambda x: x["small_phase"] is None or x["small_phase"] > 2 * x["phase_hi"], seeded=False,
       note="one run of the shipped recipe with init_std 0.02 for 1,700 steps (pitfalls.json), beside every shipped run")
def _small(seed):
    f = pitfalls.read()["small-init"]
    every = f["train"]["monitor_every"]
    small = phase_step([i * every for i in range(len(f["second_copy_loss"]))], f["second_copy_loss"])
    shipped = [phase_step(m["steps"], m["second_copy_loss"])
               for m in (_model(folder).meta["monitored"] for _, folder in _runs())]
    shipped = [s for s in shipped if s is not None]
    return {"std": pitfalls.SMALL_INIT_STD, "shipped_std": registry_cfg().init_std, "steps": f["steps_trained"],
            "phase": PHASE_LOSS, "small_phase": small, **_span(shipped, "phase"),
            "loss": f["varying"]["second_copy_loss"], "floor": get_preset(MODEL).train.stop_below}


# ----------------------------------------------------------------------------- the same circuit in SmolLM2
# Facts about one pretrained model's fixed weights (scoped as MiniLM's claims are: "this run", no trained
# model named), measured once on repeated random tokens by `python -m lib.chapters.part1.induction.real`
# (100 ablations of random heads take minutes) and read from the file it writes.
def _head_names(heads) -> str:
    return listed([f"L{layer}H{h}" for layer, h in heads])


@claim("induction.smollm2-heads", "induction",
       "On {n_seq:.0f} sequences of {period:.0f} random tokens repeated, {k:.0f} of SmolLM2's {n_heads:.0f} heads "
       "have an induction score of {formed:.1f} or more: {names}, in layers {first:.0f} to {last:.0f}, scoring "
       "{ind_lo:.2f} to {ind_hi:.2f}. Their previous-token scores are at most {their_prev:.2f}; the heads with the "
       "highest previous-token scores are {prev_names} ({prev_lo:.2f} to {prev_hi:.2f}), and {n_prev_before:.0f} "
       "heads in layers before {first:.0f} have a previous-token score of {formed_previous:.1f} or more",
       holds=lambda x: x["k"] >= 1 and x["first"] >= 1 and x["n_prev_before"] >= 1, seeded=False,
       scope=THIS_RUN, models=(), covers_runs=False,
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
            "n_prev_before": sum(1 for hd in f["previous_heads"] if hd[0] < first)}


@claim("induction.smollm2-ablation", "induction",
       "Intact, SmolLM2 predicts {clean:.0f}% of the second copy's {n:.0f} predictable tokens (loss {clean_loss:.2f} "
       "nats). With its {k:.0f} induction heads resample-ablated, {ablated:.0f}% (loss {ablated_loss:.2f}). With "
       "{k:.0f} other heads drawn at random resample-ablated instead, {rand_lo:.0f}% to {rand_hi:.0f}% (median "
       "{rand_median:.0f}%) over {draws:.0f} draws; {as_costly:.0f} of them cost the copy as much as the induction "
       "heads, and {with_previous:.0f} of those took a previous-token head with them ({costly_previous}). "
       "{previous_head}, the strongest previous-token head before layer {first:.0f}, resample-ablated alone, leaves "
       "{previous_alone:.0f}% (loss {previous_loss:.2f})",
       holds=lambda x: x["ablated"] < x["clean"] / 2 and x["with_previous"] == x["as_costly"]
                       and x["as_costly"] <= 0.05 * x["draws"] and x["previous_alone"] < x["clean"] / 2,
       seeded=False, scope=THIS_RUN, models=(), covers_runs=False,
       note="ablating SmolLM2's induction heads halves its copy at least; at most 5 of 100 random sets of as many other "
            "heads cost as much, each holding a previous-token head; the strongest previous-token head alone halves it "
            "too (real.py, measured once: data/runs/induction/smollm2.json)")
def _smollm2_ablation(seed):
    f = real.read()
    rand = [r["accuracy"] for r in f["random"]]
    previous = {tuple(hd) for hd in f["previous_heads"]}
    costly = [r for r in f["random"] if r["accuracy"] <= f["ablated"]["accuracy"]]
    taken = sorted({tuple(hd) for r in costly for hd in r["heads"] if tuple(hd) in previous})
    return {"clean": 100 * f["clean"]["accuracy"], "n": f["clean"]["n"], "clean_loss": f["clean"]["loss"],
            "k": len(f["heads"]), "ablated": 100 * f["ablated"]["accuracy"], "ablated_loss": f["ablated"]["loss"],
            "rand_lo": 100 * min(rand), "rand_hi": 100 * max(rand), "rand_median": 100 * float(np.median(rand)),
            "draws": len(rand), "as_costly": len(costly),
            "with_previous": sum(any(tuple(hd) in previous for hd in r["heads"]) for r in costly),
            "costly_previous": _head_names(taken), "first": min(hd[0] for hd in f["heads"]),
            "previous_head": _head_names([f["previous_head"]]),
            "previous_alone": 100 * f["previous_ablated"]["accuracy"], "previous_loss": f["previous_ablated"]["loss"]}
