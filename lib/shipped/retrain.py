"""Retraining a shipped model from its preset: train, measure, save weights and metadata.

Everything a run could be refused for (the name, the seed, the folder) is checked before the
first step, not after a minute of training. The new model goes to `./retrained/NAME` unless a
folder is given; the shipped one in `data/models/NAME` is replaced only on request.
"""
from __future__ import annotations

import dataclasses
import platform
from pathlib import Path

import torch

from lib.content.corpora import get_corpus
from lib.shipped.presets import get_preset
from lib.errors import require
from lib.model.readout import check_seed
from lib.model.store import RUN_PREFIX, LoadedModel, check_save_folder, models_dir, runs_dir, save_model
from lib.model.train import train
from lib.model.vocab import Vocabulary
from lib.shipped.behaviour import BEHAVIOUR, measure

FINAL_LOSS_WINDOW = 50  # the final loss is the mean of the last steps, not one noisy batch


RETRAINED = Path("retrained")      # relative to the working directory, as a reader expects


def output_folder(name: str, out=None, replace_shipped: bool = False, seed: int | None = None) -> Path:
    """Where a retrained model goes: `out`, else ./retrained/NAME; a shipped folder only when
    `replace_shipped` (and then `out` must not be given): the pages' run (data/models/NAME) for the
    preset's own seed, the shipped run of that seed (data/runs/NAME/seed-S) for any other."""
    if replace_shipped:
        require(out is None, "give --out DIR or --replace-shipped, not both")
        preset_seed = get_preset(name).train.seed
        folder = (models_dir() / name if seed is None or seed == preset_seed
                  else runs_dir() / name / f"{RUN_PREFIX}{seed}")
        return check_save_folder(folder, replace_shipped=True)
    return check_save_folder(RETRAINED / name if out is None else out)


def train_preset(name: str, seed: int | None = None, out: Path | str | None = None, progress: bool = True,
                 replace_shipped: bool = False, checkpoints: bool = True) -> dict:
    """Train `name` from its preset (with another training seed), measure it and save it. Without
    `checkpoints`, the snapshots over training the recipe keeps are not saved (the run is the same: a
    snapshot changes nothing in training); the panel keeps them for the pages' run only."""
    preset = get_preset(name)
    tcfg = preset.train if seed is None else dataclasses.replace(preset.train, seed=check_seed(seed))
    folder = output_folder(name, out, replace_shipped, tcfg.seed)
    corpus = get_corpus(preset.corpus, tcfg.corpus_options)
    vocab = Vocabulary(corpus.tokens)
    behaviour = BEHAVIOUR.get(name)
    gap = None
    if tcfg.floor_gap is not None:
        gap = lambda model: behaviour.gap_to_floor(LoadedModel(name, model, vocab, {}))  # noqa: E731
    result = train(preset.model, tcfg, corpus, progress=progress, gap_to_floor=gap)
    lm = LoadedModel(name, result.model, vocab, {})
    meta = {
        "name": name,
        "description": preset.description,
        "corpus": preset.corpus,
        "train": tcfg.to_dict(),
        "final_loss": sum(result.losses[-FINAL_LOSS_WINDOW:]) / min(FINAL_LOSS_WINDOW, len(result.losses)),
        "loss_history": [round(x, 5) for x in result.losses],
        "train_seconds": round(result.seconds, 2),
        "steps_trained": len(result.losses),
        **({"floor_checks": [[step, round(g, 5)] for step, g in result.floor_checks],
            "reached_floor": result.reached_floor} if result.floor_checks else {}),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "behaviour": measure(name, lm),
    }
    if result.monitored:
        # The corpus's held-out figures over training (the loss curves a chapter draws), and whether
        # training reached its floor (`TrainConfig.stop_below`) before its last step.
        meta["monitored"] = {"steps": [s for s, _ in result.monitored],
                             **{k: [round(f[k], 5) for _, f in result.monitored] for k in result.monitored[0][1]}}
        meta["reached_floor"] = result.reached_floor
    meta = save_model(folder, result.model, vocab, meta, result.checkpoints if checkpoints else None)
    meta["folder"] = str(folder)
    return meta
