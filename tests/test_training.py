import dataclasses
import json

import torch

from lib.behaviour import _targets_calling_game
from lib.config import TrainConfig
from lib.corpora import get_corpus
from lib.presets import get_preset
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
