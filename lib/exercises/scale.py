"""Self-checks for the chapter "From a toy to a contract"."""
from __future__ import annotations

from lib.analysis.scale import SHAPES
from lib.exercises import Feedback, check_number, check_whole_number


def multiply_adds(answer, model: str = "GPT-2 small") -> Feedback:
    """Predict: how many multiply-adds one search over the whole dictionary takes."""
    vocab, d_model = SHAPES[model]
    hints = {vocab + d_model: "the vocabulary and the query's length were added; every word's score takes one "
                              "multiply-add per number of the query.",
             vocab * d_model * 4: "that is the dictionary's size in bytes (4 per 32-bit number), not the count of "
                                  "multiply-adds.",
             vocab: "that is one multiply-add per word; each word's score is a dot product over the whole query.",
             d_model: "that is one dot product; the search scores every word of the vocabulary."}
    return check_whole_number(answer, vocab * d_model, what="The number of multiply-adds", hints=hints)


def dictionary_gigabytes(answer, model: str = "GPT-3 (175B)", bytes_per_number: int = 2) -> Feedback:
    """Predict: the dictionary's size in gigabytes (10**9 bytes) at 16-bit precision."""
    vocab, d_model = SHAPES[model]
    expected = vocab * d_model * bytes_per_number / 1e9
    return check_number(answer, expected, tol=0.01, what="The size in GB",
                        hints={expected * 2: "that is the size in 32-bit floats; the exercise asks for 16-bit numbers (2 bytes).",
                               expected * 1e9 / 2**30: "close: use 10**9 bytes per GB, not 2**30."})
