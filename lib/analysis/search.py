"""The final step as a search: score every dictionary entry against one query vector, then rank.

`search(query, dictionary)` is the whole read-out of a language model written for a reader: a
dot product per word (the scores, or logits), then a softmax (the ranking). `model_query` pulls
the real query out of a trained model: the final residual stream at the last position, after
the final LayerNorm where the model has one, so that its dot products with the unembedding are
exactly the model's logits.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.model.readout import softmax


@dataclass(frozen=True)
class SearchResult:
    words: list[str]
    scores: np.ndarray   # one logit per word, in dictionary order
    probs: np.ndarray    # softmax of scores / temperature

    def ranked(self) -> list[tuple[str, float, float]]:
        order = np.argsort(-self.probs, kind="stable")
        return [(self.words[i], float(self.scores[i]), float(self.probs[i])) for i in order]


def search(query, dictionary: dict[str, object], temperature: float = 1.0) -> SearchResult:
    """Score each word by its dot product with `query`, and rank by softmax."""
    q = np.asarray(query, dtype=float)
    words = list(dictionary)
    rows = np.array([np.asarray(dictionary[w], dtype=float) for w in words])
    scores = rows @ q
    return SearchResult(words, scores, softmax(scores, temperature).numpy())


def model_query(lm, prompt: str) -> np.ndarray:
    """The vector a trained model searches with for the next token after `prompt`."""
    _, cache = lm.model.run_with_cache(lm.encode(prompt))
    return query_from_cache(lm, cache)


def query_from_cache(lm, cache) -> np.ndarray:
    """The query at the last position of a run already made with `run_with_cache`."""
    key = "ln_final" if lm.model.ln_final is not None else "resid_final"
    return cache[key][-1].double().numpy()


def model_dictionary(lm) -> dict[str, np.ndarray]:
    """The dictionary a model searches: one column of the unembedding per token (with tied
    weights, the token's own embedding row)."""
    W_U = lm.model.W_U.detach().double().numpy()
    return {t: W_U[:, i] for i, t in enumerate(lm.vocab.tokens)}


def model_search(lm, prompt: str, temperature: float = 1.0) -> SearchResult:
    """The model's next-token page computed as a search (the unembedding bias included)."""
    result = search(model_query(lm, prompt), model_dictionary(lm), temperature=1.0)
    scores = result.scores + lm.model.b_U.detach().double().numpy()
    return SearchResult(result.words, scores, softmax(scores, temperature).numpy())
