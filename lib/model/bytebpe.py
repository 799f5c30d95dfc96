"""Byte-level BPE: how GPT-2, Llama 3 and SmolLM2 cut text into tokens.

Where the toy's vocabulary is a list of whole words and MiniLM's WordPiece cuts words into the longest
pieces it knows (`lib.model.wordpiece`), a byte-level BPE works on the text's UTF-8 bytes, so no text
is ever unknown: at worst a character becomes its bytes, one token each. Four steps:

1. **Special tokens** written in the text (`<|im_start|>`, `<|endoftext|>`, ...) are kept whole and
   never cut, as Hugging Face's tokenizers keep them.
2. **Pre-tokenization** splits the rest into chunks that no token may cross. SmolLM2's rule (llama.cpp
   calls it "smollm"; its Hugging Face tokenizer writes it as `Digits(individual_digits=True)` then
   GPT-2's `ByteLevel`) first isolates every number character (`\\p{N}`: "2024" is four chunks), then
   applies GPT-2's pattern: an English contraction ('s 't 're 've 'm 'll 'd), a run of letters with
   at most one space before it, a run of numbers likewise, a run of other signs likewise, and runs of
   white space (the last space before a word is left to that word: " the" is one chunk).
3. **Bytes as characters.** Each chunk's bytes are written with GPT-2's table of 256 printable
   characters (a space is "Ġ", a newline "Ċ", the two bytes of "é" are "Ã©"), the alphabet the
   vocabulary and the merges are spelled in.
4. **Merges.** Within a chunk, starting from single bytes, the adjacent pair that comes first in the
   merge list is joined, again and again, until no listed pair is left. The pieces are the tokens.

Tokens are shown to a reader as the text their bytes spell (" Paris", with its leading space); a token
that holds part of a character's bytes shows those bytes, each as `<0xHH>` (`show_bytes`: " \xe6\x97" is
" <0xE6><0x97>"), so that three fragments of three characters do not all read "\ufffd". That is the display
rule, used wherever a token or a text is shown (the command line, the chapters, the page's tokenizer); a run
of tokens is shown as one text decoded from its joined bytes (`to_text`), so a character split over tokens is
whole again. A text that holds a lone surrogate (bytes a terminal could not decode), or a character with a
byte the vocabulary has no token for, is refused in one line naming it.
"""
from __future__ import annotations

import codecs
import functools
from typing import Iterable, Sequence

import regex

from lib.errors import CourseError, require
from lib.messages import say

# GPT-2's pre-tokenizer pattern (tokenizers' ByteLevel), as SmolLM2 uses it after isolating numbers.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
NUMBER = r"\p{N}"


