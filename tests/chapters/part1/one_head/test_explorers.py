"""The one-head chapter's explorer (lib/chapters/part1/one_head/explorers.py): the cat-sat head is the chapter's
head, scaled or not, in any order; a bad embedding says what is allowed; every control redraws."""
import numpy as np
import pytest
import torch

from explorer_cases import every_control_redraws
from lib.chapters.part1.one_head.explorers import cat_sat_explorer
from lib.errors import CourseError
from lib.explorers.registry import REGISTRY


def test_the_cat_sat_head_is_the_chapters_head():
    from lib.content.worked_examples import cat_sat

    ex = cat_sat_explorer()
    chapter = cat_sat()
    _, cache = chapter.model.run_with_cache(chapter.tokens)
    v = ex.compute(ex.defaults())
    assert np.allclose(v["pattern"], cache["blocks.0.attn.pattern"][0].numpy(), atol=1e-6)
    assert np.allclose(v["stream"], cache["resid_final"][-1].numpy(), atol=1e-6)
    assert v["scores"][0][1] is None and v["scores"][2][0] == pytest.approx(float(cache["blocks.0.attn.scores"][0, 2, 0]))
    raw = ex.compute(dict(ex.defaults(), scaled=False))
    expected = torch.softmax(cache["blocks.0.attn.qk"][0, 2].double(), -1)
    assert np.allclose(raw["pattern"][2], expected.numpy(), atol=1e-6)
    swapped = ex.compute(dict(ex.defaults(), order="cat the sat"))
    assert swapped["pattern"][2] == pytest.approx([v["pattern"][2][1], v["pattern"][2][0], v["pattern"][2][2]])
    assert swapped["write"] == pytest.approx(v["write"]), "one head cannot see order"
    # A bigger embedding for cat: sat's query scores it differently.
    bigger = ex.compute(dict(ex.defaults(), embed_cat="2 2 2 2 2"))
    assert bigger["pattern"][2][1] != pytest.approx(v["pattern"][2][1])

@pytest.mark.parametrize("text", ["1 2 3 4", "1 2 3 4 5 6", "a b c d e", "1 2 3 4 nan", "0 0 0 0 11", "", "inf 0 0 0 0"])
def test_a_bad_embedding_says_what_is_allowed(text):
    from lib.errors import CourseError

    ex = cat_sat_explorer()
    with pytest.raises(CourseError, match=r"the embedding of cat must be 5 numbers from -10 to 10, separated by spaces"):
        ex.compute(dict(ex.defaults(), embed_cat=text))


def test_every_control_redraws_and_a_bad_embedding_keeps_the_picture():
    for ex in REGISTRY["cat_sat_explorer"].examples():
        box = every_control_redraws(ex)
        kept = box.figure.data
        box.controls["embed_the"].value = "1 2"
        assert "must be 5 numbers" in box.message.value and box.figure.data == kept
