"""Self-checks for the chapter "From a toy to a contract"."""
from __future__ import annotations

from lib.analysis.scale import SHAPES
from lib.exercises import Feedback
from lib.exercises.site import Values, site_check


MACS_MODEL = "GPT-2 small"
# The table prints GPT-3's dictionary in 32-bit numbers, so its 16-bit size is half a printed figure;
# the exercise widens the vocabulary to one the table does not hold, as recent multilingual models do.
BYTES_MODEL, BYTES_PER_NUMBER, BYTES_VOCAB = "GPT-3 (175B)", 2, 256_000


def _macs_values() -> Values:
    vocab, d_model = SHAPES[MACS_MODEL]
    return Values(vocab * d_model, hints={"added": vocab + d_model, "bytes": vocab * d_model * 4, "per_word": vocab,
                                          "one_dot": d_model})


MULTIPLY_ADDS = site_check(__name__, "multiply_adds", rule="whole", compute="multiplyAdds", values=_macs_values,
                           units=("multiply-adds",),
                           what="The number of multiply-adds", args={"shape": SHAPES[MACS_MODEL]}, texts={
    "added": "the vocabulary and the query's length were added; every word's score takes one multiply-add per "
             "number of the query.",
    "bytes": "that is the dictionary's size in bytes (4 per 32-bit number), not the count of multiply-adds.",
    "per_word": "that is one multiply-add per word; each word's score is a dot product over the whole query.",
    "one_dot": "that is one dot product; the search scores every word of the vocabulary."})


def multiply_adds(answer) -> Feedback:
    """Predict: how many multiply-adds one search over GPT-2 small's whole dictionary takes."""
    return MULTIPLY_ADDS.judge(answer)


def _gigabytes_values() -> Values:
    own_vocab, d_model = SHAPES[BYTES_MODEL]
    expected = BYTES_VOCAB * d_model * BYTES_PER_NUMBER / 1e9
    return Values(expected, hints={"float32": expected * 2, "gib": expected * 1e9 / 2**30,
                                   "own": own_vocab * d_model * BYTES_PER_NUMBER / 1e9})


DICTIONARY_GIGABYTES = site_check(
    __name__, "dictionary_gigabytes", rule="number", compute="dictionaryGigabytes", values=_gigabytes_values,
    units=("GB", "gigabytes"),
    what="The size in GB", tol=0.01,
    args={"shape": (BYTES_VOCAB, SHAPES[BYTES_MODEL][1]), "bytes": BYTES_PER_NUMBER, "own_vocab": SHAPES[BYTES_MODEL][0]},
    texts={"float32": "that is the size in 32-bit floats; the exercise asks for 16-bit numbers (2 bytes).",
           "gib": "close: use 10**9 bytes per GB, not 2**30.",
           "own": "that is GPT-3's own dictionary, with its vocabulary; take a vocabulary of 256,000 words."})


def dictionary_gigabytes(answer) -> Feedback:
    """Predict: the dictionary's size in gigabytes (10**9 bytes) at 16-bit precision, for GPT-3's query
    length and a vocabulary of BYTES_VOCAB words."""
    return DICTIONARY_GIGABYTES.judge(answer)
