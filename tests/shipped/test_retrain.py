"""Retraining a shipped model from its recipe (lib.shipped.retrain): where the run goes (./retrained/NAME, a
folder given, or the shipped run of its seed, and only on request), refused before any training; and what a
run trained from scratch writes beside its weights."""
import json

import pytest

from tests.conftest import FRESH_TRAINING_SEED
from lib.errors import CourseError
from lib.model.store import models_dir, runs_dir
from lib.shipped.retrain import RETRAINED, output_folder


def test_a_run_goes_where_it_is_asked_to_and_the_shipped_ones_only_on_request(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert output_folder("zero-layer") == RETRAINED / "zero-layer"
    assert output_folder("zero-layer", tmp_path / "mine") == tmp_path / "mine"
    assert output_folder("zero-layer", replace_shipped=True).resolve() == (models_dir() / "zero-layer").resolve()
    assert output_folder("zero-layer", replace_shipped=True, seed=3).resolve() == (runs_dir() / "zero-layer" / "seed-3").resolve()
    with pytest.raises(CourseError, match="not both"):
        output_folder("zero-layer", tmp_path / "mine", replace_shipped=True)
    with pytest.raises(CourseError, match="inside the course's data folder"):
        output_folder("zero-layer", models_dir() / "zero-layer")
    with pytest.raises(CourseError, match="unknown model"):
        output_folder("gpt-5", replace_shipped=True)


def test_a_run_trained_from_scratch_records_its_recipe_and_its_figures(fresh_runs):
    meta = json.loads((fresh_runs["zero-layer"] / "meta.json").read_text())
    assert meta["name"] == "zero-layer" and meta["train"]["seed"] == FRESH_TRAINING_SEED
    assert meta["steps_trained"] == len(meta["loss_history"]) == meta["train"]["steps"]
    window = meta["loss_history"][-50:]
    assert meta["final_loss"] == pytest.approx(sum(window) / len(window), abs=1e-4)
    assert set(meta["behaviour"]) == {"bigram"} and meta["sha256"]
