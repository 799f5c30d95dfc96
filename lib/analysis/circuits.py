"""The QK and OV circuits of a head, and a summary of where each head looks.

A head does two separable things. Its QK circuit, W_Q W_K^T, decides who attends to whom; its OV
circuit, W_OV = W_V W_O, decides what moves once a position is attended to. Both are d_model x
d_model matrices of rank at most d_head. Read in token space (multiplying by the embedding on the
way in and the unembedding on the way out), the QK circuit scores each query token against each
key token, and the OV circuit says how attending to a token changes each next-token logit.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from lib.content.corpora import calling_game


def qk_circuit(model, layer: int, head: int) -> np.ndarray:
    attn = model.blocks[layer].attn
    return (attn.W_Q[head] @ attn.W_K[head].T).detach().double().numpy()


def ov_circuit(model, layer: int, head: int) -> np.ndarray:
    """W_OV = W_V W_O [d_model, d_model]: what the head writes for a given attended residual vector."""
    attn = model.blocks[layer].attn
    return (attn.W_V[head] @ attn.W_O[head]).detach().double().numpy()


def token_qk(model, layer: int, head: int) -> np.ndarray:
    """[query token, key token] attention scores between bare embeddings (positions left out), scaled."""
    E = model.W_E.detach().double().numpy()
    return E @ qk_circuit(model, layer, head) @ E.T / np.sqrt(model.cfg.d_head)


def token_ov(model, layer: int, head: int) -> np.ndarray:
    """[attended token, next-token logit]: the direct effect on the logits of attending to each token."""
    E = model.W_E.detach().double().numpy()
    return E @ ov_circuit(model, layer, head) @ model.W_U.detach().double().numpy()


HABITS = ("<BOS>", "itself (the callee)", "chiama", "the caller", "elsewhere")


@dataclass(frozen=True)
class HeadHabits:
    shares: dict[tuple[int, int], dict[str, float]]   # head -> habit -> mean attention share
    positions: int                                     # query positions averaged over

    def main_habit(self, head) -> tuple[str, float]:
        habit = max(self.shares[head], key=self.shares[head].get)
        return habit, self.shares[head][habit]


def head_habits(lm, n_rounds: int = 100, seed: int = 0) -> HeadHabits:
    """Where each head looks from the position where the epithet is decided: a callee, just after
    `chiama`. Averaged over every such position of `n_rounds` sampled rounds, each head's attention
    splits into <BOS>, the callee itself, `chiama`, the caller (two tokens back) and everything else.
    """
    rng = random.Random(seed)
    model = lm.model
    heads = [(layer, h) for layer in range(model.cfg.n_layers) for h in range(model.cfg.n_heads)]
    totals = {hd: dict.fromkeys(HABITS, 0.0) for hd in heads}
    count = 0
    for _ in range(n_rounds):
        words = calling_game.sample_round(rng)[: model.cfg.n_ctx]
        _, cache = model.run_with_cache(lm.vocab.encode(words))
        for q in range(2, len(words)):
            if words[q - 1] != "chiama":
                continue
            count += 1
            for layer, h in heads:
                row = cache[f"blocks.{layer}.attn.pattern"][h, q].double()
                parts = {"<BOS>": float(row[0]), "itself (the callee)": float(row[q]), "chiama": float(row[q - 1]),
                         "the caller": float(row[q - 2])}
                parts["elsewhere"] = 1.0 - sum(parts.values())
                for habit, share in parts.items():
                    totals[(layer, h)][habit] += share
    shares = {hd: {k: v / count for k, v in t.items()} for hd, t in totals.items()}
    return HeadHabits(shares, count)
