"""A word-level vocabulary (lib.model.vocab): a prompt is its words, each looked up; an unknown word is named
with the closest known ones, case aside; a vocabulary that is not a list of distinct words is refused."""
import pytest

from lib.errors import CourseError
from lib.model.vocab import BOS, SPECIALS, Vocabulary, decode_ids

GAME = Vocabulary([*SPECIALS, "Pietro", "Paolo", "chiama", "Tarso"])


def test_a_prompt_is_its_words_each_looked_up_and_back():
    ids = GAME.encode("  <BOS> Pietro\tchiama\nPaolo ")
    assert GAME.decode(ids) == [BOS, "Pietro", "chiama", "Paolo"] and GAME.to_text(ids) == "<BOS> Pietro chiama Paolo"
    assert GAME.encode(["Pietro", "Tarso"]) == GAME.encode("Pietro Tarso") == [4, 7]
    assert len(GAME) == 8 and "Tarso" in GAME and "tarso" not in GAME and list(GAME) == GAME.to_list()


def test_an_unknown_word_is_named_with_the_closest_known_ones():
    with pytest.raises(CourseError) as e:
        GAME.encode("<BOS> pietro chiama")
    assert "unknown token 'pietro'" in str(e.value) and "did you mean 'Pietro'" in str(e.value)
    with pytest.raises(CourseError) as e:
        GAME.id("zzz")
    assert "did you mean" not in str(e.value) and "Tarso" in str(e.value), "nothing close: the tokens are listed"


@pytest.mark.parametrize("text, says", [("   ", "empty"), ([], "empty"), (42, "got int")])
def test_an_empty_or_odd_prompt_is_one_line(text, says):
    with pytest.raises(CourseError, match=says):
        GAME.encode(text)


@pytest.mark.parametrize("tokens, says", [("abc", "not one string"), (["a", "b c"], "without white space"),
                                          (["a", ""], "non-empty"), (["a", "b", "a"], "lists 'a' twice")])
def test_a_vocabulary_of_distinct_words_only(tokens, says):
    with pytest.raises(CourseError, match=says):
        Vocabulary(tokens)


def test_an_id_outside_the_vocabulary_is_named():
    assert decode_ids(["x", "y"], [1, 0]) == ["y", "x"]
    with pytest.raises(CourseError, match=r"token id 8 is outside the vocabulary \(0 to 7\)"):
        GAME.decode([8])
    with pytest.raises(CourseError, match="token id -1"):
        GAME.decode([-1])
