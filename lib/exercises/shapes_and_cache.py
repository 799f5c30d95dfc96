"""Self-checks for the chapter "Shapes, parameters and the KV cache"."""
from __future__ import annotations

from lib.analysis.inventory import GPT2_SMALL, SEVEN_B, kv_cache_bytes, parameter_count
from lib.exercises import Feedback, check_number
from lib.exercises.writing import Case, Mistake, WriteCheck


def gpt2_cache_megabytes(answer) -> Feedback:
    """GPT-2 small's KV cache over its full context of 1,024 tokens, in 32-bit floats, in MB."""
    a = GPT2_SMALL
    expected = kv_cache_bytes(a.n_layers, a.n_ctx, a.n_heads, a.d_head, 4) / 1e6
    return check_number(answer, expected, tol=0.05, what="The size in MB",
                        hints={expected / 2: "that counts only the keys (or only the values); the cache holds both."})


def seven_b_embedding_share(answer) -> Feedback:
    """The share of the 7B shape's parameters in its token embedding W_E (its W_U is separate)."""
    b = SEVEN_B
    expected = b.vocab_size * b.d_model / parameter_count(b)
    gpt2 = GPT2_SMALL.vocab_size * GPT2_SMALL.d_model / parameter_count(GPT2_SMALL)
    return check_number(answer, expected, tol=0.001, what="The share", hints={
        2 * expected: "that counts the unembedding W_U too; it is a separate matrix of the same size, and the "
                      "question asks for W_E alone.",
        gpt2: "that is GPT-2 small's share; the 7B model's stream is wider, but its blocks grow faster.",
        100 * expected: "that is a percentage; give the share as a fraction between 0 and 1."})


# ------------------------------------------------------------------ write: the KV cache's size
def _kv_cases() -> list[Case]:
    from lib.model.store import load

    cfg = load("calling-game").model.cfg
    a, b = GPT2_SMALL, SEVEN_B
    # First a case whose sizes all differ, so each missing or extra factor shows as itself (GPT-2
    # small has as many layers as heads; the shipped model's 2 layers would look like "keys only").
    return [Case((3, 5, 7, 11, 1), "3 layers, 5 tokens, 7 heads of size 11, one byte per number"),
            Case((a.n_layers, a.n_ctx, a.n_heads, a.d_head, 4), "GPT-2 small's full context in 32-bit floats"),
            Case((cfg.n_layers, cfg.n_ctx, cfg.n_heads, cfg.d_head, 4), "the shipped model's full context"),
            Case((b.n_layers, b.n_ctx, b.n_heads, b.d_head, 2), "a 7B model's context in 16-bit floats"),
            Case((6, 100_000, 8, 64, 0.5), "100,000 tokens in 4-bit numbers (half a byte each)"),
            Case((1, 1, 1, 1, 1), "a single token, layer, head and number")]


def _scaled(factor):
    return lambda layers, context, heads, d_head, nbytes: factor(layers, context, heads, d_head, nbytes) * \
        kv_cache_bytes(layers, context, heads, d_head, nbytes)


kv_cache_size = WriteCheck(
    name="kv_cache_size",
    cases=_kv_cases,
    reference=kv_cache_bytes,
    mistakes=(
        Mistake(_scaled(lambda L, T, H, D, B: 0.5),
                "that is half the cache: it stores a key and a value for every position, head and layer."),
        Mistake(_scaled(lambda L, T, H, D, B: 1.5),
                "that includes the queries: a query is used once, by its own position, and is never cached."),
        Mistake(_scaled(lambda L, T, H, D, B: 1 / L),
                "the size does not grow with the number of layers: every layer keeps its own keys and values."),
        Mistake(_scaled(lambda L, T, H, D, B: 1 / H),
                "the size does not grow with the number of heads: every head keeps its own keys and values."),
        Mistake(_scaled(lambda L, T, H, D, B: T),
                "the size grows with the square of the context, like the attention pattern; the cache adds "
                "one key and one value per token."),
        Mistake(_scaled(lambda L, T, H, D, B: 1 / B),
                "that counts numbers, not bytes: multiply by the bytes each number takes."),
        Mistake(_scaled(lambda L, T, H, D, B: 8),
                "that counts bits, not bytes."),
    ),
)
