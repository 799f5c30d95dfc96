"""Saving and retraining never lose a model: saves are atomic, data/ is written only on request.

Every test works on copies in a temporary folder (COURSE_DATA), never on the shipped files.
"""
import os
from pathlib import Path

import pytest

from lib.shipped.presets import PRESETS
import torch

import lib
from lib.errors import CourseError
from lib.model import store
from lib.model.store import META, WEIGHTS, read_model, save_model
from lib.model.vocab import Vocabulary
from lib.shipped import retrain

from helpers import small_model

VOCAB = Vocabulary([f"w{i}" for i in range(11)])


def same_weights(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir())


def test_a_saved_model_reads_back_verified_and_leaves_nothing_beside_it(tmp_path):
    model = small_model(seed=1)
    meta = save_model(tmp_path / "m", model, VOCAB, {"note": "round trip"})
    back = read_model("m", tmp_path / "m")
    assert same_weights(back.model, model) and back.meta["sha256"] == meta["sha256"]
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [META, WEIGHTS]
    assert siblings(tmp_path / "m") == ["m"]
    assert not any(p.requires_grad for p in back.model.parameters())


def test_an_interrupted_save_leaves_the_old_model_whole(tmp_path, monkeypatch):
    old = small_model(seed=1)
    save_model(tmp_path / "m", old, VOCAB, {})

    def cut_short(tensors, path):      # half a file written, then Ctrl-C
        Path(path).write_bytes(b"\0" * 100)
        raise KeyboardInterrupt
    monkeypatch.setattr(store, "save_file", cut_short)
    with pytest.raises(KeyboardInterrupt):
        save_model(tmp_path / "m", small_model(seed=2), VOCAB, {})
    assert same_weights(read_model("m", tmp_path / "m").model, old)
    assert siblings(tmp_path / "m") == ["m"]


def test_a_save_interrupted_between_its_renames_puts_the_old_model_back(tmp_path, monkeypatch):
    old = small_model(seed=1)
    save_model(tmp_path / "m", old, VOCAB, {})
    renames = []

    def second_rename_fails(src, dst):
        renames.append((src, dst))
        if len(renames) == 2:
            raise KeyboardInterrupt
        os.replace(src, dst)
    monkeypatch.setattr(store.os, "rename", second_rename_fails)
    with pytest.raises(KeyboardInterrupt):
        save_model(tmp_path / "m", small_model(seed=2), VOCAB, {})
    monkeypatch.undo()
    assert len(renames) == 3, "aside, into place (interrupted), back"
    assert same_weights(read_model("m", tmp_path / "m").model, old)
    assert siblings(tmp_path / "m") == ["m"]


def test_saving_over_a_loaded_model_replaces_the_cached_copy(course_data):
    before = lib.load("zero-layer")
    retrained = small_model(seed=3)
    folder = store.models_dir() / "zero-layer"
    # Any model will do: the point is that load() sees the folder's new contents.
    save_model(folder, retrained, VOCAB, {})
    after = lib.load("zero-layer")
    assert after is not before and same_weights(after.model, retrained)


def test_retraining_goes_to_retrained_unless_the_shipped_model_is_asked_for(course_data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert retrain.output_folder("calling-game") == Path("retrained") / "calling-game"
    assert retrain.output_folder("calling-game", replace_shipped=True) == store.models_dir() / "calling-game"
    with pytest.raises(CourseError, match="not both"):
        retrain.output_folder("calling-game", out="elsewhere", replace_shipped=True)


def untrained(model_cfg, train_cfg, corpus, progress=True, **kwargs):
    """The training loop's result without its minute of work (tests/model/test_train.py runs the real one)."""
    from lib.model.train import TrainResult
    from lib.model.transformer import Transformer
    torch.manual_seed(train_cfg.seed)
    return TrainResult(Transformer(model_cfg), losses=[1.0], seconds=0.0)


def test_a_bare_train_leaves_the_shipped_weights_alone(course_data, tmp_path, monkeypatch, run_in_process):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(retrain, "train", untrained)
    shipped = (course_data / "models" / "zero-layer" / WEIGHTS).read_bytes()
    code, out, err = run_in_process("train", "zero-layer", "--quiet")
    assert code == 0, err
    assert "saved to retrained/zero-layer" in out
    read_model("zero-layer", tmp_path / "retrained" / "zero-layer")
    assert (course_data / "models" / "zero-layer" / WEIGHTS).read_bytes() == shipped


def test_replace_shipped_writes_over_the_shipped_model_atomically(course_data, tmp_path, monkeypatch,
                                                                  run_in_process):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(retrain, "train", untrained)
    shipped = (course_data / "models" / "zero-layer" / WEIGHTS).read_bytes()
    code, out, err = run_in_process("train", "zero-layer", "--quiet", "--replace-shipped")
    assert code == 0, err
    assert (course_data / "models" / "zero-layer" / WEIGHTS).read_bytes() != shipped
    read_model("zero-layer")
    assert sorted(os.listdir(course_data / "models")) == sorted(PRESETS)
    assert not (tmp_path / "retrained").exists()
