"""Typed configurations (lib.model.config): a config survives its saved form; every size is checked by type as
well as by range (a damaged meta.json holds "64", 2.5 or true); unknown or missing keys are named."""
import json

import pytest

from lib.errors import CourseError
from lib.model.config import ModelConfig, TrainConfig
from lib.shipped.presets import PRESETS

SIZES = dict(vocab_size=28, n_ctx=48, d_model=64, n_heads=4, d_head=16, n_layers=2, d_mlp=256)


def test_every_shipped_recipe_survives_its_saved_form():
    for name, preset in PRESETS.items():
        assert ModelConfig.from_dict(json.loads(json.dumps(preset.model.to_dict()))) == preset.model, name
        assert TrainConfig.from_dict(json.loads(json.dumps(preset.train.to_dict()))) == preset.train, name
    assert not ModelConfig(**dict(SIZES, d_mlp=0)).has_mlp and ModelConfig(**SIZES).has_mlp


@pytest.mark.parametrize("change, says", [
    (dict(d_model="64"), "d_model must be a whole number of at least 1, got '64'"),
    (dict(vocab_size=0), "vocab_size must be a whole number of at least 1"),
    (dict(n_ctx=True), "n_ctx must be a whole number of at least 1, got True"),
    (dict(n_heads=2.5), "n_heads must be a whole number, 0 or more, got 2.5"),
    (dict(n_layers=-1), "n_layers must be a whole number, 0 or more"),
    (dict(act="tanh"), "act must be one of"),
    (dict(tied=1), "tied must be true or false, got 1"),
    (dict(init_std=float("nan")), "init_std must be a positive number"),
    (dict(init_std=0), "init_std must be a positive number"),
])
def test_a_bad_size_is_named_with_what_it_got(change, says):
    with pytest.raises(CourseError, match=says.replace("(", r"\(").replace(")", r"\)")):
        ModelConfig(**{**SIZES, **change})


def test_unknown_or_missing_keys_are_named():
    with pytest.raises(CourseError, match="unknown config key 'width'; the keys are vocab_size"):
        ModelConfig.from_dict({**SIZES, "width": 3})
    with pytest.raises(CourseError, match="the config lacks d_mlp; it must give vocab_size"):
        ModelConfig.from_dict({k: v for k, v in SIZES.items() if k != "d_mlp"})
    with pytest.raises(CourseError, match="a model config is a mapping of sizes, got list"):
        ModelConfig.from_dict([1, 2])


@pytest.mark.parametrize("change, says", [(dict(steps=0), "steps must be at least 1"),
                                          (dict(checkpoints=1), "checkpoints must be 0 .none. or at least 2"),
                                          (dict(batch_size=0), "batch_size must be at least 1"),
                                          (dict(lr=0), "lr must be positive"),
                                          (dict(monitor_every=0), "monitor_every must be at least 1"),
                                          (dict(floor_check_every=0), "floor_check_every must be at least 1"),
                                          (dict(floor_max_extra=-1), "floor_max_extra must be at least 0")])
def test_a_bad_recipe_is_named(change, says):
    with pytest.raises(CourseError, match=says):
        TrainConfig(**change)
