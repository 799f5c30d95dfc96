"""The hand-worked chapters' explorers in a kernel (why-attention, bigrams, one-head, many-heads, each in
its unit's explorers.py): what their views hold, checked against the library's own computations, and
every control of their widgets moved.

Their page twins are held to these views with every other explorer's in tests/browser/test_site_model.py.
"""
import math

import numpy as np
import pytest
import torch

from lib.chapters.part1.bigrams.explorers import bigram_explorer, counted_table
from lib.chapters.part1.many_heads.explorers import heads_explorer
from lib.chapters.part1.one_head.explorers import cat_sat_explorer
from lib.chapters.part1.why_attention.explorers import box_filter, window_explorer
from lib.explorers.registry import REGISTRY, entries

HAND = (window_explorer, bigram_explorer, cat_sat_explorer, heads_explorer)
EXAMPLE = "<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice <SEP> Paolo chiama Pietro"


def test_the_registry_holds_them():
    entries()               # every unit's explorers loaded, as every test of every explorer loads them
    assert all(REGISTRY[make.__name__].make is make for make in HAND)


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


def test_the_bigram_view_reads_the_last_token_alone_and_the_counted_table(zero_layer):
    zl = zero_layer
    ex = bigram_explorer(zl, ["<BOS> Pietro chiama Paolo"])
    tokens, table, pairs = counted_table()
    a = ex.compute(dict(ex.defaults(), prompt="<BOS> Pietro chiama Paolo"))
    b = ex.compute(dict(ex.defaults(), prompt="<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo"))
    assert a["last"] == b["last"] == "Paolo" and a["pairs"] > 0
    assert [r["token"] for r in a["rows"]] == [r["token"] for r in b["rows"]], "no position embeddings: only Paolo counts"
    for r, s in zip(a["rows"], b["rows"]):
        assert r["model"] == pytest.approx(s["model"], abs=1e-6)
        assert r["table"] == table[tokens.index("Paolo")][tokens.index(r["token"])] > 0
    assert [r["table"] for r in a["rows"]] == sorted((r["table"] for r in a["rows"]), reverse=True)
    early = ex.compute(dict(ex.defaults(), prompt="<BOS> Pietro chiama Paolo", position="1"))
    assert early["last"] == "Pietro" and early["position"] == 1
    assert a["gap"] < 0.05, "the zero-layer model learned the table"
    unseen = next(t for t, n in zip(tokens, pairs) if n == 0)
    v = ex.compute(dict(ex.defaults(), prompt=f"<BOS> {unseen}"))
    assert v["pairs"] == 0 and v["gap"] is None and len(v["rows"]) == 10


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


def test_without_positions_layer_0_reads_words_not_places(lm):
    ex = heads_explorer(lm, [EXAMPLE])
    swapped = EXAMPLE.replace("chiama 5 <SEP> 5 chiama Paolo", "chiama Paolo <SEP> 5 chiama 5")
    words, other = EXAMPLE.split(), swapped.split()
    for positions_off in (True, False):
        a = ex.compute(dict(ex.defaults(), no_positions=positions_off))
        b = ex.compute(dict(ex.defaults(), no_positions=positions_off, prompt=swapped))
        moved = []
        for h in range(4):
            # The last row's weight on each word, summed over its places: the same bag of words.
            bag = lambda v, toks: {t: sum(p for t2, p in zip(toks, v["patterns"][h][-1]) if t2 == t) for t in set(toks)}
            x, y = bag(a, words), bag(b, other)
            moved.append(max(abs(x[t] - y[t]) for t in x))
        assert (max(moved) < 1e-5) == positions_off, (positions_off, moved)
        assert 0 < a["spread"] < 1 and len(a["patterns"]) == 4


def test_every_control_of_their_widgets_redraws(lm):
    """Each control moved in a kernel: a new picture and no message; a bad value: a message, the picture kept."""
    for ex in [e for make in HAND for e in REGISTRY[make.__name__].examples()]:
        box = ex.widget()
        for c in ex.controls:
            before = box.figure.data
            w = box.controls[c.name]
            if c.kind == "toggle":
                w.value = not w.value
            elif c.kind == "choice":
                w.value = c.options[(c.options.index(c.default) + 1) % len(c.options)]
            elif c.kind == "prompt":
                w.value = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama"
            elif c.name == "position":
                w.value = "1"
            else:
                w.value = "0.5 -1 2 0 1"
            assert box.message.value == "" and box.figure.data != before, (ex.view, c.name)
        if any(c.name == "prompt" for c in ex.controls):
            kept = box.figure.data
            box.controls["prompt"].value = "<BOS> Pietro chiamma"
            assert "unknown token 'chiamma'" in box.message.value and box.figure.data == kept
        if ex.view == "cat_sat":
            kept = box.figure.data
            box.controls["embed_the"].value = "1 2"
            assert "must be 5 numbers" in box.message.value and box.figure.data == kept
