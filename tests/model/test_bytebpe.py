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


def test_the_display_rule():
    """A token's bytes as UTF-8, each byte of a stretch the strict decoder cannot decode as <0xHH>, special
    tokens as their names (the rule the page's tokenizer mirrors: lib.model.bytebpe)."""
    from lib.model.bytebpe import show_bytes as shown
    assert shown(" \xe6\x97".encode("latin-1")) == " <0xE6><0x97>"        # a valid start cut short: one stretch
    assert shown(b"a\xff\xfeb") == "a<0xFF><0xFE>b" and shown(b"\xc3\xa9") == "é" and shown(b"") == ""
    assert shown(b"\xe6\x97\xa5\xe6") == "日<0xE6>" and shown(b"\x80abc") == "<0x80>abc"
    # Python's error ranges: an invalid continuation ends the stretch before it
    assert shown(b"\xe6\x41") == "<0xE6>A" and shown(b"\xf0\x9f\x98") == "<0xF0><0x9F><0x98>"
    bpe = tokenizer([])
    assert bpe.decode(bpe.encode("é")) == ["<0xC3>", "<0xA9>"] and bpe.to_text(bpe.encode("é")[:1]) == "<0xC3>"


def test_a_character_whose_byte_has_no_token_is_named():
    bpe = ByteBPE([c for b, c in byte_alphabet().items() if b != 0x04] + ["<|x|>"], [], [255])
    with pytest.raises(CourseError, match=r"cannot write '\\x04' \(U\+0004\): its byte 0x04 is no token") as e:
        bpe.encode("ok \x04")
    assert "merges" not in str(e.value)
    with pytest.raises(CourseError, match="half of a surrogate pair"):
        bpe.encode("caf\udce9")
