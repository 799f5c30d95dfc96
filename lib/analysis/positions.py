"""Order: what attention cannot see on its own, and what learned position embeddings add.

A query scores each earlier key by content alone, and the softmax and the weighted sum do not
care in which order the keys come. So without position embeddings one layer of attention gives
the last position the same output whatever the order of the tokens before it. Stacking layers
under a causal mask lets some order back in: each earlier position has mixed in only the tokens
before *it*, so a second layer's keys and values change when the order does. `order_test`
measures both at the last position; `without_positions` is a model with its position embeddings
removed; `lag_similarity` and `offset_preference` read what the learned positions encode.
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from lib.errors import require

# The stages of the last position compared by `order_test`, in forward order.
STAGES = ("blocks.0.attn_out", "blocks.0.resid_post", "blocks.1.attn_out", "logits")


def without_positions(lm):
    """A copy of a loaded model whose position embeddings are zero (the original is untouched)."""
    clone = copy.deepcopy(lm)
    with torch.no_grad():
        clone.model.W_pos.zero_()
    return clone


def shuffle_middle(ids: Sequence[int], rng: random.Random, keep_first: bool = True) -> list[int]:
    """The same tokens with the last (and, if `keep_first`, the first: <BOS>) left in place and
    the rest shuffled."""
    ids = list(ids)
    start = 1 if keep_first else 0
    middle = ids[start:-1]
    rng.shuffle(middle)
    return ids[:start] + middle + ids[-1:]


@dataclass(frozen=True)
class OrderTest:
    largest: dict[str, float]   # stage -> largest change at the last position over every shuffle
    shuffles: int               # shuffled prompts compared (only those whose order really changed)


def order_test(model, sequences: Sequence[Sequence[int]], shuffles: int = 5, seed: int = 0,
               stages: Sequence[str] = STAGES, keep_first: bool = True) -> OrderTest:
    """Shuffle each token sequence `shuffles` times (all but the last token, and the first if
    `keep_first`) and record, stage by stage, the largest change in the last position's vector."""
    rng = random.Random(seed)
    largest = dict.fromkeys(stages, 0.0)
    compared = 0
    for ids in sequences:
        ids = list(ids)
        _, before = model.run_with_cache(ids)
        for _ in range(shuffles):
            other = shuffle_middle(ids, rng, keep_first)
            if other == ids:
                continue
            compared += 1
            _, after = model.run_with_cache(other)
            for stage in stages:
                change = float((before[stage][-1] - after[stage][-1]).abs().max())
                largest[stage] = max(largest[stage], change)
    require(compared > 0, "no shuffle changed the order: give sequences with at least two tokens to shuffle")
    return OrderTest(largest, compared)


def lag_similarity(model, max_lag: int = 10, first: int = 1) -> np.ndarray:
    """Mean cosine similarity between the position embeddings of positions p and p + lag, for
    lag = 1 .. max_lag (index 0 is lag 1), over every p from `first` on (position 0 is <BOS>'s)."""
    W = model.W_pos.detach().double().numpy()
    unit = W / np.linalg.norm(W, axis=1, keepdims=True)
    n = len(unit)
    require(1 <= max_lag < n - first, f"lags run from 1 to {n - first - 1}")
    return np.array([np.mean([unit[p] @ unit[p + lag] for p in range(first, n - lag)]) for lag in range(1, max_lag + 1)])


def offset_preference(model, layer: int, head: int, max_offset: int = 10, first_query: int = 12) -> np.ndarray:
    """How much a head's attention score favours each distance back, from the position embeddings
    alone: the scaled score between the positions of a query and of a key `offset` back, minus
    that query's mean score, averaged over query positions from `first_query` on. Index i is
    offset i (0: the query's own position). Meaningful for layer 0, which reads the embeddings."""
    attn = model.blocks[layer].attn
    P = model.W_pos.detach().double().numpy()
    W_QK = attn.W_Q[head].detach().double().numpy() @ attn.W_K[head].detach().double().numpy().T
    scores = P @ W_QK @ P.T / np.sqrt(model.cfg.d_head)
    n = len(P)
    require(max_offset < first_query < n, f"queries start after the largest offset and before {n}")
    rows = []
    for q in range(first_query, n):
        row = scores[q, : q + 1]
        rows.append([row[q - o] - row.mean() for o in range(max_offset + 1)])
    return np.mean(rows, axis=0)
