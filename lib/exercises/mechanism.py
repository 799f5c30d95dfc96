"""Self-checks for the chapter "The mechanism: a maximum-inner-product search"."""
from __future__ import annotations

import numpy as np

from lib.shipped.behaviour import CONFIDENT, UNCERTAIN
from lib.analysis.search import model_dictionary, model_query
from lib.model.readout import prompt_logits
from lib.exercises import Feedback, check_choice, check_number


def logit_of(lm, answer, word: str = "Cefa", prompt: str = CONFIDENT) -> Feedback:
    """Exercise 1: one logit, by a dot product with the word's column, plus its bias."""
    i = lm.vocab.id(word)
    expected = float(prompt_logits(lm, prompt)[i])
    without_bias = float(model_query(lm, prompt) @ model_dictionary(lm)[word])
    return check_number(answer, expected, tol=1e-3, what=f"{word}'s logit",
                        hints={without_bias: "close: that is the dot product alone; the model adds one more "
                                             "number per word before the softmax."})


def cosine_ranking(lm, prompt: str = UNCERTAIN) -> list[str]:
    """The vocabulary ranked by the cosine between the query and each word's column."""
    h = model_query(lm, prompt)
    words, cols = zip(*model_dictionary(lm).items())
    cols = np.array(cols)
    cos = cols @ h / (np.linalg.norm(cols, axis=1) * np.linalg.norm(h))
    return [words[i] for i in np.argsort(-cos, kind="stable")]


def cosine_winner(lm, answer, prompt: str = UNCERTAIN) -> Feedback:
    """Exercise 2: the word a cosine search would put first."""
    best = cosine_ranking(lm, prompt)[0]
    return check_choice(answer, lm.vocab.tokens, best,
                        right=f"by angle alone, {answer} is the closest word to the query.",
                        wrong=f"{answer} is not first by cosine: divide each dot product by both lengths.")
