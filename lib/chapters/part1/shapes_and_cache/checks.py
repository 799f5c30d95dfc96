"""Self-checks for the chapter "Shapes, parameters and the KV cache"."""
from __future__ import annotations

from lib.analysis.inventory import GPT2_SMALL, SEVEN_B, kv_cache_bytes, parameter_count
import math

from lib.exercises import Feedback
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck
from lib.model.store import load


# ------------------------------------------------------------------ investigate: the cache run the other way
BUDGET_BYTES, BUDGET_BYTES_PER_NUMBER = 10**9, 2   # one gigabyte of 16-bit numbers


def _budget_args() -> dict:
    a = GPT2_SMALL
    return {"layers": a.n_layers, "heads": a.n_heads, "d_head": a.d_head, "bytes": BUDGET_BYTES_PER_NUMBER,
            "budget": BUDGET_BYTES}


def _budget_values() -> Values:
    a = _budget_args()
    per_token = lambda factor, nbytes: kv_cache_bytes(a["layers"], 1, a["heads"], a["d_head"], nbytes) * factor  # noqa: E731
    fit = lambda factor=1.0, nbytes=a["bytes"]: math.floor(a["budget"] / per_token(factor, nbytes))  # noqa: E731
    return Values(fit(), hints={"keys_only": fit(0.5), "float32": fit(1.0, 4),
                                "rounded_up": math.ceil(a["budget"] / per_token(1.0, a["bytes"]))})


TOKENS_IN_BUDGET = site_check(__name__, "gpt2_tokens_in_budget", rule="whole", compute="cacheTokens",
                              units=("tokens", "token"),
                              values=_budget_values, what="The number of tokens", args=_budget_args(), texts={
    "keys_only": "that counts only the keys (or only the values) per token; the cache holds both.",
    "float32": "that is in 32-bit numbers; the budget holds 16-bit numbers, two bytes each.",
    "rounded_up": "one token more than fits: the last token's keys and values would not have the room; round down."})


def gpt2_tokens_in_budget(answer) -> Feedback:
    """How many tokens of GPT-2 small's KV cache fit in one gigabyte (10**9 bytes) of 16-bit numbers."""
    return TOKENS_IN_BUDGET.judge(answer)


def _shape_args() -> dict:
    return {name: {"vocab": a.vocab_size, "d_model": a.d_model, "total": parameter_count(a)}
            for name, a in (("seven_b", SEVEN_B), ("gpt2", GPT2_SMALL))}


def _share_values() -> Values:
    a = _shape_args()
    share = lambda s: s["vocab"] * s["d_model"] / s["total"]   # noqa: E731
    expected = share(a["seven_b"])
    return Values(expected, hints={"both": 2 * expected, "gpt2": share(a["gpt2"]), "percent": 100 * expected})


EMBEDDING_SHARE = site_check(__name__, "seven_b_embedding_share", rule="number", compute="embeddingShare",
                             values=_share_values, what="The share", tol=0.001, args=_shape_args(), texts={
    "both": "that counts the unembedding W_U too; it is a separate matrix of the same size, and the question asks "
            "for W_E alone.",
    "gpt2": "that is GPT-2 small's share; the 7B model's stream is wider, but its blocks grow faster.",
    "percent": "that is a percentage; give the share as a fraction between 0 and 1."})


def seven_b_embedding_share(answer) -> Feedback:
    """The share of the 7B shape's parameters in its token embedding W_E (its W_U is separate)."""
    return EMBEDDING_SHARE.judge(answer)


# ------------------------------------------------------------------ write: the KV cache's size, heads sharing keys
# The page prints the cache of a model whose every head keeps its own keys and values. The exercise
# asks for grouped-query attention, where `group` query heads share one key head and one value head
# (Llama 2 70B: 64 query heads in groups of 8), a formula the page does not print.
def grouped_kv_cache_bytes(layers, context, heads, group, d_head, bytes_per_number):
    return kv_cache_bytes(layers, context, heads // group, d_head, bytes_per_number)


def _kv_cases() -> list[Case]:
    cfg = load("calling-game").model.cfg
    a, b = GPT2_SMALL, SEVEN_B
    # First a case whose sizes all differ, so each missing or extra factor shows as itself (GPT-2
    # small has as many layers as heads; the shipped model's 2 layers would look like "keys only").
    return [Case((3, 5, 14, 7, 11, 1), "3 layers, 5 tokens, 14 heads in groups of 7 sharing keys and values, "
                                       "size 11, one byte per number"),
            Case((a.n_layers, a.n_ctx, a.n_heads, 1, a.d_head, 4), "GPT-2 small's full context in 32-bit floats, "
                                                                  "every head its own keys (group 1)"),
            Case((cfg.n_layers, cfg.n_ctx, cfg.n_heads, 4, cfg.d_head, 4), "the shipped model's full context, all "
                                                                          "four heads sharing one key head"),
            Case((80, 4096, 64, 8, 128, 2), "a 70B-sized model: 64 query heads in groups of 8, 4,096 tokens, 16-bit"),
            Case((b.n_layers, b.n_ctx, b.n_heads, 4, b.d_head, 0.5), "the 7B shape in groups of 4 and 4-bit numbers"),
            Case((1, 1, 1, 1, 1, 1), "a single token, layer, head and number")]


def _scaled(factor):
    return lambda layers, context, heads, group, d_head, nbytes: \
        factor(layers, context, heads, group, d_head, nbytes) * \
        grouped_kv_cache_bytes(layers, context, heads, group, d_head, nbytes)


kv_cache_size = WriteCheck(
    name="kv_cache_size",
    cases=_kv_cases,
    reference=grouped_kv_cache_bytes,
    mistakes=(
        Mistake(_scaled(lambda L, T, H, G, D, B: G),
                "that is the cache without sharing: with groups, a layer keeps one key and one value per group "
                "of heads, not per head."),
        Mistake(_scaled(lambda L, T, H, G, D, B: 1 / G),
                "that divides by the group size once too often: heads / group key heads each keep a key and a "
                "value per token."),
        Mistake(_scaled(lambda L, T, H, G, D, B: G * G),
                "that multiplies by the group size: sharing makes the cache smaller, not larger."),
        Mistake(_scaled(lambda L, T, H, G, D, B: 0.5),
                "that is half the cache: it stores a key and a value for every position, key head and layer."),
        Mistake(_scaled(lambda L, T, H, G, D, B: 1.5),
                "that includes the queries: a query is used once, by its own position, and is never cached."),
        Mistake(_scaled(lambda L, T, H, G, D, B: 1 / L),
                "the size does not grow with the number of layers: every layer keeps its own keys and values."),
        Mistake(_scaled(lambda L, T, H, G, D, B: T),
                "the size grows with the square of the context, like the attention pattern; the cache adds "
                "one key and one value per token."),
        Mistake(_scaled(lambda L, T, H, G, D, B: 1 / B),
                "that counts numbers, not bytes: multiply by the bytes each number takes."),
        Mistake(_scaled(lambda L, T, H, G, D, B: 8),
                "that counts bits, not bytes."),
    ),
)
