"""The self-checks of chapters/part1/shapes-and-cache (lib/chapters/part1/shapes_and_cache/checks.py): each
accepts the right answer and names the typical mistakes, without giving the answer away."""
from lib.chapters.part1.shapes_and_cache import checks as shapes_and_cache


def test_shapes_and_cache_value_checks():
    # GPT-2 small: 2 x 12 layers x 12 heads x 64 numbers x 2 bytes = 36,864 bytes per token.
    assert 10**9 // 36864 == 27126
    assert shapes_and_cache.gpt2_tokens_in_budget(27126) and shapes_and_cache.gpt2_tokens_in_budget(27126.0)
    assert "only the keys" in shapes_and_cache.gpt2_tokens_in_budget(54253).message
    assert "32-bit" in shapes_and_cache.gpt2_tokens_in_budget(13563).message
    assert "round down" in shapes_and_cache.gpt2_tokens_in_budget(27127).message
    assert "too low" in shapes_and_cache.gpt2_tokens_in_budget(1024).message       # the context, not the budget
    assert "whole number" in shapes_and_cache.gpt2_tokens_in_budget(27126.5).message
    assert "whole number" in shapes_and_cache.gpt2_tokens_in_budget("lots").message
    share = 32_000 * 4_096 / 6_738_415_616
    assert shapes_and_cache.seven_b_embedding_share(share)
    assert "W_U" in shapes_and_cache.seven_b_embedding_share(2 * share).message
    assert "GPT-2 small's share" in shapes_and_cache.seven_b_embedding_share(38_597_376 / 124_439_808).message
    assert "percentage" in shapes_and_cache.seven_b_embedding_share(100 * share).message


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def kv_cache_size(layers, context, heads, group, d_head, bytes_per_number):
    return 2 * layers * context * (heads // group) * d_head * bytes_per_number


WRITE_CHECKS = {
    "kv_cache_size": (shapes_and_cache.kv_cache_size, kv_cache_size, [
        (lambda L, T, H, G, D, B: 2 * L * T * H * D * B, "without sharing"),      # the page's formula
        (lambda L, T, H, G, D, B: 2 * L * T * H * G * D * B, "not larger"),
        (lambda L, T, H, G, D, B: 2 * L * T * H / (G * G) * D * B, "once too often"),
        (lambda L, T, H, G, D, B: L * T * H // G * D * B, "half the cache"),
        (lambda L, T, H, G, D, B: 2 * T * H // G * D * B, "number of layers"),
        (lambda L, T, H, G, D, B: 2 * L * T * H // G * D, "counts numbers, not bytes"),
        (lambda L, T, H, G, D, B: 3 * L * T * H // G * D * B, "queries"),
    ]),
}


# ------------------------------------------------------------------ SmolLM2's shapes, read from its file's header
