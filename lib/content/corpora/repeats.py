"""Repeated random segments: the corpus an induction head forms on.

A sequence is `<BOS>`, a segment of distinct letters drawn at random, and the same segment again:

    <BOS> k q d w m k q d w m                     period 5

The first copy cannot be predicted (beyond "a letter not yet used"); every token of the second copy
after its first is fixed by the first copy: the token that followed the current token last time.
A model that has learned that rule (look back for the earlier occurrence of the current token, and
copy what came after it) is an induction head; it needs two attention layers, since one head must
first write into each position which token preceded it.

The period (the segment's length) varies from sequence to sequence (`min_period` to `max_period`):
with one fixed period, each token sits a fixed distance after its earlier occurrence, and a single
layer can copy by position alone (`fixed_period`, the pitfall the induction chapter measures).
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass

import numpy as np

from lib.errors import require
from lib.model.vocab import PAD, SPECIALS, BOS

LETTERS = tuple(string.ascii_lowercase)
TOKENS = SPECIALS + LETTERS
MIN_PERIOD, MAX_PERIOD = 4, 12


@dataclass(frozen=True)
class RepeatOptions:
    min_period: int = MIN_PERIOD
    max_period: int = MAX_PERIOD

    def __post_init__(self):
        for name in ("min_period", "max_period"):
            v = getattr(self, name)
            require(isinstance(v, int) and not isinstance(v, bool) and 2 <= v <= len(LETTERS),
                    f"{name} must be a whole number from 2 to {len(LETTERS)}, got {v!r}")
        require(self.min_period <= self.max_period,
                f"min_period ({self.min_period}) must not exceed max_period ({self.max_period})")

    @property
    def max_len(self) -> int:
        return 1 + 2 * self.max_period


def sample_sequence(rng: random.Random, options: RepeatOptions = RepeatOptions()) -> list[str]:
    """`<BOS>`, a segment of distinct random letters, and the segment again."""
    period = rng.randint(options.min_period, options.max_period)
    segment = rng.sample(LETTERS, period)
    return [BOS, *segment, *segment]


@dataclass(frozen=True)
class Batch:
    """Repeated sequences of one period, as token ids [batch, 1 + 2 * period], and where the copies lie."""
    ids: np.ndarray
    period: int

    @property
    def first(self) -> slice:
        """The positions whose next token is in the first copy, after its first token (the first
        token after <BOS> is a free draw in both copies, so it is left out of both)."""
        return slice(1, self.period)

    @property
    def second(self) -> slice:
        """The positions whose next token lies in the second copy, its first token left out: the
        tokens an induction head can predict."""
        return slice(self.period + 1, 2 * self.period)


def repeated_batch(rng: np.random.Generator, n: int, period: int, vocab_ids: dict[str, int]) -> Batch:
    """`n` repeated sequences of one period, drawn with a numpy generator (the analysis's sampler)."""
    require(2 <= period <= len(LETTERS), f"a period is from 2 to {len(LETTERS)} letters, got {period}")
    letters = np.array([vocab_ids[t] for t in LETTERS])
    segs = np.stack([letters[rng.permutation(len(LETTERS))[:period]] for _ in range(n)])
    bos = np.full((n, 1), vocab_ids[BOS])
    return Batch(np.concatenate([bos, segs, segs], axis=1), period)


@dataclass(frozen=True)
class Merged:
    """Batches of several periods as one: ids [n, longest] padded at the end with <PAD> (the model is
    causal, so padding after a sequence changes nothing before it), each row's period, and index arrays
    (row, position) of the positions whose next token is in the first copy, in the second copy (each
    copy's first token left out, as in `Batch`), and every query after <BOS> (the previous-token score's)."""
    ids: np.ndarray
    periods: np.ndarray
    first: tuple[np.ndarray, np.ndarray]
    second: tuple[np.ndarray, np.ndarray]
    queries: tuple[np.ndarray, np.ndarray]
    induction: tuple[np.ndarray, np.ndarray, np.ndarray]   # rows, queries in the second copy, their keys
    partner: np.ndarray      # each row's partner of the same period (the next one; the last takes the first)


def merge(batches: list[Batch], pad: int) -> Merged:
    T = max(b.ids.shape[1] for b in batches)
    rows, periods, partner = [], [], []
    start = 0
    for b in batches:
        n = len(b.ids)
        rows.append(np.pad(b.ids, ((0, 0), (0, T - b.ids.shape[1])), constant_values=pad))
        periods += [b.period] * n
        partner += [start + (i - 1) % n for i in range(n)]
        start += n
    ids, periods = np.concatenate(rows), np.array(periods)

    def spans(lo, hi):
        r = np.concatenate([np.full(hi(p) - lo(p), i) for i, p in enumerate(periods)])
        q = np.concatenate([np.arange(lo(p), hi(p)) for p in periods])
        return r, q
    ind_r, ind_q = spans(lambda p: p + 1, lambda p: 2 * p + 1)
    return Merged(ids, periods, spans(lambda p: 1, lambda p: p), spans(lambda p: p + 1, lambda p: 2 * p),
                  spans(lambda p: 1, lambda p: 2 * p + 1), (ind_r, ind_q, ind_q - periods[ind_r] + 1),
                  np.array(partner))


# The held-out sequences the trainer measures a model on while it trains: drawn once with this seed,
# never with a training seed, 32 of every period.
MONITOR_SEED = 20260
MONITOR_PER_PERIOD = 32


def held_out(vocab_ids: dict[str, int], options: RepeatOptions = RepeatOptions(), n: int = MONITOR_PER_PERIOD,
             seed: int = MONITOR_SEED) -> list[Batch]:
    rng = np.random.default_rng(seed)
    return [repeated_batch(rng, n, p, vocab_ids) for p in range(options.min_period, options.max_period + 1)]


def copy_losses(model, batches: list[Batch]) -> dict[str, float]:
    """The model's mean next-token loss (nats) on the first copy and on the second copy of `batches`,
    each token counted once (the first token of each copy, a free draw, left out of both)."""
    import torch  # deferred: the corpus's sampler (and `import lib`) needs no torch, only this measurement

    m = batches if isinstance(batches, Merged) else merge(batches, TOKENS.index(PAD))
    with torch.no_grad():
        ids = torch.as_tensor(m.ids)
        logp = torch.log_softmax(model(ids[:, :-1]).double(), dim=-1)
        nll = -logp.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)   # [batch, position]
    return {"second_copy_loss": float(nll[m.second].mean()), "first_copy_loss": float(nll[m.first].mean())}


def monitor(options: RepeatOptions = RepeatOptions()):
    """The trainer's monitor: the loss on the second copy (what training stops on) and on the first."""
    ids = {t: i for i, t in enumerate(TOKENS)}
    batches = merge(held_out(ids, options), ids[PAD])
    return lambda model: copy_losses(model, batches)
