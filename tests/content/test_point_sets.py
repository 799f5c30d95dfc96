"""The named point sets the maps lay out (lib.content.point_sets): the calling-game model's embedding rows,
labelled by token and coloured by role, and the real-language rows; both are word sets; an unknown name is
one line naming the sets."""
import numpy as np
import pytest

from lib.content import real_words
from lib.content.corpora.calling_game import ROLES
from lib.content.point_sets import POINT_SETS, WORD_SETS, point_set
from lib.errors import CourseError


def test_the_calling_games_rows_are_its_embedding(lm):
    ps = point_set("calling-game")
    assert ps.labels == tuple(lm.vocab.tokens) and ps.groups == tuple(ROLES[t] for t in lm.vocab.tokens)
    assert np.array_equal(ps.vectors, lm.model.W_E.detach().double().numpy()) and ps.vectors.dtype == np.float64
    assert point_set("calling-game") is ps


def test_the_real_language_rows_and_the_word_sets():
    ps, rows = point_set("real-language"), real_words.load()
    assert ps.labels == tuple(rows.words) and ps.vectors.shape == (84, 384)
    assert set(WORD_SETS) == set(POINT_SETS) and all(POINT_SETS[n] for n in POINT_SETS)
    with pytest.raises(CourseError, match="no point set 'known-clusters'; choose one of: calling-game, real-language"):
        point_set("known-clusters")
