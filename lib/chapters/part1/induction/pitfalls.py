"""The two ways the induction recipe fails, each trained once and measured: the figures the chapter states.

- a fixed period (every segment 8 letters long): a token's earlier occurrence then sits a fixed distance
  back, and layer 0 copies by position; no layer-1 head does prefix matching;
- the default initialisation (std 0.02), trained for 1,700 steps without stopping at the floor: how long
  the circuit takes to form from small weights.

Training both takes a minute or more, too long for the book's build, so `python -m
lib.chapters.part1.induction.pitfalls` trains them and writes their figures, with the recipes that made
them, to `data/runs/induction/pitfalls.json`; the chapter's claims read that file, and a test checks
that the recipes in it are still the ones this module derives from the shipped preset.
"""
from __future__ import annotations

import dataclasses
import json

from lib.analysis import induction
from lib.content.corpora import get_corpus
from lib.data import data_dir
from lib.errors import require
from lib.model.train import train
from lib.shipped.presets import get_preset

FIXED_PERIOD = 8
SMALL_INIT_STD = 0.02
SMALL_INIT_STEPS = 1700
# The sequences the pitfall runs are measured on.
SEQUENCES_SEED = 0


def path():
    return data_dir() / "runs" / "induction" / "pitfalls.json"


def recipes() -> dict[str, tuple]:
    """Each pitfall's (model config, training config): the shipped recipe with one thing changed."""
    p = get_preset("induction")
    fixed = dataclasses.replace(p.train, corpus_options={"min_period": FIXED_PERIOD, "max_period": FIXED_PERIOD})
    small = dataclasses.replace(p.train, steps=SMALL_INIT_STEPS, stop_below=None)
    return {"fixed-period": (p.model, fixed),
            "small-init": (dataclasses.replace(p.model, init_std=SMALL_INIT_STD), small)}


def _figures(model, periods) -> dict:
    batches = induction.sequences(SEQUENCES_SEED, periods=periods)
    s = induction.pattern_scores(model, batches)
    loss = induction.in_context_loss(model, batches)
    return {"previous_best": float(s["previous"][0].max()), "induction_layer0": float(s["induction"][0].max()),
            "induction_layer1": float(s["induction"][1].max()), **loss}


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
                 "varying": _figures(r.model, None)}
        if name == "fixed-period":
            entry["trained_period"] = _figures(r.model, [FIXED_PERIOD])
        out[name] = entry
    return out


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
