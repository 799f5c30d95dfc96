"""WordPiece: how BERT-style models (MiniLM among them) cut text into tokens.

Two stages, as in the original BERT:

1. **Basic tokenization** cleans and splits the text into words: control characters are dropped
   and every kind of space becomes a plain space; each CJK ideograph stands alone (a word of its
   own); the text is put in Unicode's composed form (NFC), then each word is lower-cased and its
   accents are stripped (decomposed to NFD, combining marks dropped: "Café" -> "cafe"); finally
   every punctuation character is split off as a word of its own ("it's" -> "it", "'", "s"). All
   ASCII characters that are neither letters, digits nor space count as punctuation ("$", "^",
   "`" included), as does everything Unicode calls punctuation.
2. **WordPiece** cuts each word into the longest pieces of the vocabulary, from the left, greedily:
   a piece that continues a word is written with "##" ("playing" -> "play", "##ing"). A word
   with any stretch no piece covers, or longer than 100 characters, becomes a single "[UNK]".

A sentence is then framed as `[CLS] ... [SEP]`. The special tokens written in the text as such
("[MASK]", "[SEP]", ...) are kept whole, as Hugging Face's tokenizers keep them.
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from lib.errors import CourseError, require
from lib.model.vocab import decode_ids

CLS, SEP, PAD, UNK, MASK = "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"
SPECIAL = (PAD, UNK, CLS, SEP, MASK)
MAX_CHARS_PER_WORD = 100   # longer words are [UNK] outright
CONTINUATION = "##"

# CJK Unified Ideographs and their extensions and compatibility blocks: each is a word of its own.
# (Hangul, Hiragana and Katakana are not in these blocks: they are written with spaces.)
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch: str) -> bool:
    # Tab, newline and carriage return are control characters to Unicode but spaces to BERT.
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True   # every ASCII sign that is not a letter, digit or space
    return unicodedata.category(ch).startswith("P")


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK)


def _strip_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


def _split_punctuation(word: str) -> list[str]:
    out, current = [], ""
    for ch in word:
        if is_punctuation(ch):
            if current:
                out.append(current)
            out.append(ch)
            current = ""
        else:
            current += ch
    if current:
        out.append(current)
    return out


def basic_words(text: str, lower: bool = True) -> list[str]:
    """Stage 1: the text as words (lower-cased, accents stripped, punctuation split off)."""
    cleaned = []
    for ch in text:
        if ch == "\0" or ch == "\ufffd" or is_control(ch):
            continue          # NUL, the replacement character and control characters are dropped
        if is_whitespace(ch):
            cleaned.append(" ")
        elif is_cjk(ch):
            cleaned.append(f" {ch} ")
        else:
            cleaned.append(ch)
    words = []
    for word in unicodedata.normalize("NFC", "".join(cleaned)).split():
        if lower:
            word = _strip_accents(word.lower())
        words.extend(_split_punctuation(word))
    return [w for w in " ".join(words).split()]


class WordPiece:
    """The tokenizer of a vocabulary file (one token per line; the line number is the id)."""

    def __init__(self, tokens: list[str], lower: bool = True):
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}
        missing = [t for t in SPECIAL if t not in self.index]
        require(not missing, f"the vocabulary lacks the special tokens {' '.join(missing)}")
        self.lower = lower
        self._special = re.compile("(" + "|".join(re.escape(t) for t in SPECIAL) + ")")

    @classmethod
    def from_file(cls, path: Path, lower: bool = True) -> "WordPiece":
        lines = Path(path).read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return cls([line.rstrip("\r") for line in lines], lower)

    def __len__(self) -> int:
        return len(self.tokens)

    def pieces(self, word: str) -> list[str]:
        """Stage 2 for one word: its longest-first pieces, or [UNK]."""
        if len(word) > MAX_CHARS_PER_WORD:
            return [UNK]
        out, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else CONTINUATION + word[start:end]
                if piece in self.index:
                    break
                end -= 1
            else:
                return [UNK]          # no piece covers word[start]: the whole word is unknown
            out.append(piece)
            start = end
        return out

    def tokenize(self, text: str) -> list[str]:
        """The WordPiece tokens of `text`, without [CLS] and [SEP]."""
        require(isinstance(text, str), f"a text is a string, got {type(text).__name__}")
        out = []
        for part in self._special.split(text):
            if part in SPECIAL:
                out.append(part)
            elif part:
                for word in basic_words(part, self.lower):
                    out.extend(self.pieces(word))
        return out

    def encode(self, text: str, max_tokens: int | None = None) -> list[int]:
        """`[CLS] tokens [SEP]` as ids. Empty text, or more than `max_tokens` in all, is refused."""
        tokens = self.tokenize(text)
        require(len(tokens) > 0, "the text is empty: give at least one word" if not text.strip() else
                f"the text {text!r} has no tokens (only characters the tokenizer drops)")
        ids = [self.index[CLS]] + [self.index[t] for t in tokens] + [self.index[SEP]]
        if max_tokens is not None and len(ids) > max_tokens:
            raise CourseError(f"the text is {len(ids)} WordPiece tokens long with [CLS] and [SEP], but the model "
                              f"reads at most {max_tokens}: shorten it")
        return ids

    def decode(self, ids) -> list[str]:
        return decode_ids(self.tokens, ids)
