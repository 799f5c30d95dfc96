"""The library's own attention layer, run on the inputs and weights an exercise chooses.

Write checks for attention (the mask, one head, the split into heads) take their right answers
from the course's Transformer itself, not from a second copy of the math: this module builds a
one-layer, attention-only model whose embedding rows are the exercise's inputs, and returns its
activation cache.
"""
from __future__ import annotations

import numpy as np
import torch

from lib.model.config import ModelConfig
from lib.model.transformer import ActivationCache, Transformer


def run_layer(x, W_Q, W_K, W_V, W_O) -> ActivationCache:
    """The cache of one attention layer (no LayerNorm, no MLP) reading the rows of `x` [T, d_model],
    in double precision. Weights are per head: W_Q, W_K, W_V [head, d_model, d_head], W_O
    [head, d_head, d_model]."""
    x = torch.as_tensor(np.asarray(x), dtype=torch.float64)
    W_Q, W_K, W_V, W_O = (torch.as_tensor(np.asarray(w), dtype=torch.float64) for w in (W_Q, W_K, W_V, W_O))
    T, D = x.shape
    H, _, Dh = W_Q.shape
    cfg = ModelConfig(vocab_size=T, n_ctx=T, d_model=D, n_heads=H, d_head=Dh, n_layers=1, d_mlp=0,
                      layer_norm=False, tied=True, positions=False)
    model = Transformer(cfg).double().eval()
    with torch.no_grad():
        # Token t's embedding is row t of x, so the prompt 0, 1, ..., T-1 feeds the layer x itself.
        model.W_E.copy_(x)
        attn = model.blocks[0].attn
        for param, value in ((attn.W_Q, W_Q), (attn.W_K, W_K), (attn.W_V, W_V), (attn.W_O, W_O)):
            param.copy_(value)
    _, cache = model.run_with_cache(torch.arange(T))
    return cache


def random_layer(seed: int, T: int, d_model: int, n_heads: int, d_head: int, scale: float = 1.0):
    """Inputs [T, d_model] and per-head weights drawn with `seed` (the same seed, the same case)."""
    g = torch.Generator().manual_seed(seed)

    def draw(*shape, std=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * std

    x = draw(T, d_model)
    w = d_model ** -0.5
    return (x, draw(n_heads, d_model, d_head, std=w * scale), draw(n_heads, d_model, d_head, std=w * scale),
            draw(n_heads, d_model, d_head, std=w), draw(n_heads, d_head, d_model, std=d_head ** -0.5))
