"""Typed configurations: the shape of a model and the recipe that trains it.

One `ModelConfig` fixes every tensor shape in the model; one `TrainConfig` fixes everything that
makes training reproducible (seed, steps, batch, learning rate). The presets for the shipped
models live in `lib.shipped.presets`, so that this module stays a pure description.
"""
from __future__ import annotations

import math
from dataclasses import MISSING, asdict, dataclass, field, fields

from lib.errors import CourseError, require

ACTIVATIONS = ("relu", "gelu")


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
        # Checked by type as well as by range: a config read from a damaged meta.json may hold
        # "64" or 2.5 or true, and each would otherwise fail later, deep inside torch.
        for name in ("vocab_size", "n_ctx", "d_model"):
            value = getattr(self, name)
            require(_whole(value) and value >= 1, f"{name} must be a whole number of at least 1, got {value!r}")
        for name in ("n_heads", "d_head", "n_layers", "d_mlp"):
            value = getattr(self, name)
            require(_whole(value) and value >= 0, f"{name} must be a whole number, 0 or more, got {value!r}")
        require(self.act in ACTIVATIONS, f"act must be one of {ACTIVATIONS}, got {self.act!r}")
        for name in ("layer_norm", "tied", "positions"):
            require(isinstance(getattr(self, name), bool), f"{name} must be true or false, got {getattr(self, name)!r}")
        require(isinstance(self.init_std, (int, float)) and not isinstance(self.init_std, bool)
                and math.isfinite(self.init_std) and self.init_std > 0,
                f"init_std must be a positive number, got {self.init_std!r}")

    @property
    def has_mlp(self) -> bool:
        return self.d_mlp > 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        """A config from its saved form; unknown or missing keys are named, not a TypeError."""
        require(isinstance(d, dict), f"a model config is a mapping of sizes, got {type(d).__name__}")
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise CourseError(f"unknown config key {', '.join(map(repr, unknown))}; the keys are {', '.join(known)}")
        required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
        missing = [k for k in required if k not in d]
        require(not missing, f"the config lacks {', '.join(missing)}; it must give {', '.join(required)}")
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
    # Training stops early once the corpus's monitored figure (`Corpus.monitor`, measured every
    # `monitor_every` steps on held-out sequences) falls below `stop_below`; None trains all `steps`.
    stop_below: float | None = None
    monitor_every: int = 25
    # How many snapshots of the weights over training the trainer keeps (from step 0 to the last,
    # evenly spaced on the monitor's grid); 0 keeps none.
    checkpoints: int = 0
    # A recipe that trains to its corpus's floor: past `steps`, training goes on at the schedule's last
    # learning rate, `floor_check_every` steps at a time, until the model is within `floor_gap` nats per
    # token of the floor (measured by the caller's `gap_to_floor`), at most `floor_max_extra` steps more.
    floor_gap: float | None = None
    floor_check_every: int = 250
    floor_max_extra: int = 0

    def __post_init__(self) -> None:
        require(self.steps >= 1, f"steps must be at least 1, got {self.steps}")
        require(self.monitor_every >= 1, f"monitor_every must be at least 1, got {self.monitor_every}")
        require(self.checkpoints == 0 or self.checkpoints >= 2,
                f"checkpoints must be 0 (none) or at least 2 (the first and the last), got {self.checkpoints}")
        require(self.floor_check_every >= 1, f"floor_check_every must be at least 1, got {self.floor_check_every}")
        require(self.floor_max_extra >= 0, f"floor_max_extra must be at least 0, got {self.floor_max_extra}")
        require(self.batch_size >= 1, f"batch_size must be at least 1, got {self.batch_size}")
        require(self.lr > 0, f"lr must be positive, got {self.lr}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        return cls(**d)
