"""The corpora by name (lib.content.corpora): each preset's corpus draws sequences of its own vocabulary within
its length, seeded; options reach the sampler; roles and monitors where the corpus states them; a name or an
option it does not know is one clear line."""
import random

import pytest

from lib.content.corpora import CORPORA, calling_game, get_corpus
from lib.errors import CourseError
from lib.shipped.presets import PRESETS


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_each_corpus_draws_its_own_tokens_within_its_length_and_seeded(name):
    corpus = get_corpus(name)
    assert corpus.name == name
    drawn = [corpus.sample(random.Random(s)) for s in range(50)]
    assert all(set(seq) <= set(corpus.tokens) and 1 < len(seq) <= corpus.max_len for seq in drawn), name
    assert drawn == [corpus.sample(random.Random(s)) for s in range(50)], "the same seed, the same sequences"
    assert len({tuple(seq) for seq in drawn}) > 1
    if corpus.roles is not None:
        assert all(len(corpus.roles(seq)) == len(seq) for seq in drawn)


def test_every_presets_corpus_is_known():
    assert {p.corpus for p in PRESETS.values()} <= set(CORPORA)


def test_options_reach_the_sampler():
    # No wrong calls at all: no round ends with a loser.
    honest = get_corpus("calling-game", {"error_rate": 0.0})
    assert all("perde" not in honest.sample(random.Random(s)) for s in range(200))
    assert get_corpus("calling-game").roles is calling_game.token_roles
    assert get_corpus("hand-wired").roles is None and get_corpus("repeats").monitor is not None
    short = get_corpus("repeats", {"min_period": 4, "max_period": 4, "max_filler": 0})
    assert all(len(set(short.sample(random.Random(s))) - {"<BOS>", "<EOS>", "<PAD>"}) == 4 for s in range(20))


def test_an_unknown_corpus_or_option_is_a_clear_error():
    with pytest.raises(CourseError, match="unknown corpus 'shakespeare'; known: calling-game"):
        get_corpus("shakespeare")
    with pytest.raises(CourseError, match="takes no options"):
        get_corpus("hand-wired", {"size": 3})
