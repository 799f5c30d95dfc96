"""WordPiece (lib.model.wordpiece) on a vocabulary small enough to read: each rule of the two stages, and the
mistakes named. (MiniLM's own vocabulary is held token for token to both of Hugging Face's BERT tokenizers
in test_minilm.py.)"""
import pytest

from lib.errors import CourseError
from lib.model.wordpiece import MAX_CHARS_PER_WORD, SPECIAL, UNK, WordPiece, basic_words

VOCAB = [*SPECIAL, "play", "##ing", "##s", "pla", "##y", "it", "'", "s", "cafe", "un", "##believ", "##able", "!", "水", "a"]


@pytest.fixture(scope="module")
def wp():
    return WordPiece(VOCAB)


def test_basic_words_clean_lower_strip_accents_and_split_punctuation():
    assert basic_words("It's  Café!") == ["it", "'", "s", "cafe", "!"]
    assert basic_words("It's", lower=False) == ["It", "'", "s"]
    assert basic_words("a\tb\u00a0c\x07d") == ["a", "b", "cd"], "spaces of every kind split, control characters go"
    assert basic_words("水a") == ["水", "a"], "an ideograph is a word of its own"
    assert basic_words("$5^`") == ["$", "5", "^", "`"], "ASCII symbols count as punctuation"
    assert basic_words("e\u0301") == ["e"], "composed, then the accent stripped"


def test_pieces_are_the_longest_from_the_left(wp):
    assert wp.pieces("playing") == ["play", "##ing"]
    assert wp.pieces("plays") == ["play", "##s"], "play, not pla + ##y: the longest first"
    assert wp.pieces("unbelievable") == ["un", "##believ", "##able"]
    assert wp.pieces("playx") == [UNK], "a stretch no piece covers makes the whole word unknown"
    assert wp.pieces("a" * (MAX_CHARS_PER_WORD + 1)) == [UNK]


def test_special_tokens_stay_whole_and_a_sentence_is_framed(wp):
    assert wp.tokenize("it [MASK] playing!") == ["it", "[MASK]", "play", "##ing", "!"]
    ids = wp.encode("Playing")
    assert wp.decode(ids) == ["[CLS]", "play", "##ing", "[SEP]"] and len(wp) == len(VOCAB)


def test_bad_text_and_vocabularies_are_one_clear_line(wp, tmp_path):
    with pytest.raises(CourseError, match="the text is empty"):
        wp.encode("   ")
    with pytest.raises(CourseError, match="has no tokens"):
        wp.encode("\x07")
    with pytest.raises(CourseError, match="at most 3"):
        wp.encode("playing it", max_tokens=3)
    with pytest.raises(CourseError, match="a text is a string"):
        wp.tokenize(42)
    with pytest.raises(CourseError, match=r"lacks the special tokens \[MASK\]"):
        WordPiece([t for t in VOCAB if t != "[MASK]"])
    path = tmp_path / "vocab.txt"
    path.write_text("\r\n".join(VOCAB) + "\r\n", encoding="utf-8")
    assert WordPiece.from_file(path).tokens == VOCAB, "one token a line, Windows line ends read too"
