"""The self-checks of chapters/part1/one-head (lib/chapters/part1/one_head/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

import torch


def test_one_head_value_checks():
    from lib.content.worked_examples import cat_sat
    from lib.chapters.part1.one_head import checks as one_head
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
