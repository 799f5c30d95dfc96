"""Bigram statistics, and what a model that sees only the last token can do with them.

A bigram table gives, for each token, how often each token follows it in the corpus. A model
whose prediction depends only on the last token (a zero-layer Transformer: embedding straight
into unembedding) can at best learn this table. `bigram_table` counts it on rounds of the
calling game; `model_table` reads the same table off a model, one prompt per token.
"""
from __future__ import annotations

import random
import math

import numpy as np
import torch

from lib.content.corpora import calling_game
from lib.model.readout import softmax

BIGRAM_ROUNDS = 20000


def bigram_table(n_rounds: int = BIGRAM_ROUNDS, seed: int = 0) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(tokens, counts [prev, next], probabilities [prev, next]) over `n_rounds` sampled rounds.

    Rows of tokens that never occur as a predecessor are left at zero.
    """
    tokens = list(calling_game.TOKENS)
    rng = random.Random(seed)
    counts, probs = count_bigrams([calling_game.sample_round(rng) for _ in range(n_rounds)], tokens)
    return tokens, counts, probs


def count_bigrams(rounds, tokens) -> tuple[np.ndarray, np.ndarray]:
    """(counts [prev, next], probabilities [prev, next]) of the pairs of neighbouring tokens inside
    each round (never across the end of one round and the start of the next). Rows of tokens that
    never come before another are left at zero."""
    index = {t: i for i, t in enumerate(tokens)}
    counts = np.zeros((len(tokens), len(tokens)))
    for words in rounds:
        for a, b in zip(words, words[1:]):
            counts[index[a], index[b]] += 1
    totals = counts.sum(1, keepdims=True)
    probs = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    return counts, probs


def model_table(lm) -> np.ndarray:
    """The model's next-token probabilities after each token on its own, with <BOS> in front
    (the position the zero-layer model is trained to read): rows [prev, next]."""
    bos = lm.vocab.id("<BOS>")
    rows = []
    with torch.no_grad():
        for i in range(len(lm.vocab)):
            logits = lm.model([bos, i] if i != bos else [bos])[-1]
            rows.append(softmax(logits).numpy())
    return np.array(rows)


def compare(lm, probs: np.ndarray, counts: np.ndarray) -> dict:
    """How close the model's table is to the counted one, over the tokens that occur as predecessors:
    the largest probability gap, and the mean KL divergence (bits) weighted by how often each occurs."""
    seen = counts.sum(1) > 0
    model = model_table(lm)
    gap = float(np.abs(model[seen] - probs[seen]).max())
    weights = counts.sum(1)[seen] / counts.sum()
    p, q = probs[seen], np.clip(model[seen], 1e-12, 1)
    kl = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1) / q), 0).sum(1)
    return {"max_gap": gap, "mean_kl_bits": float((weights * kl).sum()), "predecessors": int(seen.sum())}


def held_out_rounds(n: int = 300, seed: int = 12345) -> list[list[str]]:
    """Rounds of the game that the training seed did not draw (a different random stream)."""
    rng = random.Random(seed)
    return [calling_game.sample_round(rng) for _ in range(n)]


def loss_per_token(lm, rounds: list[list[str]]) -> float:
    """Mean negative log-probability (nats) the model gives each actual next token of the rounds."""
    total, n = 0.0, 0
    with torch.no_grad():
        for words in rounds:
            ids = lm.vocab.encode(words)
            logp = torch.log_softmax(lm.model(ids[:-1]).double(), -1)
            total -= float(logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].sum())
            n += len(ids) - 1
    return total / n


def rules_loss_per_token(rounds: list[list[str]]) -> float:
    """The same measure for the game's own rules: the best any model can do on these rounds."""
    total, n = 0.0, 0
    for words in rounds:
        for k in range(1, len(words)):
            total -= math.log(calling_game.next_token_distribution(words[:k])[words[k]])
            n += 1
    return total / n


def bigram_loss_per_token(rounds: list[list[str]], probs: np.ndarray, tokens: list[str]) -> float:
    """The same measure for the counted bigram table itself."""
    index = {t: i for i, t in enumerate(tokens)}
    total, n = 0.0, 0
    for words in rounds:
        for a, b in zip(words, words[1:]):
            total -= float(np.log(max(probs[index[a], index[b]], 1e-12)))
            n += 1
    return total / n
