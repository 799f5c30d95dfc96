"""The final search at scale: the same matrix product with a bigger dictionary, timed.

A large model's last step is the toy's last step with bigger numbers: one dot product per
vocabulary entry (a matrix-vector product), then a softmax. `search_cost` times it on a random
dictionary. A dictionary of 50,257 rows of 12,288 numbers takes 2.5 GB in 32-bit floats, more
than a chapter may use, so the dictionary is streamed in blocks: one random block is generated
and multiplied against the query once per block of the real dictionary. Every multiply-add of
the full search is performed; only the memory is saved.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from lib.errors import require
from lib.model.readout import softmax

BLOCK_ROWS = 4096
# Reference shapes: (vocabulary, d_model). GPT-2 small and GPT-3 share GPT-2's 50,257-token vocabulary.
SHAPES = {"calling game": (28, 64), "GPT-2 small": (50257, 768), "GPT-3 (175B)": (50257, 12288)}


@dataclass(frozen=True)
class SearchCost:
    vocab_size: int
    d_model: int
    seconds: float          # best wall time of one search over the repeats: scores for every word, then softmax

    @property
    def multiply_adds(self) -> int:
        return self.vocab_size * self.d_model

    @property
    def dictionary_bytes(self) -> int:
        return self.vocab_size * self.d_model * 4   # float32

    @property
    def rate(self) -> float:
        """Multiply-adds per second achieved."""
        return self.multiply_adds / self.seconds


def search_cost(vocab_size: int, d_model: int, repeats: int = 5, seed: int = 0) -> SearchCost:
    """Time one search (scores + softmax) over a random `vocab_size` x `d_model` dictionary."""
    require(isinstance(vocab_size, int) and vocab_size >= 1, f"vocab_size must be a whole number >= 1, got {vocab_size!r}")
    require(isinstance(d_model, int) and d_model >= 1, f"d_model must be a whole number >= 1, got {d_model!r}")
    require(isinstance(repeats, int) and repeats >= 1, f"repeats must be a whole number >= 1, got {repeats!r}")
    rng = np.random.default_rng(seed)
    rows = min(vocab_size, BLOCK_ROWS)
    block = rng.standard_normal((rows, d_model), dtype=np.float32)
    query = rng.standard_normal(d_model, dtype=np.float32)
    scores = np.empty(vocab_size, dtype=np.float32)

    def once():
        for start in range(0, vocab_size, rows):
            n = min(rows, vocab_size - start)
            np.matmul(block[:n], query, out=scores[start:start + n])
        return softmax(scores)

    once()  # warm the caches once, as a model that runs repeatedly would be
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        once()
        times.append(time.perf_counter() - t)
    # The fastest repeat, as timeit advises: other work on the machine only ever adds time.
    return SearchCost(vocab_size, d_model, min(times))
