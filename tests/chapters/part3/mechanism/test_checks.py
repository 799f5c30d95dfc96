"""The self-checks of chapters/part3/mechanism (lib/chapters/part3/mechanism/checks.py): each accepts the
right answer and names the typical mistakes, without giving the answer away."""

import numpy as np

from helpers import PART3_GARBAGE, one_line_verdicts
from lib.chapters.part3.mechanism import checks as mechanism
from lib.content.prompts import CONFIDENT


def test_mechanism_checks(lm):
    from lib.analysis.search import model_dictionary, model_query
    from lib.model.readout import prompt_logits
    right = float(prompt_logits(lm, CONFIDENT)[lm.vocab.id("Cefa")])
    assert mechanism.logit_of(lm, right) and not mechanism.logit_of(lm, ...).answered
    no_bias = float(model_query(lm, CONFIDENT) @ model_dictionary(lm)["Cefa"])
    if abs(no_bias - right) > 1e-3:
        assert "bias" not in mechanism.logit_of(lm, no_bias).message and "one more" in mechanism.logit_of(lm, no_bias).message
    # The cosine exercise asks about a prompt the chapter does not rank.
    prompt = mechanism.COSINE_PROMPT
    h = model_query(lm, prompt)
    W = lm.model.W_U.detach().double().numpy()
    cos = h @ W / (np.linalg.norm(W, axis=0) * np.linalg.norm(h))
    best = lm.vocab.tokens[int(np.argmax(cos))]
    by_dot = lm.vocab.tokens[int(prompt_logits(lm, prompt).argmax())]
    assert mechanism.cosine_winner(lm, best) and not mechanism.cosine_winner(lm, "Tarso")
    assert best != "7" and not mechanism.cosine_winner(lm, "7"), "the page's example prints 7 first by angle"
    assert "one of" in mechanism.cosine_winner(lm, "Giovanni").message
    if by_dot != best:
        assert "dot product" in mechanism.cosine_winner(lm, by_dot).message
    for garbage in PART3_GARBAGE:
        assert not mechanism.cosine_winner(lm, garbage)


def test_the_stretched_query_keeps_its_bias(lm):
    from lib.analysis.search import model_query
    i = lm.vocab.id("Cefa")
    bias = float(lm.model.b_U[i])
    # The reference, from the model itself: the doubled query through the unembedding.
    doubled = float(2 * model_query(lm, CONFIDENT) @ lm.model.W_U.detach().double().numpy()[:, i] + bias)
    logit = doubled / 2 + bias / 2    # the logit at the query's own length
    fb = mechanism.stretched_logit(lm, doubled)
    assert fb and fb.accepts[0] < doubled < fb.accepts[1]
    assert "temperature" in mechanism.stretched_logit(lm, 2 * logit).message      # the bias doubled too
    assert "own length" in mechanism.stretched_logit(lm, logit).message            # nothing stretched
    assert "bias is missing" in mechanism.stretched_logit(lm, doubled - bias).message
    assert "too high" in mechanism.stretched_logit(lm, doubled + 5).message
    assert not mechanism.stretched_logit(lm, ...).answered
    one_line_verdicts(mechanism.stretched_logit, lm)
