"""Training: one plain, deterministic loop on the CPU.

Batches are drawn on the fly from a corpus sampler seeded with the training seed, so the same
`TrainConfig` always produces the same weights on the same machine. The loop is AdamW with a
linear warm-up and cosine decay, next-token cross-entropy on every non-padding position.
"""
from __future__ import annotations

import math
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import torch

from lib.model.config import ModelConfig, TrainConfig
from lib.content.corpora import Corpus
from lib.errors import require
from lib.model.transformer import Transformer
from lib.model.vocab import PAD, Vocabulary


@dataclass
class StepInfo:
    step: int
    loss: float
    lr: float


@dataclass
class TrainResult:
    model: Transformer
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    # The corpus's monitored figures, every `monitor_every` steps: (step, {name: value}); step s is
    # the model after s updates (0: as initialised).
    monitored: list[tuple[int, dict]] = field(default_factory=list)
    # Snapshots of the weights over training (`TrainConfig.checkpoints` of them): (step, state dict).
    checkpoints: list[tuple[int, dict]] = field(default_factory=list)
    # A recipe with a floor (`TrainConfig.floor_gap`): the gap measured after the schedule and after
    # each further block of steps, (step, gap), and whether the last one is within the floor.
    floor_checks: list[tuple[int, float]] = field(default_factory=list)
    reached_floor: bool | None = None


def make_batch(corpus: Corpus, vocab: Vocabulary, rng: random.Random, batch_size: int,
               n_ctx: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets [batch, length]; padding targets are -100 so the loss skips them."""
    seqs = [vocab.encode(corpus.sample(rng)) for _ in range(batch_size)]
    length = min(max(len(s) for s in seqs), n_ctx + 1)
    pad = vocab.id(PAD)
    data = torch.full((batch_size, length), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        s = s[:length]
        data[i, :len(s)] = torch.tensor(s)
    inputs, targets = data[:, :-1], data[:, 1:].clone()
    targets[targets == pad] = -100
    return inputs, targets


def lr_at(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def train(model_cfg: ModelConfig, train_cfg: TrainConfig, corpus: Corpus,
          callback: Callable[[StepInfo], None] | None = None, progress: bool = True,
          gap_to_floor: Callable[[Transformer], float] | None = None) -> TrainResult:
    """Train a fresh model; `callback` is called after every step with its loss.

    The same configs give the same weights, bit for bit, on the same machine and library versions.
    """
    previous, threads = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    # Without this, two runs with one seed drift apart in the last bits from the first steps
    # on (seen with 2 threads on the course's CPU machines); with it, they agree bit for bit
    # at no measurable cost for models this small.
    torch.use_deterministic_algorithms(True)
    # One thread: the course's matrices are so small that a second thread costs more in
    # hand-overs than it saves, and far more when another program holds the other core
    # (100 hand-wired steps on a busy 2-core machine: 5.3 s with one thread, 31.5 s with two).
    torch.set_num_threads(1)
    try:
        return _train(model_cfg, train_cfg, corpus, callback, progress, gap_to_floor)
    finally:
        torch.use_deterministic_algorithms(previous)
        torch.set_num_threads(threads)


def _train(model_cfg, train_cfg, corpus, callback, progress, gap_to_floor=None) -> TrainResult:
    vocab = Vocabulary(corpus.tokens)
    require(len(vocab) == model_cfg.vocab_size,
            f"the corpus has {len(vocab)} tokens but the model expects {model_cfg.vocab_size}")
    torch.manual_seed(train_cfg.seed)
    rng = random.Random(train_cfg.seed)
    model = Transformer(model_cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": train_cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=train_cfg.lr)
    result = TrainResult(model)
    bar = _progress_bar(train_cfg.steps, corpus.name) if progress else None
    start = time.perf_counter()
    snapshots: list[tuple[int, dict]] = []
    watching = corpus.monitor is not None or train_cfg.checkpoints
    require(train_cfg.stop_below is None or corpus.monitor is not None,
            f"stop_below needs a corpus that monitors a figure, and {corpus.name} does not")
    require(train_cfg.floor_gap is None or gap_to_floor is not None,
            "the recipe trains to a floor (floor_gap) but no gap_to_floor was given to measure it")

    def floor_reached(step: int) -> bool:
        model.eval()
        gap = float(gap_to_floor(model))
        model.train()
        result.floor_checks.append((step, gap))
        result.reached_floor = gap <= train_cfg.floor_gap
        return result.reached_floor

    def stop_here(step: int) -> bool:
        """Past the schedule: a recipe with a floor checks it every `floor_check_every` steps."""
        if train_cfg.floor_gap is None or step < train_cfg.steps:
            return False
        if (step - train_cfg.steps) % train_cfg.floor_check_every:
            return False
        return floor_reached(step) or step >= train_cfg.steps + train_cfg.floor_max_extra

    step = 0
    while step < train_cfg.steps or (train_cfg.floor_gap is not None and not stop_here(step)):
        if watching and step % train_cfg.monitor_every == 0 and _watch(model, corpus, train_cfg, step, result, snapshots):
            break
        # Past the schedule, the last learning rate it reached.
        lr = lr_at(min(step, train_cfg.steps - 1), train_cfg)
        for group in opt.param_groups:
            group["lr"] = lr
        inputs, targets = make_batch(corpus, vocab, rng, train_cfg.batch_size, model_cfg.n_ctx)
        logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                                 ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        value = float(loss.detach())
        result.losses.append(value)
        if callback is not None:
            callback(StepInfo(step, value, lr))
        if bar is not None:
            bar.update(1)
            if step % 20 == 0:
                bar.set_postfix(loss=f"{value:.4f}")
        step += 1
    else:
        if watching:
            _watch(model, corpus, train_cfg, step, result, snapshots)
    if bar is not None:
        bar.close()
    result.seconds = time.perf_counter() - start
    result.checkpoints = _spread(snapshots, train_cfg.checkpoints)
    model.eval()
    return result


def _watch(model, corpus, cfg: TrainConfig, step: int, result: TrainResult, snapshots: list) -> bool:
    """Measure the monitored figures and keep a snapshot at `step`; True when training should stop."""
    if cfg.checkpoints:
        snapshots.append((step, {k: v.detach().clone() for k, v in model.state_dict().items()}))
    if corpus.monitor is None:
        return False
    model.eval()
    figures = corpus.monitor(model)
    model.train()
    result.monitored.append((step, figures))
    stop = cfg.stop_below is not None and next(iter(figures.values())) < cfg.stop_below
    result.reached_floor = stop
    return stop


def _spread(snapshots: list, n: int) -> list:
    """`n` of the snapshots, evenly spaced from the first to the last (all of them when there are fewer)."""
    if not n or len(snapshots) <= n:
        return list(snapshots)
    picks = sorted({round(i * (len(snapshots) - 1) / (n - 1)) for i in range(n)})
    return [snapshots[i] for i in picks]


def _progress_bar(total: int, name: str):
    from tqdm.auto import tqdm  # deferred: only a progress bar needs it, and in a notebook tqdm.auto loads ipywidgets
    return tqdm(total=total, desc=f"training {name}", unit="step", file=sys.stderr, leave=True)
