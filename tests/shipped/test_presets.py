"""The recipes of the shipped models (lib.shipped.presets): every shipped run was trained from its model's recipe
(the seed aside), on its corpus's vocabulary, so `python -m lib train NAME` makes it again; an unknown name
is one line naming the shipped ones."""
import dataclasses
import json
from pathlib import Path

import pytest

from lib.content.corpora import get_corpus
from lib.errors import CourseError
from lib.model.config import ModelConfig, TrainConfig
from lib.model.store import META, shipped_runs
from lib.shipped.presets import PRESETS, get_preset

# Fields of a recipe that trains to its corpus's floor: past its schedule, training goes on until the model
# is within `floor_gap` of the floor. A run trained before the recipe said so, that ended within the floor
# anyway, is the run the recipe makes (it stops where that run stopped).
FLOOR_FIELDS = {"floor_gap", "floor_check_every", "floor_max_extra"}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_shipped_run_is_its_recipes(name):
    preset = get_preset(name)
    assert preset.name == name and preset.description
    vocab = list(get_corpus(preset.corpus, preset.train.corpus_options).tokens)
    for folder in shipped_runs(name):
        meta = json.loads((Path(folder) / META).read_text())
        assert ModelConfig.from_dict(meta["config"]) == preset.model, folder
        assert meta["vocab"] == vocab and meta["corpus"] == preset.corpus, folder
        recorded = TrainConfig.from_dict(meta["train"])
        differ = {k for k, v in recorded.to_dict().items() if v != getattr(preset.train, k)} - {"seed"}
        if differ:
            assert differ <= FLOOR_FIELDS and preset.train.floor_gap is not None, (folder, differ)
            assert meta["behaviour"]["corpus_fit"]["gap"] <= preset.train.floor_gap, (folder, "ended above the floor")
        assert dataclasses.replace(recorded, **{k: getattr(preset.train, k) for k in differ | {"seed"}}) == preset.train


def test_an_unknown_model_names_the_shipped_ones():
    with pytest.raises(CourseError, match=r"unknown model 'gpt-5' \(no recipe to train it\); shipped models: calling-game, hand-wired"):
        get_preset("gpt-5")
