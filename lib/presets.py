"""The recipes of the shipped models: a model config, a training config and a corpus each.

`python -m lib train NAME` retrains from exactly these, so the weights in `data/` are the
output of this file and nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass

from .config import ModelConfig, TrainConfig
from .corpora import calling_game, hand_wired
from .errors import CourseError


@dataclass(frozen=True)
class Preset:
    name: str
    corpus: str
    model: ModelConfig
    train: TrainConfig
    description: str


PRESETS: dict[str, Preset] = {
    "calling-game": Preset(
        name="calling-game",
        corpus="calling-game",
        model=ModelConfig(vocab_size=len(calling_game.TOKENS), n_ctx=48, d_model=64, n_heads=4,
                          d_head=16, n_layers=2, d_mlp=128, act="relu", layer_norm=True, tied=True),
        train=TrainConfig(seed=0, steps=1500, batch_size=32, lr=3e-3, weight_decay=0.01, warmup_steps=50),
        description="2 layers, 4 heads, d_model 64, tied; trained on rounds of the calling game",
    ),
    "hand-wired": Preset(
        name="hand-wired",
        corpus="hand-wired",
        model=ModelConfig(vocab_size=len(hand_wired.TOKENS), n_ctx=16, d_model=32, n_heads=2,
                          d_head=16, n_layers=2, d_mlp=128, act="relu", layer_norm=True, tied=True),
        train=TrainConfig(seed=0, steps=1500, batch_size=32, lr=3e-3, weight_decay=0.01, warmup_steps=50),
        description="2 layers, 2 heads, d_model 32, tied; trained on sentences made from a designed table",
    ),
}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise CourseError(f"unknown model {name!r}; shipped models: {', '.join(PRESETS)}") from None
