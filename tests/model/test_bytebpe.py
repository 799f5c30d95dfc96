"""The byte-level BPE (lib.model.bytebpe) on a small vocabulary made here: each step on its own.

The real vocabulary (SmolLM2's 49,152 tokens) is held to Hugging Face's tokenizer in test_smollm2.py;
these need no package and show the rules one at a time: the byte alphabet, SmolLM2's chunks, merges in
their rank order, special tokens kept whole, and tokens shown as text.
"""
import pytest

from lib.errors import CourseError
from lib.model.bytebpe import ByteBPE, byte_alphabet

ALPHABET = byte_alphabet()
SPECIAL = "<|end|>"


def tokenizer(merges):
    """Every byte, the tokens the merges make, and one special token (last)."""
    vocab = [ALPHABET[b] for b in range(256)]
    for m in merges:
        left, right = m.split(" ")
        if left + right not in vocab:
            vocab.append(left + right)
    return ByteBPE(vocab + [SPECIAL], merges, special=[len(vocab)])


def test_the_byte_alphabet_spells_every_byte_with_one_printable_character():
    assert len(set(ALPHABET.values())) == 256 and all(c.isprintable() for c in ALPHABET.values())
    assert ALPHABET[ord(" ")] == "Ġ" and ALPHABET[ord("\n")] == "Ċ" and ALPHABET[ord("a")] == "a"
    assert [ALPHABET[b] for b in "é".encode()] == ["Ã", "©"]


def test_chunks_isolate_numbers_then_follow_gpt2():
    bpe = tokenizer([])
    assert bpe.chunks("I'll pay 2024 dollars  now\n") == \
        ["I", "'ll", " pay", " ", "2", "0", "2", "4", " dollars", " ", " now", "\n"]
    assert bpe.chunks("x² Ⅻ") == ["x", "²", " ", "Ⅻ"]          # every \p{N}, not only 0-9
    assert bpe.chunks(f"a{SPECIAL}b") == ["a", SPECIAL, "b"]


def test_merges_apply_best_rank_first():
    assert tokenizer(["l l", "h e", "he ll", "l o"]).tokenize("hello") == ["hell", "o"]
    assert tokenizer(["l o", "h e", "he l", "l l"]).tokenize("hello") == ["hel", "lo"]
    # Every occurrence of the best pair is joined in one sweep.
    assert tokenizer(["a a"]).tokenize("aaaaa") == ["aa", "aa", "a"]


def test_nothing_is_unknown_and_text_comes_back_whole():
    bpe = tokenizer(["Ġ c", "Ġc a"])
    text = " café 😀\t"
    ids = bpe.encode(text)
    assert bpe.tokenize(" ca")[0] == "Ġca" and bpe.to_text(ids) == text
    shown = bpe.decode(bpe.encode("é"))
    assert shown == ["<0xC3>", "<0xA9>"]                         # half a character each, shown as its byte
    assert bpe.decode(bpe.encode(SPECIAL)) == [SPECIAL]


def test_a_token_is_named_by_its_text_with_its_space():
    bpe = tokenizer(["Ġ c", "Ġc a"])
    assert bpe.id(" ca") == bpe.index["Ġca"] and " ca" in bpe and "ca" not in bpe
    with pytest.raises(CourseError, match=r"'cab' is not one token .*'c' \+ 'a' \+ 'b'"):
        bpe.id("cab")


def test_a_bad_merge_list_is_refused():
    with pytest.raises(CourseError, match="two tokens separated by one space"):
        ByteBPE(["a", "b"], ["ab"])
