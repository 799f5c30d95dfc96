"""Shared test helpers (a module, not conftest: tests/browser has a conftest of its own)."""
import torch

from lib.model.config import ModelConfig
from lib.model.transformer import Transformer


def small_model(layer_norm=False, tied=True, seed=0, n_layers=2, d_mlp=16, act="relu", positions=True) -> Transformer:
    """A random model with every feature switched on, big enough to catch shape mistakes:
    vocabulary 11, context 8, d_model 12, 3 heads of width 4."""
    torch.manual_seed(seed)
    cfg = ModelConfig(vocab_size=11, n_ctx=8, d_model=12, n_heads=3, d_head=4, n_layers=n_layers,
                      d_mlp=d_mlp, layer_norm=layer_norm, tied=tied, act=act, positions=positions, init_std=0.3)
    m = Transformer(cfg)
    with torch.no_grad():  # non-zero biases and LayerNorm weights, so no term can hide behind a zero
        for name, p in m.named_parameters():
            if name.split(".")[-1].startswith("b") or name.endswith(".w"):
                p.add_(torch.randn_like(p) * 0.2)
    m.eval()
    m.requires_grad_(False)  # like a loaded model: nothing computed from it asks for gradients
    return m
