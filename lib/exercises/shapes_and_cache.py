"""Self-checks for the chapter "Shapes, parameters and the KV cache"."""
from __future__ import annotations

from lib.analysis.inventory import GPT2_SMALL, kv_cache_bytes, parameter_count
from lib.exercises import Feedback, check_number


def gpt2_cache_megabytes(answer) -> Feedback:
    """Exercise 1: GPT-2 small's KV cache over its full context of 1,024 tokens, in 32-bit floats, in MB."""
    a = GPT2_SMALL
    expected = kv_cache_bytes(a.n_layers, a.n_ctx, a.n_heads, a.d_head, 4) / 1e6
    return check_number(answer, expected, tol=0.05, what="The size in MB",
                        hints={expected / 2: "that counts only the keys (or only the values); the cache holds both."})


def embedding_share(answer) -> Feedback:
    """Exercise 2: the share of GPT-2 small's parameters in its token embedding."""
    expected = GPT2_SMALL.vocab_size * GPT2_SMALL.d_model / parameter_count(GPT2_SMALL)
    return check_number(answer, expected, tol=0.002, what="The share")
