"""Repeated random segments: the corpus an induction head forms on.

A sequence is `<BOS>`, a stretch of random filler letters, a segment of random letters, and the same
segment again; every letter before the repeat is distinct:

    <BOS> x f b k q d w m k q d w m               filler 3, period 5

Nothing before the repeat can be predicted (beyond "a letter not yet used"), and nothing marks where the
segment begins: the filler and the first copy are drawn alike. Every token of the second copy after its
first is fixed by the first copy: the token that followed the current token last time. A model that has
learned that rule (look back for the earlier occurrence of the current token, and copy what came after
it) is an induction head; it needs two attention layers, since one head must first write into each
position which token preceded it.

The filler's length (`max_filler`) and the period (`min_period` to `max_period`) are drawn afresh for
every sequence, so the repeat can start anywhere and a token's earlier occurrence sits at any distance:
no position, and no fixed offset, tells a model where to look; only reading the letters does. With the
repeat always right after `<BOS>` (`max_filler` 0), the second copy begins at a place the positions
give away, and a run can copy without an induction head (the pitfall `start-at-bos` of the induction
chapter); with one fixed period, a single layer can copy by position alone (`fixed-period`).
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
MAX_FILLER = 6           # filler letters before the repeat: 0 to this many


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass(frozen=True)
class RepeatOptions:
    min_period: int = MIN_PERIOD
    max_period: int = MAX_PERIOD
    max_filler: int = MAX_FILLER

    def __post_init__(self):
        for name in ("min_period", "max_period"):
            v = getattr(self, name)
            require(_whole(v) and 2 <= v <= len(LETTERS),
                    f"{name} must be a whole number from 2 to {len(LETTERS)}, got {v!r}")
        require(self.min_period <= self.max_period,
                f"min_period ({self.min_period}) must not exceed max_period ({self.max_period})")
        most = len(LETTERS) - self.max_period
        require(_whole(self.max_filler) and 0 <= self.max_filler <= most,
                f"max_filler must be a whole number from 0 to {most} (the filler and the segment are distinct "
                f"letters, {len(LETTERS)} in all), got {self.max_filler!r}")

    @property
    def max_len(self) -> int:
        return 1 + self.max_filler + 2 * self.max_period


def sample_sequence(rng: random.Random, options: RepeatOptions = RepeatOptions()) -> list[str]:
    """`<BOS>`, filler letters, a segment, and the segment again; the filler and the segment are distinct letters."""
    period = rng.randint(options.min_period, options.max_period)
    filler = rng.randint(0, options.max_filler) if options.max_filler else 0
    letters = rng.sample(LETTERS, filler + period)
    segment = letters[filler:]
    return [BOS, *letters[:filler], *segment, *segment]


@dataclass(frozen=True)
class Batch:
    """Repeated sequences of one period after one length of filler, as token ids [batch, 1 + filler + 2 *
    period], and where the copies lie: `<BOS>` at 0, the filler at 1..f, the first copy at f+1..f+p, the
    second at f+p+1..f+2p."""
    ids: np.ndarray
    period: int
    filler: int = 0

    @property
    def first(self) -> slice:
        """The positions whose next token is in the first copy, after its first token (the first
        token of each copy is a free draw, so it is left out of both)."""
        return slice(self.filler + 1, self.filler + self.period)

    @property
    def second(self) -> slice:
        """The positions whose next token lies in the second copy, its first token left out: the
        tokens an induction head can predict."""
        return slice(self.filler + self.period + 1, self.filler + 2 * self.period)


def repeated_batch(rng: np.random.Generator, n: int, period: int, vocab_ids: dict[str, int],
                   filler: int = 0) -> Batch:
    """`n` repeated sequences of one period after `filler` filler letters (every letter before the repeat
    distinct), drawn with a numpy generator (the analysis's sampler)."""
    require(2 <= period <= len(LETTERS), f"a period is from 2 to {len(LETTERS)} letters, got {period}")
    require(0 <= filler <= len(LETTERS) - period,
            f"a filler is from 0 to {len(LETTERS) - period} letters before a period of {period}, got {filler}")
    letters = np.array([vocab_ids[t] for t in LETTERS])
    drawn = np.stack([letters[rng.permutation(len(LETTERS))[:filler + period]] for _ in range(n)])
    segs = drawn[:, filler:]
    bos = np.full((n, 1), vocab_ids[BOS])
    return Batch(np.concatenate([bos, drawn[:, :filler], segs, segs], axis=1), period, filler)


def batches(rng: np.random.Generator, per_period: int, vocab_ids: dict[str, int], periods, max_filler: int,
            group: int) -> list[Batch]:
    """`per_period` sequences of each period, in batches of `group` (the last one smaller) that share a
    filler length drawn uniformly from 0 to `max_filler` for each batch."""
    out = []
    for p in periods:
        left = per_period
        while left > 0:
            n = min(group, left)
            filler = int(rng.integers(0, max_filler + 1)) if max_filler else 0
            out.append(repeated_batch(rng, n, p, vocab_ids, filler))
            left -= n
    return out


@dataclass(frozen=True)
class Merged:
    """Batches of several periods and fillers as one: ids [n, longest] padded at the end with <PAD> (the
    model is causal, so padding after a sequence changes nothing before it), each row's period and filler,
    and index arrays (row, position) of the positions whose next token is in the first copy, in the second
    copy (each copy's first token left out, as in `Batch`), and every query after <BOS> (the previous-token
    score's)."""
    ids: np.ndarray
    periods: np.ndarray
    fillers: np.ndarray
    first: tuple[np.ndarray, np.ndarray]
    second: tuple[np.ndarray, np.ndarray]
    queries: tuple[np.ndarray, np.ndarray]
    induction: tuple[np.ndarray, np.ndarray, np.ndarray]   # rows, queries in the second copy, their keys
    # rows, the same queries, and the earlier occurrence of each query's token (a duplicate-token head's key)
    duplicate: tuple[np.ndarray, np.ndarray, np.ndarray]
    # each row's partner of the same period and filler (the next row of its batch; the last takes the first)
    partner: np.ndarray


def merge(batches: list[Batch], pad: int) -> Merged:
    T = max(b.ids.shape[1] for b in batches)
    rows, periods, fillers, partner = [], [], [], []
    start = 0
    for b in batches:
        n = len(b.ids)
        rows.append(np.pad(b.ids, ((0, 0), (0, T - b.ids.shape[1])), constant_values=pad))
        periods += [b.period] * n
        fillers += [b.filler] * n
        partner += [start + (i - 1) % n for i in range(n)]
        start += n
    ids, periods, fillers = np.concatenate(rows), np.array(periods), np.array(fillers)

    def spans(lo, hi):
        """(rows, positions) from lo(p, f) to hi(p, f), row by row."""
        r = np.concatenate([np.full(hi(p, f) - lo(p, f), i) for i, (p, f) in enumerate(zip(periods, fillers))])
        q = np.concatenate([np.arange(lo(p, f), hi(p, f)) for p, f in zip(periods, fillers)])
        return r, q
    ind_r, ind_q = spans(lambda p, f: f + p + 1, lambda p, f: f + 2 * p + 1)
    return Merged(ids, periods, fillers, spans(lambda p, f: f + 1, lambda p, f: f + p),
                  spans(lambda p, f: f + p + 1, lambda p, f: f + 2 * p),
                  spans(lambda p, f: 1, lambda p, f: f + 2 * p + 1), (ind_r, ind_q, ind_q - periods[ind_r] + 1),
                  (ind_r, ind_q, ind_q - periods[ind_r]), np.array(partner))


# The held-out sequences the trainer measures a model on while it trains: drawn once with this seed,
# never with a training seed, 32 of every period, in batches of 4 that share a filler length.
MONITOR_SEED = 20260
MONITOR_PER_PERIOD = 32
GROUP = 4


def held_out(vocab_ids: dict[str, int], options: RepeatOptions = RepeatOptions(), n: int = MONITOR_PER_PERIOD,
             seed: int = MONITOR_SEED) -> list[Batch]:
    rng = np.random.default_rng(seed)
    return batches(rng, n, vocab_ids, range(options.min_period, options.max_period + 1), options.max_filler, GROUP)


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


def watched(model, m: Merged) -> dict[str, float]:
    """What the trainer records while the model trains, from one forward pass over `m`: the loss on the
    second copy (what training stops on) and on the first (`copy_losses`), the previous-token and the
    duplicate-token score of the best head of the first layer for each, and the induction score of the best
    head of the second (as `lib.analysis.induction.pattern_scores` measures them), so that a run's record
    says when each head formed, at every step the trainer measured."""
    import torch  # deferred: as in copy_losses

    with torch.no_grad():
        ids = torch.as_tensor(m.ids)
        logits, cache = model.run_with_cache(ids)
        logp = torch.log_softmax(logits[:, :-1].double(), dim=-1)
        nll = -logp.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    out = {"second_copy_loss": float(nll[m.second].mean()), "first_copy_loss": float(nll[m.first].mean())}
    if model.cfg.n_layers >= 2 and model.cfg.n_heads:
        first = cache["blocks.0.attn.pattern"].double()
        r, q = m.queries
        out["previous_score"] = float(first[r, :, q, q - 1].mean(0).max())
        r, q, k = m.duplicate
        out["duplicate_score"] = float(first[r, :, q, k].mean(0).max())
        r, q, k = m.induction
        out["induction_score"] = float(cache["blocks.1.attn.pattern"].double()[r, :, q, k].mean(0).max())
    return out


def monitor(options: RepeatOptions = RepeatOptions()):
    """The trainer's monitor (`watched`) on the held-out sequences: the second copy's loss first."""
    ids = {t: i for i, t in enumerate(TOKENS)}
    batches = merge(held_out(ids, options), ids[PAD])
    return lambda model: watched(model, batches)