@functools.lru_cache(maxsize=1)
def byte_alphabet() -> dict[int, str]:
    """GPT-2's map from each byte to a printable character: the printable Latin-1 bytes stand for
    themselves, the other 68 (controls, space, ...) are moved to characters from U+0100 on."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


def _as_bytes(error: UnicodeDecodeError):
    """A codecs error handler: each byte of an undecodable stretch written as <0xHH>."""
    return "".join(f"<0x{b:02X}>" for b in error.object[error.start:error.end]), error.end


codecs.register_error("course-bytes", _as_bytes)


def show_bytes(data: bytes) -> str:
    """Bytes as a reader sees them: the UTF-8 they spell, each byte of a stretch that is no character as <0xHH>
    (the stretches are those of Python's strict decoder, Unicode's "maximal subparts"; the page's twin,
    lib/explorers/js/smollm2/tokenizer.js `showBytes`, cuts the same)."""
    return bytes(data).decode("utf-8", errors="course-bytes")


class ByteBPE:
    """A byte-level BPE tokenizer from its vocabulary (spelled in the byte alphabet), its merges
    ("left right", best first) and the ids of its special tokens."""

    def __init__(self, vocab: Sequence[str], merges: Iterable[str], special: Iterable[int] = ()):
        self.spelled = list(vocab)
        self.index = {t: i for i, t in enumerate(self.spelled)}
        require(len(self.index) == len(self.spelled), "the vocabulary lists a token twice")
        self.ranks = {}
        for rank, merge in enumerate(merges):
            left, sep, right = merge.partition(" ")
            require(sep == " " and left and right, f"a merge is two tokens separated by one space, got {merge!r}")
            self.ranks.setdefault((left, right), rank)
        self.special = {self.spelled[i]: i for i in special}
        # Longest first, so that a special token containing another is matched whole.
        names = sorted(self.special, key=len, reverse=True)
        self._special = regex.compile("(" + "|".join(regex.escape(n) for n in names) + ")") if names else None
        self._numbers = regex.compile(f"({NUMBER})")
        self._chunks = regex.compile(GPT2_PATTERN)
        alphabet = byte_alphabet()
        self._spell = [alphabet[b] for b in range(256)]
        self._byte_of = {c: b for b, c in alphabet.items()}
        self.tokens = [self._show(t) for t in self.spelled]
        self._by_text: dict[str, int] = {}
        for i, text in enumerate(self.tokens):
            self._by_text.setdefault(text, i)

    # --------------------------------------------------------------------------- the vocabulary
    def __len__(self) -> int:
        return len(self.spelled)

    def __contains__(self, token) -> bool:
        return token in self._by_text

    def token_bytes(self, i: int) -> bytes:
        t = self.spelled[i]
        if t in self.special:
            return t.encode("utf-8")
        return bytes(self._byte_of[c] for c in t)

    def _show(self, t: str) -> str:
        if t in self.special or any(c not in self._byte_of for c in t):
            return t
        return show_bytes(bytes(self._byte_of[c] for c in t))

    def id(self, token: str) -> int:
        """The id of a token given as the text it shows (" Paris", with its space)."""
        require(isinstance(token, str), f"a token is a string, got {type(token).__name__}")
        if token in self._by_text:
            return self._by_text[token]
        pieces = self.encode(token) if token else []
        shown = " + ".join(repr(self.tokens[i]) for i in pieces) or "no tokens"
        raise CourseError(f"{token!r} is not one token of the model's vocabulary of {len(self):,}: it is cut into "
                          f"{shown} (a leading space is part of a token: ' Paris' and 'Paris' are two tokens)")

    def decode(self, ids) -> list[str]:
        """Each id's token as the text it shows."""
        return [self.tokens[int(i)] for i in ids]

    def to_text(self, ids) -> str:
        """The text a run of ids spells (bytes joined before decoding, so a character cut across
        tokens is whole again)."""
        return show_bytes(b"".join(self.token_bytes(int(i)) for i in ids))

    # --------------------------------------------------------------------------- cutting text
    def chunks(self, text: str) -> list[str]:
        """Step 2: the chunks no token crosses (special tokens are chunks of their own)."""
        require(isinstance(text, str), f"a text is a string, got {type(text).__name__}")
        out = []
        for part in (self._special.split(text) if self._special else [text]):
            if part in self.special:
                out.append(part)
                continue
            for piece in self._numbers.split(part):
                if piece:
                    out.extend(self._chunks.findall(piece))
        return out

    @functools.lru_cache(maxsize=65536)
    def _merge(self, chunk: str) -> tuple[str, ...]:
        """Steps 3 and 4 for one chunk: its bytes spelled out, then merged pair by pair."""
        parts = [self._spell[b] for b in chunk.encode("utf-8")]
        while len(parts) > 1:
            best, where = None, -1
            for i in range(len(parts) - 1):
                rank = self.ranks.get((parts[i], parts[i + 1]))
                if rank is not None and (best is None or rank < best):
                    best, where = rank, i
            if best is None:
                break
            pair = (parts[where], parts[where + 1])
            # Every occurrence of the best pair is joined in one sweep, left to right.
            out, i = [], 0
            while i < len(parts):
                if i < len(parts) - 1 and (parts[i], parts[i + 1]) == pair:
                    out.append(pair[0] + pair[1])
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            parts = out
        return tuple(parts)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of `text`, spelled in the byte alphabet (as the vocabulary file writes them)."""
        out = []
        for chunk in self.chunks(text):
            out.extend([chunk] if chunk in self.special else self._merge(chunk))
        return out

    def encode(self, text: str) -> list[int]:
        """The ids of `text` (no token is added before or after it)."""
        require(isinstance(text, str), f"a text is a string, got {type(text).__name__}")
        for c in text:
            if 0xD800 <= ord(c) <= 0xDFFF:
                raise CourseError(say("text_surrogate", code=f"U+{ord(c):04X}"))
        ids = []
        for piece in self.tokenize(text):
            i = self.index.get(piece)
            if i is None:
                raise CourseError(self.unwritable(text, piece))
            ids.append(i)
        return ids

    def unwritable(self, text: str, piece: str) -> str:
        """What to tell a reader whose text holds a character the vocabulary cannot write: the first character
        of `text` one of whose bytes is no token (the page's twin says the same, smollm2/ops.js `check`)."""
        for ch in text:
            for b in ch.encode("utf-8"):
                if self._spell[b] not in self.index:
                    return say("text_unwritable", char=repr(ch), code=f"U+{ord(ch):04X}", byte=f"0x{b:02X}")
        return f"the piece {piece!r} is not in the vocabulary: the merges and the vocabulary do not fit together"

    def missing_bytes(self) -> list[int]:
        """The bytes the vocabulary has no token of their own for (a text holding one cannot be cut into tokens)."""
        return [b for b in range(256) if self._spell[b] not in self.index]
