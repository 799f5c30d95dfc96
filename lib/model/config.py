"""Typed configurations: the shape of a model and the recipe that trains it.

One `ModelConfig` fixes every tensor shape in the model; one `TrainConfig` fixes everything that
makes training reproducible (seed, steps, batch, learning rate). The presets for the shipped
models live in `lib.shipped.presets`, so that this module stays a pure description.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from lib.errors import require

ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int
    n_ctx: int
    d_model: int
    n_heads: int
    d_head: int
    n_layers: int
    d_mlp: int
    act: str = "relu"
    layer_norm: bool = True
    tied: bool = True
    # Learned position embeddings. Off for the zero-layer model, so that its prediction depends on
    # the last token alone (a bigram model), not on where that token sits.
    positions: bool = True
    # Standard deviation of the initial weights; small models train better with a small one.
    init_std: float = 0.02

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_ctx", "d_model"):
            require(getattr(self, name) >= 1, f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("n_heads", "d_head", "n_layers", "d_mlp"):
            require(getattr(self, name) >= 0, f"{name} must be 0 or more, got {getattr(self, name)}")
        require(self.act in ACTIVATIONS, f"act must be one of {ACTIVATIONS}, got {self.act!r}")

    @property
    def has_mlp(self) -> bool:
        return self.d_mlp > 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        return cls(**d)


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 0
    steps: int = 1000
    batch_size: int = 64
    lr: float = 3e-3
    weight_decay: float = 0.01
    warmup_steps: int = 50
    # Corpus-specific knobs (for example the calling game's error rate) travel here, so the
    # whole recipe is one record that can be saved beside the weights.
    corpus_options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        require(self.steps >= 1, f"steps must be at least 1, got {self.steps}")
        require(self.batch_size >= 1, f"batch_size must be at least 1, got {self.batch_size}")
        require(self.lr > 0, f"lr must be positive, got {self.lr}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        return cls(**d)
