"""The real-language words in SmolLM2's vocabulary (lib.content.smollm2_words): the same 84 words as MiniLM's,
each one token when written after a space, with its row of the embedding table."""
import numpy as np
import pytest

from lib.content import real_words, smollm2_words
from lib.model import smollm2

pytestmark = pytest.mark.skipif(smollm2.package_file() is None, reason=f"{smollm2.PACKAGE} is not installed")


def test_each_word_is_one_token_after_a_space_with_its_row():
    w = smollm2_words.load()
    assert w.words == [x for ws in real_words.GROUPS.values() for x in ws] and len(w.words) == 84
    assert w.tokens == [" " + x for x in w.words] and w.groups[0] == next(iter(real_words.GROUPS))
    table = smollm2.embedding_table()
    assert [table.vocab.id(t) for t in w.tokens] == w.ids
    assert w.vectors.dtype == np.float64 and np.array_equal(w.vectors, table.W_E[w.ids].astype(np.float64))
    assert [f("dog") for f in smollm2_words.FORMS.values()] == [" dog", "dog", " Dog", "Dog"]
