"""Self-checks for the chapter "The mechanism: a maximum-inner-product search"."""
from __future__ import annotations

import numpy as np

from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.analysis.search import model_dictionary, model_query
from lib.model.readout import prompt_logits
from lib.exercises import Feedback
from lib.exercises.site import Values, site_check

# The cosine exercise asks about a prompt the chapter does not rank, where the two searches disagree
# and the cosine's first word is not 7 (the first word by angle of the chapter's printed example, and
# of most prompts where the two disagree): copying the page gives a wrong answer.
COSINE_PROMPT = "<BOS> Pietro chiama 2 <SEP> 2 chiama 1 <SEP> 1 chiama 7 <SEP> 7 chiama"


LOGIT_WORD, LOGIT_PROMPT = "Cefa", CONFIDENT


def _logit_values(lm) -> Values:
    i = lm.vocab.id(LOGIT_WORD)
    return Values(float(prompt_logits(lm, LOGIT_PROMPT)[i]),
                  hints={"no_bias": float(model_query(lm, LOGIT_PROMPT) @ model_dictionary(lm)[LOGIT_WORD])})


LOGIT_OF = site_check(__name__, "logit_of", rule="number", compute="logitOf", values=_logit_values,
                      what=f"{LOGIT_WORD}'s logit", tol=1e-3, model="calling-game",
                      args={"prompt": LOGIT_PROMPT, "word": LOGIT_WORD}, texts={
                          "no_bias": "close: that is the dot product alone; the model adds one more number per word "
                                     "before the softmax."})


def logit_of(lm, answer) -> Feedback:
    """Investigate: one logit, by a dot product with the word's column, plus its bias."""
    return LOGIT_OF.judge(answer, lm)


def cosine_ranking(lm, prompt: str = UNCERTAIN) -> list[str]:
    """The vocabulary ranked by the cosine between the query and each word's column."""
    h = model_query(lm, prompt)
    words, cols = zip(*model_dictionary(lm).items())
    cols = np.array(cols)
    cos = cols @ h / (np.linalg.norm(cols, axis=1) * np.linalg.norm(h))
    return [words[i] for i in np.argsort(-cos, kind="stable")]


def _cosine_values(lm) -> Values:
    return Values(cosine_ranking(lm, COSINE_PROMPT)[0], options=tuple(lm.vocab.tokens),
                  hints={"by_dot": lm.vocab.tokens[int(prompt_logits(lm, COSINE_PROMPT).argmax())]})


COSINE_WINNER = site_check(__name__, "cosine_winner", rule="choice", compute="cosineWinner", values=_cosine_values,
                           model="calling-game", args={"prompt": COSINE_PROMPT}, texts={
    "right": "by angle alone, {answer} is the closest word to the query.",
    "wrong": "{answer} is not first by cosine: divide each dot product by both lengths.",
    "by_dot": "that is the model's own first word, ranked by dot product (and bias); the cosine divides each dot "
              "product by the two lengths, and leaves the bias out."})


def cosine_winner(lm, answer) -> Feedback:
    """Investigate: the word a cosine search would put first after COSINE_PROMPT."""
    return COSINE_WINNER.judge(answer, lm)


STRETCH = 2.0


def _stretched_values(lm) -> Values:
    i = lm.vocab.id(LOGIT_WORD)
    logit = float(prompt_logits(lm, LOGIT_PROMPT)[i])
    bias = float(lm.model.b_U[i])
    return Values(STRETCH * (logit - bias) + bias,
                  hints={"bias_too": STRETCH * logit, "unstretched": logit, "no_bias": STRETCH * (logit - bias)})


# The dot product stretches with the query; the bias b_U does not.
STRETCHED_LOGIT = site_check(
    __name__, "stretched_logit", rule="number", compute="stretchedLogit", values=_stretched_values,
    what=f"{LOGIT_WORD}'s logit with the query {STRETCH:g} times longer", tol=0.01, model="calling-game",
    args={"prompt": LOGIT_PROMPT, "word": LOGIT_WORD, "scale": STRETCH}, texts={
        "bias_too": "that stretches the bias too, as a temperature would; the bias is added after the dot product, so "
                    "a longer query leaves it as it was.",
        "unstretched": "that is the logit at the query's own length: the dot product grows with the query.",
        "no_bias": "the bias is missing: it is still added, unchanged, after the longer dot product."})


def stretched_logit(lm, answer) -> Feedback:
    """Predict: Cefa's logit after LOGIT_PROMPT when the query is stretched STRETCH times."""
    return STRETCHED_LOGIT.judge(answer, lm)
