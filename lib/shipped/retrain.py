"""Retraining a shipped model from its preset: train, measure, save weights and metadata."""
from __future__ import annotations

import dataclasses
import platform
from pathlib import Path

import torch

from lib.content.corpora import get_corpus
from lib.shipped.presets import get_preset
from lib.model.store import LoadedModel, load, models_dir, save_model
from lib.model.train import train
from lib.model.vocab import Vocabulary

FINAL_LOSS_WINDOW = 50  # the final loss is the mean of the last steps, not one noisy batch


def train_preset(name: str, seed: int | None = None, out: Path | None = None, progress: bool = True) -> dict:
    from lib.shipped.behaviour import measure

    preset = get_preset(name)
    tcfg = preset.train if seed is None else dataclasses.replace(preset.train, seed=int(seed))
    corpus = get_corpus(preset.corpus, tcfg.corpus_options)
    result = train(preset.model, tcfg, corpus, progress=progress)
    vocab = Vocabulary(corpus.tokens)
    folder = Path(out) if out is not None else models_dir() / name
    lm = LoadedModel(name, result.model, vocab, {})
    meta = {
        "name": name,
        "description": preset.description,
        "corpus": preset.corpus,
        "train": tcfg.to_dict(),
        "final_loss": sum(result.losses[-FINAL_LOSS_WINDOW:]) / min(FINAL_LOSS_WINDOW, len(result.losses)),
        "loss_history": [round(x, 5) for x in result.losses],
        "train_seconds": round(result.seconds, 2),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "behaviour": measure(name, lm),
    }
    meta = save_model(folder, result.model, vocab, meta)
    meta["folder"] = str(folder)
    # A later load() of this name must see the new weights, not a cached copy.
    from lib.model import store
    store._LOADED.clear()
    return meta
