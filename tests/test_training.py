import dataclasses
import json

import torch

from lib.behaviour import _targets_calling_game
from lib.config import TrainConfig
from lib.corpora import get_corpus
from lib.presets import get_preset
from lib.store import models_dir
from lib.train import train


def test_training_is_deterministic_and_calls_back_every_step():
    preset = get_preset("calling-game")
    tcfg = dataclasses.replace(preset.train, steps=15, batch_size=8)
    corpus = get_corpus("calling-game")
    seen = []
    a = train(preset.model, tcfg, corpus, callback=lambda info: seen.append(info.step), progress=False)
    b = train(preset.model, tcfg, corpus, progress=False)
    assert seen == list(range(15)) and len(a.losses) == 15
    assert a.losses == b.losses
    for (name, p), q in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(p, q), name
    c = train(preset.model, dataclasses.replace(tcfg, seed=1), corpus, progress=False)
    assert c.losses != a.losses
    assert a.losses[-1] < a.losses[0]


def test_retraining_the_calling_game_from_scratch_meets_its_targets(run_cli, tmp_path):
    """The full recipe, as a user runs it: `python -m lib train calling-game --out DIR`."""
    r = run_cli("train", "calling-game", "--out", str(tmp_path / "cg"), "--quiet", check=True)
    assert "trained calling-game" in r.stdout
    meta = json.loads((tmp_path / "cg" / "meta.json").read_text())
    failures = [line for ok, line in _targets_calling_game(meta["behaviour"]) if not ok]
    assert not failures, failures


def test_retraining_the_zero_layer_model_reproduces_the_shipped_weights(run_cli, tmp_path):
    """A small recipe, run in full: same seed, same machine, same bytes; and it learns the bigrams."""
    run_cli("train", "zero-layer", "--out", str(tmp_path / "z"), "--quiet", check=True)
    meta = json.loads((tmp_path / "z" / "meta.json").read_text())
    shipped = json.loads((models_dir() / "zero-layer" / "meta.json").read_text())
    assert meta["behaviour"]["bigram"]["max_gap"] < 0.05
    assert meta["sha256"] == shipped["sha256"], "retraining should reproduce the shipped weights bit for bit"
