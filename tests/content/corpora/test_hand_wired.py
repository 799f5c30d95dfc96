"""The hand-wired corpus (lib.content.corpora.hand_wired): the designed table and its analogies, sentences true of
the table; its exact sentence distribution matches the generator,
and the entropy floor is the sentence entropy per predicted token."""
import random

import numpy as np
import pytest

from lib.analysis.maps import analogy
from lib.content.corpora import hand_wired as hw


def test_the_exact_sentence_distribution_matches_the_generator():
    import collections

    probs = hw.sentence_probabilities()
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(hw.check_sentence(list(s))[0] for s in probs)
    rng = random.Random(7)
    n = 40_000
    counts = collections.Counter(tuple(hw.sample_sentence(rng)) for _ in range(n))
    assert set(counts) <= set(probs)
    # Every sentence kind's share, and the commonest sentences' frequencies, agree within sampling noise.
    for s, c in counts.most_common(20):
        assert abs(c / n - probs[s]) < 4 * np.sqrt(probs[s] / n) + 1e-4, s
    kinds = collections.Counter("class" if s[1] == "a" else "comparison" if len(s) == 9 else "definition" for s in counts.elements())
    assert kinds["definition"] / n == pytest.approx(hw.P_DEFINITION, abs=0.01)
    assert kinds["comparison"] / n == pytest.approx(hw.P_COMPARISON, abs=0.01)

def test_the_entropy_floor_is_the_sentence_entropy_per_predicted_token():
    probs = hw.sentence_probabilities()
    h_sentences = -sum(p * np.log(p) for p in probs.values())
    # Chain rule: the same entropy, summed token by token over the exact next-token distributions.
    h_tokens = 0.0
    for s, p in probs.items():
        for i in range(1, len(s)):
            h_tokens -= p * np.log(hw.next_token_distribution(s[:i])[s[i]])
    assert h_tokens == pytest.approx(h_sentences, rel=1e-9)
    assert hw.mean_targets_per_sentence() == pytest.approx(0.4 * 5 + 0.5 * 8 + 0.1 * 6)
    assert hw.entropy_floor() == pytest.approx(h_sentences / 6.6)
    after_king = hw.next_token_distribution(("<BOS>", "the", "king", "is"))
    assert "younger" not in after_king and "weaker" not in after_king and "female" not in after_king
    assert sum(after_king.values()) == pytest.approx(1.0) and after_king["old"] > 0
    assert hw.next_token_distribution(("<BOS>", "a", "ship", "is", "a")) == {"thing": 1.0}
    assert hw.next_token_distribution(("<BOS>", "the", "banana")) == {}


def test_hand_wired_table_and_its_designed_analogies_hold_in_the_table():
    assert len(hw.WORDS) == 40
    assert {hw.word_class(w) for w in hw.WORDS} == set(hw.CLASSES)
    vecs = {w: row for w, row in zip(hw.WORDS, hw.designed_matrix())}
    for a, b, c, d in hw.ANALOGIES:
        result = analogy(vecs, a, b, c)
        assert result.best == d and result.ranked[0][1] == pytest.approx(1.0), result.describe()

def test_hand_wired_sentences_are_true_of_the_table():
    rng = random.Random(1)
    for _ in range(2000):
        s = hw.sample_sentence(rng)
        ok, why = hw.check_sentence(s)
        assert ok, (s, why)
        assert all(t in hw.TOKENS for t in s)
    assert not hw.check_sentence("<BOS> the king is female <EOS>".split())[0]
