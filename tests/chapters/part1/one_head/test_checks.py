"""The self-checks of chapters/part1/one-head (lib/chapters/part1/one_head/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

import torch

from lib.chapters.part1.one_head import checks as one_head


def test_one_head_value_checks():
    from lib.content.worked_examples import cat_sat
    ex = cat_sat()
    _, cache = ex.model.run_with_cache(ex.tokens)
    raw = cache["blocks.0.attn.qk"][0, 2, :3].double()
    right = float(torch.softmax(raw, -1)[1])
    assert one_head.sat_on_cat_unscaled(right) and one_head.sat_on_cat_unscaled(right + 0.002)
    scaled = float(cache["blocks.0.attn.pattern"][0, 2, 1])
    assert "divided by sqrt(d_head)" in one_head.sat_on_cat_unscaled(scaled).message
    assert "too high" in one_head.sat_on_cat_unscaled(float(torch.softmax(raw, -1)[2])).message
    assert not one_head.sat_on_cat_unscaled(...).answered
    import math as m
    e = [m.exp(s / m.sqrt(8)) for s in (1, 1, 2)]
    assert one_head.abc_self_weight(e[2] / sum(e))
    d2 = [m.exp(s / m.sqrt(2)) for s in (1, 1, 2)]
    assert "too high" in one_head.abc_self_weight(d2[2] / sum(d2)).message        # d_head left at 2
    assert "too low" in one_head.abc_self_weight(1 / 3).message                   # a uniform guess


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def causal_mask(T):
    return torch.tril(torch.ones(T, T)).bool()


def one_head_right(x, W_Q, W_K, W_V, W_O):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    scores = q @ k.T / W_Q.shape[1] ** 0.5
    T = x.shape[0]
    scores = scores.masked_fill(torch.triu(torch.ones(T, T), 1).bool(), float("-inf"))
    pattern = torch.softmax(scores, dim=-1)
    return pattern, pattern @ v @ W_O


def head_no_scale(x, W_Q, W_K, W_V, W_O):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    T = x.shape[0]
    scores = (q @ k.T).masked_fill(torch.triu(torch.ones(T, T), 1).bool(), float("-inf"))
    pattern = torch.softmax(scores, -1)
    return pattern, pattern @ v @ W_O


def head_no_mask(x, W_Q, W_K, W_V, W_O):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    pattern = torch.softmax(q @ k.T / W_Q.shape[1] ** 0.5, -1)
    return pattern, pattern @ v @ W_O


def head_wrong_axis(x, W_Q, W_K, W_V, W_O):
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    T = x.shape[0]
    scores = (q @ k.T / W_Q.shape[1] ** 0.5).masked_fill(torch.triu(torch.ones(T, T), 1).bool(), float("-inf"))
    pattern = torch.softmax(scores, 0)
    return pattern, pattern @ v @ W_O


def head_no_W_O(x, W_Q, W_K, W_V, W_O):
    pattern, _ = one_head_right(x, W_Q, W_K, W_V, W_O)
    return pattern, pattern @ (x @ W_V)


WRITE_CHECKS = {
    "causal_mask": (one_head.causal_mask, causal_mask, [
        (lambda T: torch.ones(T, T).bool(), "the future is not masked"),
        (lambda T: torch.triu(torch.ones(T, T)).bool(), "wrong way round"),
        (lambda T: torch.tril(torch.ones(T, T), -1).bool(), "not even itself"),
        (lambda T: ~torch.tril(torch.ones(T, T)).bool(), "True exactly where a query may not look"),
    ]),
    "one_head": (one_head.one_head, one_head_right, [
        (head_no_scale, "not divided by sqrt(d_head)"),
        (head_no_mask, "row 0 gives weight to position 1: the future is not masked"),
        (head_wrong_axis, "the softmax runs over the wrong axis"),
        (head_no_W_O, "through W_O"),
    ]),
}
