"""SmolLM2's shapes, read from its GGUF file's header, in the terms of `lib.analysis.inventory`: its every weight
beside the calling game's, its grouped-query attention and its KV cache.

Nothing is dequantized: the file lists each tensor's shape, and the metadata gives the sizes
(`lib.model.smollm2.file_facts`). The inventory's count from those sizes is held to the count of numbers the
file actually stores, so the table the page prints is the file's.
"""
from __future__ import annotations

import functools

import lib
from lib.analysis.inventory import Architecture, from_config, kv_cache_bytes, parameter_count
from lib.model import smollm2
from lib.model.config import ModelConfig

FLOAT32 = 4     # bytes per number as the library runs the model (the file stores 4-bit and 8-bit blocks)


@functools.lru_cache(maxsize=1)
def architecture() -> Architecture:
    """SmolLM2 in the inventory's terms, every size from the file: tied (the file has no separate
    unembedding), no biases, RMSNorm, a gated MLP, rotary positions (no position table), and fewer key and
    value heads than query heads."""
    f = smollm2.file_facts()
    c = f.cfg
    sizes = ModelConfig(vocab_size=c.vocab_size, n_ctx=c.n_ctx, d_model=c.d_model, n_heads=c.n_heads, d_head=c.d_head,
                        n_layers=c.n_layers, d_mlp=c.d_mlp, tied="output.weight" not in f.shapes, positions=False)
    return Architecture("SmolLM2-135M", sizes, attn_bias=False, mlp_bias=False, gated_mlp=True, norm="rmsnorm",
                        kv_heads=c.n_kv_heads)


@functools.lru_cache(maxsize=1)
def toy() -> Architecture:
    return from_config("calling game", lib.load("calling-game").model.cfg)


def kv_per_token(arch: Architecture, heads: int | None = None) -> int:
    """Bytes of keys and values one token adds to the cache, in float32, with `heads` key/value heads per
    layer (the model's own by default)."""
    kv = heads if heads is not None else (arch.kv_heads or arch.n_heads)
    return int(kv_cache_bytes(arch.n_layers, 1, kv, arch.d_head, FLOAT32))


@functools.lru_cache(maxsize=1)
def numbers() -> dict:
    f = smollm2.file_facts()
    smol, course = architecture(), toy()
    per_token, per_token_full = kv_per_token(smol), kv_per_token(smol, smol.n_heads)
    weights = FLOAT32 * f.parameters
    return {"layers": smol.n_layers, "heads": smol.n_heads, "kv_heads": smol.kv_heads, "d_head": smol.d_head,
            "group": smol.n_heads // smol.kv_heads, "d_model": smol.d_model,
            "q_rows": f.shapes["blk.0.attn_q.weight"][0], "k_rows": f.shapes["blk.0.attn_k.weight"][0],
            "v_rows": f.shapes["blk.0.attn_v.weight"][0], "file_params": f.parameters,
            "formula_params": parameter_count(smol), "tensors": len(f.shapes), "file_mb": f.file_bytes / 1e6,
            "per_token": per_token, "per_token_full": per_token_full, "n_ctx": smol.n_ctx,
            "cache_ctx_mb": per_token * smol.n_ctx / 1e6, "cache_ctx_full_mb": per_token_full * smol.n_ctx / 1e6,
            "weights_mb": weights / 1e6, "crossover": weights / per_token, "crossover_full": weights / per_token_full,
            "toy_per_token": kv_per_token(course), "toy_ctx": course.n_ctx,
            "toy_cache_ctx": kv_per_token(course) * course.n_ctx, "toy_ratio": per_token / kv_per_token(course)}
