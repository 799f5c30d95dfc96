"""MiniLM's pronoun heads (lib.chapters.part1.ablation.pronoun_heads) on its labelled set (lib.chapters.part1.ablation.pronouns).

The set is checked (whole tokens, once each, pairs that differ by one word), the split keeps the
selection and report halves apart, and every registered conclusion is re-measured on split seeds
the pages never use (the pages use seed 0).
"""
import pytest

from lib.chapters.part1.ablation import pronoun_heads
from lib.chapters.part1.ablation.pronouns import ITEMS, PAIRS, SINGLES
from lib.model import minilm

pytestmark = pytest.mark.skipif(minilm.package_dir() is None, reason=f"{minilm.PACKAGE} is not installed")


@pytest.fixture(scope="module")
def lm(minilm_model):
    """The session's MiniLM (tests/conftest.py), under this file's name for it."""
    return minilm_model


def test_the_set_is_labelled_as_it_says(lm):
    assert len(SINGLES) >= 40 and len(PAIRS) >= 20
    for it in ITEMS:
        tokens = lm.tokens(it.sentence)
        for word in (it.pronoun, it.antecedent, *it.others):
            assert tokens.count(word) == 1, f"{word!r} is not one whole token, once, in {it.sentence!r}"
    for first, second in zip(PAIRS[::2], PAIRS[1::2]):
        a, b = first.sentence.split(), second.sentence.split()
        assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1, (first.sentence, second.sentence)
        assert first.antecedent != second.antecedent and first.antecedent in second.others
    # The nearest-noun rule is a baseline, not the answer: it is wrong on a fair share of the set.
    enc = pronoun_heads.encode(lm)
    wrong = sum(pronoun_heads.nearest_noun(enc, i) != enc.antecedent[i] for i in range(len(ITEMS)))
    assert wrong >= 20


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


def test_bank_moves_apart_through_the_layers(lm):
    from lib.chapters.part2.real_language.contextual import separation
    from lib.chapters.part2.real_language.senses import BANK_SENSES
    s = separation(lm, "bank", BANK_SENSES)
    assert s.n == 16 and s.stages == lm.cfg.n_layers + 1
    gaps = [w - a for w, a in zip(s.within, s.across)]
    assert gaps[-1] > 5 * gaps[0], gaps
    assert s.correct[-1] == s.n, s.correct


def test_the_pronoun_view_counts_every_head(lm):
    v = pronoun_heads.pronoun_view(lm, "The cat sat on the mat because it was tired.", "it")
    assert v.tokens[v.pronoun] == "it" and v.strongest.shape == (6, 12)
    assert sum(v.heads_on(t) for t in set(v.tokens)) == 72
    assert v.heads_on("[SEP]") == v.heads_on(".") == v.heads_on("it") == 0
    assert ((v.special_share() >= 0) & (v.special_share() <= 1 + 1e-6)).all()
