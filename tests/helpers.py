"""Shared test helpers (a module, not conftest: tests/browser has a conftest of its own)."""
import numpy as np
import torch

from lib.exercises import Feedback
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


def figures_differ(now, then, rel: float, path: str = "") -> list[str]:
    """Where two nested figures (dicts, lists, numbers, words) differ: words, counts and flags exactly,
    floats to `rel` (relative, and as much absolute below 1). Figures recorded on one machine and
    recomputed on another are compared this way, never exactly: the last digits of a float depend
    on the processor (vector width, summation order)."""
    if isinstance(then, dict) and isinstance(now, dict):
        if set(now) != set(then):
            return [f"{path or 'figures'}: keys {sorted(now)} != {sorted(then)}"]
        return [d for k in then for d in figures_differ(now[k], then[k], rel, f"{path}.{k}" if path else str(k))]
    if isinstance(then, list) and isinstance(now, list):
        if len(now) != len(then):
            return [f"{path}: {len(now)} items != {len(then)}"]
        return [d for i, (a, b) in enumerate(zip(now, then)) for d in figures_differ(a, b, rel, f"{path}[{i}]")]
    if isinstance(then, float) and isinstance(now, (int, float)) and not isinstance(now, bool):
        import math
        return [] if math.isclose(now, then, rel_tol=rel, abs_tol=rel) else [f"{path}: {now!r} != {then!r}"]
    return [] if now == then and type(now) is type(then) else [f"{path}: {now!r} != {then!r}"]


# What a learner may hand in by mistake: each gets a verdict in one line, never an exception.
PART3_GARBAGE = (None, "Tarso?", np.array([1.0, 2.0]), torch.tensor([3.0, 4.0]), 10 ** 400, 1e308, float("nan"))


def one_line_verdicts(check, *args):
    """`check(*args, garbage)` for every garbage answer: a wrong verdict in one short line."""
    for garbage in PART3_GARBAGE:
        fb = check(*args, garbage)
        assert isinstance(fb, Feedback) and not fb.ok, (garbage, fb)
        assert "\n" not in fb.message and len(fb.message) < 400, fb.message
