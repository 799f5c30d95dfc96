"""The labelled pronoun set (lib/chapters/part1/ablation/pronouns.py): whole tokens, once each, pairs that differ by
one word and swap the antecedent; the nearest-noun rule is wrong on a fair share of it."""
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
