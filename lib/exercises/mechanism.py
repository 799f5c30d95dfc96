"""Self-checks for the chapter "The mechanism: a maximum-inner-product search"."""
from __future__ import annotations

import numpy as np

from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.analysis.search import model_dictionary, model_query
from lib.model.readout import prompt_logits
from lib.exercises import Feedback, check_choice, check_number

# The cosine exercise asks about a prompt the chapter does not rank, where the two searches disagree
# and the cosine's first word is not 7 (the first word by angle of the chapter's printed example, and
# of most prompts where the two disagree): copying the page gives a wrong answer.
COSINE_PROMPT = "<BOS> Pietro chiama 2 <SEP> 2 chiama 1 <SEP> 1 chiama 7 <SEP> 7 chiama"


def logit_of(lm, answer, word: str = "Cefa", prompt: str = CONFIDENT) -> Feedback:
    """Investigate: one logit, by a dot product with the word's column, plus its bias."""
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


def cosine_winner(lm, answer, prompt: str = COSINE_PROMPT) -> Feedback:
    """Investigate: the word a cosine search would put first after `prompt`."""
    best = cosine_ranking(lm, prompt)[0]
    by_dot = lm.vocab.tokens[int(prompt_logits(lm, prompt).argmax())]
    fb = check_choice(answer, lm.vocab.tokens, best,
                      right=f"by angle alone, {answer} is the closest word to the query.",
                      wrong=f"{answer} is not first by cosine: divide each dot product by both lengths.")
    if not fb and isinstance(answer, str) and answer == by_dot != best:
        return Feedback(False, "that is the model's own first word, ranked by dot product (and bias); the cosine "
                               "divides each dot product by the two lengths, and leaves the bias out.")
    return fb


def stretched_logit(lm, answer, scale: float = 2.0, word: str = "Cefa", prompt: str = CONFIDENT,
                    tol: float = 0.01) -> Feedback:
    """Predict: `word`'s logit after `prompt` when the query is stretched `scale` times. The dot
    product stretches with the query; the bias b_U does not."""
    i = lm.vocab.id(word)
    logit = float(prompt_logits(lm, prompt)[i])
    bias = float(lm.model.b_U[i])
    expected = scale * (logit - bias) + bias
    return check_number(answer, expected, tol=tol, what=f"{word}'s logit with the query {scale:g} times longer",
                        hints={scale * logit: "that stretches the bias too, as a temperature would; the bias is "
                                              "added after the dot product, so a longer query leaves it as it was.",
                               logit: "that is the logit at the query's own length: the dot product grows with "
                                      "the query.",
                               scale * (logit - bias): "the bias is missing: it is still added, unchanged, after "
                                                       "the longer dot product."})
