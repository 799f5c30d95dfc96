"""The why-attention chapter's explorer (lib/chapters/part1/why_attention/explorers.py): the window is a box, the
head is the model's own pattern; every control redraws."""
import numpy as np
import pytest

from explorer_cases import every_control_redraws
from lib.chapters.part1.why_attention.explorers import box_filter, window_explorer
from lib.explorers.registry import REGISTRY

EXAMPLE = "<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice <SEP> Paolo chiama Pietro"


def test_the_window_is_a_box_and_the_head_is_the_models_pattern(lm):
    ex = window_explorer(lm, [EXAMPLE])
    for width in (1, 3, 8):
        v = ex.compute(dict(ex.defaults(), width=width, layer=1, head=2))
        n = len(v["tokens"])
        window = np.array(v["window"])
        assert window[-1].sum() == pytest.approx(1.0) and np.count_nonzero(window[-1]) == min(width, n)
        assert np.count_nonzero(np.triu(window, 1)) == 0, "a causal window reads nothing ahead"
        _, cache = lm.model.run_with_cache(lm.encode(EXAMPLE))
        assert np.allclose(v["pattern"], cache["blocks.1.attn.pattern"][2].numpy(), atol=1e-6)
        last = np.array(v["pattern"][-1])
        assert v["outside"] == pytest.approx(last[:max(0, n - width)].sum()) and v["head_best"] == int(last.argmax())
    assert ex.compute(dict(ex.defaults(), prompt="<BOS> Paolo"))["window"] == box_filter(2, 3)


def test_every_control_redraws():
    for ex in REGISTRY["window_explorer"].examples():
        every_control_redraws(ex)
