"""The bigrams chapter's explorer (lib/chapters/part1/bigrams/explorers.py): the view reads the last token alone,
beside the counted table; every control redraws."""
import pytest

from explorer_cases import every_control_redraws
from lib.chapters.part1.bigrams.explorers import bigram_explorer, counted_table
from lib.explorers.registry import REGISTRY


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


def test_every_control_redraws():
    for ex in REGISTRY["bigram_explorer"].examples():
        every_control_redraws(ex)
