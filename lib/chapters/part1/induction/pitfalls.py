"""The ways the induction recipe fails, each trained and measured: the figures the chapter states.

- a fixed period (every segment 8 letters long): a token's earlier occurrence then sits a fixed distance
  back, and layer 0 copies by position; no layer-1 head does prefix matching;
- the default initialisation (std 0.02), trained for 1,700 steps without stopping at the floor: how long
  the circuit takes to form from small weights;
- every repeat right after `<BOS>`, no filler before it (the course's earlier recipe): the second copy then
  begins at a place the positions give away, and some runs copy it without an induction head. Trained on
  `SHORTCUT_SEEDS`, each measured on repeats right after `<BOS>` and on repeats after random filler.

Training both takes a minute or more, too long for the book's build, so `python -m
lib.chapters.part1.induction.pitfalls` trains them and writes their figures, with the recipes that made
them, to `data/runs/induction/pitfalls.json`; the chapter's claims read that file, and a test checks
that the recipes in it are still the ones this module derives from the shipped preset.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np

from lib.analysis import induction
from lib.content.corpora import get_corpus, repeats
from lib.data import data_dir
from lib.errors import require
from lib.model.train import train
from lib.shipped.presets import get_preset

FIXED_PERIOD = 8
SMALL_INIT_STD = 0.02
SMALL_INIT_STEPS = 1700
SHORTCUT_SEEDS = tuple(range(10))   # the runs of the recipe without filler
# The sequences the pitfall runs are measured on.
SEQUENCES_SEED = 0


def path():
    return data_dir() / "runs" / "induction" / "pitfalls.json"


def recipes() -> dict[str, tuple]:
    """Each pitfall's (model config, training config): the shipped recipe with one thing changed (the
    context as long as the changed corpus's longest sequence)."""
    p = get_preset("induction")

    def with_corpus(options: dict, **train):
        n_ctx = get_corpus("repeats", options).max_len
        return (dataclasses.replace(p.model, n_ctx=n_ctx),
                dataclasses.replace(p.train, corpus_options=options, checkpoints=0, **train))
    fixed = (p.model, dataclasses.replace(p.train, checkpoints=0, corpus_options={
        "min_period": FIXED_PERIOD, "max_period": FIXED_PERIOD, "max_filler": 0}))
    small = (dataclasses.replace(p.model, init_std=SMALL_INIT_STD),
             dataclasses.replace(p.train, steps=SMALL_INIT_STEPS, stop_below=None, checkpoints=0))
    out = {"fixed-period": fixed, "small-init": small}
    for seed in SHORTCUT_SEEDS:
        out[f"start-at-bos-{seed}"] = with_corpus({"max_filler": 0}, seed=seed)
    return out


def _figures(model, periods, max_filler: int = 0) -> dict:
    batches = induction.sequences(SEQUENCES_SEED, periods=periods, max_filler=max_filler)
    s = induction.pattern_scores(model, batches)
    loss = induction.in_context_loss(model, batches)
    return {"previous_best": float(s["previous"][0].max()), "duplicate_best": float(s["duplicate"][0].max()),
            "induction_layer0": float(s["induction"][0].max()), "induction_layer1": float(s["induction"][1].max()),
            "accuracy": induction.copy_accuracy(model, batches), **loss}


def _with_filler(model, cfg) -> dict:
    """A model trained on repeats right after `<BOS>`, measured on repeats after 1 to 12 letters of filler,
    within the context it was trained on (each period's filler drawn from what still fits; the longest
    periods, which leave no room, left out)."""
    room = cfg.n_ctx - 1
    rng = np.random.default_rng(SEQUENCES_SEED)
    ids = {t: i for i, t in enumerate(repeats.TOKENS)}
    batches = []
    for period in range(repeats.MIN_PERIOD, repeats.MAX_PERIOD + 1):
        most = min(repeats.MAX_FILLER, room - 2 * period)
        for _ in range(induction.PER_PERIOD // repeats.GROUP if most >= 1 else 0):
            batches.append(repeats.repeated_batch(rng, repeats.GROUP, period, ids, int(rng.integers(1, most + 1))))
    s = induction.pattern_scores(model, batches)
    return {"accuracy": induction.copy_accuracy(model, batches), **induction.in_context_loss(model, batches),
            "induction_layer1": float(s["induction"][1].max()), "periods": sorted({b.period for b in batches})}


def measure_all() -> dict:
    out = {}
    for name, (mcfg, tcfg) in recipes().items():
        corpus = get_corpus("repeats", tcfg.corpus_options)
        r = train(mcfg, tcfg, corpus, progress=False)
        floor = get_preset("induction").train.stop_below
        below = [step for step, f in r.monitored if f["second_copy_loss"] < floor]
        entry = {"model": mcfg.to_dict(), "train": tcfg.to_dict(), "steps_trained": len(r.losses),
                 "seconds": round(r.seconds, 1),
                 # the first step at which the second copy's loss (the trainer's held-out sequences) was below
                 # the shipped recipe's floor, and that loss every `monitor_every` steps
                 "steps_to_floor": below[0] if below else None,
                 "second_copy_loss": [round(f["second_copy_loss"], 4) for _, f in r.monitored],
                 "varying": _figures(r.model, None, tcfg.corpus_options.get("max_filler", repeats.MAX_FILLER))}
        if name == "fixed-period":
            entry["trained_period"] = _figures(r.model, [FIXED_PERIOD])
        if name.startswith("start-at-bos"):
            entry["after_filler"] = _with_filler(r.model, mcfg)
        out[name] = entry
    return out


def shortcut_runs() -> list[dict]:
    """The runs trained with every repeat right after `<BOS>`, in the order of their seeds."""
    f = read()
    return [f[f"start-at-bos-{seed}"] | {"seed": seed} for seed in SHORTCUT_SEEDS]


def read() -> dict:
    """The stored figures, checked against the recipes this module derives now."""
    f = path()
    require(f.is_file(), f"{f} is missing: run `python -m lib.chapters.part1.induction.pitfalls`")
    stored = json.loads(f.read_text(encoding="utf-8"))
    for name, (mcfg, tcfg) in recipes().items():
        require(stored.get(name, {}).get("model") == mcfg.to_dict() and stored[name].get("train") == tcfg.to_dict(),
                f"{f} was measured with another recipe for {name}: run `python -m lib.chapters.part1.induction.pitfalls`")
    return stored


if __name__ == "__main__":
    figures = measure_all()
    path().parent.mkdir(parents=True, exist_ok=True)
    path().write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=1))
