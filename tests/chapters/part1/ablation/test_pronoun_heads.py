"""MiniLM's pronoun heads (lib.chapters.part1.ablation.pronoun_heads) on its labelled set (tests of the set itself:
test_pronouns.py).

The split keeps the selection and report halves apart, special tokens and punctuation are never keys, every
registered conclusion is re-measured on split seeds the pages never use (the pages use seed 0), and the view
counts every head.
"""
import pytest

from lib.chapters.part1.ablation import pronoun_heads
from lib.chapters.part1.ablation.pronouns import ITEMS
from lib.model import minilm

pytestmark = pytest.mark.skipif(minilm.package_dir() is None, reason=f"{minilm.PACKAGE} is not installed")


@pytest.fixture(scope="module")
def lm(minilm_model):
    """The session's MiniLM (tests/conftest.py), under this file's name for it."""
    return minilm_model


@pytest.mark.parametrize("seed", [0, 5, 123])
def test_the_halves_are_apart_and_pairs_stay_together(seed):
    select, report = pronoun_heads.split(ITEMS, seed)
    assert set(select).isdisjoint(report) and sorted(select + report) == list(range(len(ITEMS)))
    assert abs(len(select) - len(report)) <= 2
    for half in (select, report):
        pairs = [ITEMS[i].pair for i in half if ITEMS[i].pair is not None]
        assert all(pairs.count(p) == 2 for p in pairs)


def test_special_tokens_and_punctuation_are_not_eligible_keys():
    assert not any(map(pronoun_heads.is_eligible_key, ["[CLS]", "[SEP]", "[PAD]", ".", ",", "'", "--"]))
    assert all(map(pronoun_heads.is_eligible_key, ["cat", "##s", "it", "3"]))


def test_the_pronoun_claims_are_registered_and_hold_on_a_split_the_page_never_uses():
    from lib import claims
    ids = [c.id for c in claims.claims("ablation") if c.id.startswith("ablation.minilm-")]
    assert len(ids) == 4
    f = claims.registry.measure(ids[0], 7)
    assert f["n"] > 0 and f["lo"] <= f["hi"] <= f["n"]
    failed = [i for i in ids if not claims.holds(i, 7)]
    assert not failed, failed


def test_the_pronoun_view_counts_every_head(lm):
    v = pronoun_heads.pronoun_view(lm, "The cat sat on the mat because it was tired.", "it")
    assert v.tokens[v.pronoun] == "it" and v.strongest.shape == (6, 12)
    assert sum(v.heads_on(t) for t in set(v.tokens)) == 72
    assert v.heads_on("[SEP]") == v.heads_on(".") == v.heads_on("it") == 0
    assert ((v.special_share() >= 0) & (v.special_share() <= 1 + 1e-6)).all()
