"""A word-level vocabulary: one token per whitespace-separated word.

The course's models read whole words, so a prompt is split on white space and each word looked
up. An unknown word is the most common learner mistake, so the error names it and offers the
closest known tokens (by spelling) instead of a bare KeyError.
"""
from __future__ import annotations

import difflib
from collections import Counter
from typing import Iterable, Sequence

from lib.errors import CourseError, require
from lib.messages import say

PAD, BOS, EOS, SEP = "<PAD>", "<BOS>", "<EOS>", "<SEP>"
SPECIALS = (PAD, BOS, EOS, SEP)


class Vocabulary:
    def __init__(self, tokens: Sequence[str]):
        require(not isinstance(tokens, str), "a vocabulary is a list of tokens, not one string")
        tokens = list(tokens)
        for t in tokens:
            require(isinstance(t, str) and t != "" and not any(c.isspace() for c in t),
                    f"vocabulary tokens must be non-empty strings without white space, got {t!r}")
        twice = sorted(t for t, n in Counter(tokens).items() if n > 1)
        require(not twice, f"a vocabulary cannot list a token twice, and lists {', '.join(map(repr, twice))} twice")
        self.tokens = tokens
        self.index = {t: i for i, t in enumerate(tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self.index

    def __iter__(self):
        return iter(self.tokens)

    def id(self, token: str) -> int:
        try:
            return self.index[token]
        except KeyError:
            raise CourseError(self._unknown_message(token)) from None

    def _unknown_message(self, token: str) -> str:
        # Case-insensitive closeness, so "pietro" suggests "Pietro".
        lowered = {t.lower(): t for t in self.tokens}
        close = difflib.get_close_matches(token.lower(), list(lowered), n=3, cutoff=0.5)
        hint = say("did_you_mean", close=", ".join(repr(lowered[c]) for c in close)) if close else ""
        return say("unknown_token", token=repr(token), hint=hint, known=" ".join(self.tokens))

    def split(self, text: str) -> list[str]:
        words = text.split()
        require(len(words) > 0, say("empty_prompt"))
        return words

    def encode(self, text: str | Iterable[str]) -> list[int]:
        require(isinstance(text, (str, list, tuple)),
                f"a prompt is a string of tokens separated by spaces (or a list of tokens), got {type(text).__name__}")
        words = self.split(text) if isinstance(text, str) else list(text)
        require(len(words) > 0, say("empty_ids"))
        return [self.id(w) for w in words]

    def decode(self, ids: Iterable[int]) -> list[str]:
        return decode_ids(self.tokens, ids)

    def to_text(self, ids: Iterable[int]) -> str:
        return " ".join(self.decode(ids))

    def to_list(self) -> list[str]:
        return list(self.tokens)


def decode_ids(tokens: list[str], ids: Iterable[int]) -> list[str]:
    """The tokens of `ids` in a vocabulary listed as `tokens` (any tokenizer's), each id checked."""
    out = []
    for i in ids:
        i = int(i)
        require(0 <= i < len(tokens), f"token id {i} is outside the vocabulary (0 to {len(tokens) - 1})")
        out.append(tokens[i])
    return out
