"""Self-checks for the chapter "The results page, temperature and sampling"."""
from __future__ import annotations

from lib.shipped.behaviour import UNCERTAIN
from lib.model.readout import prompt_logits, sample, softmax, truncation_mask
from lib.exercises import Feedback, NOT_ANSWERED, as_number, check_whole_number, unanswered


def survivors(lm, answer, top_p: float = 0.5, prompt: str = UNCERTAIN) -> Feedback:
    """Exercise 1: how many tokens survive top-p truncation."""
    probs = softmax(prompt_logits(lm, prompt))
    expected = int(truncation_mask(probs, top_p=top_p).sum())
    return check_whole_number(answer, expected, what=f"The number of survivors at top-p {top_p}")


def seed_that_picks(lm, answer, word: str = "Paolo", prompt: str = UNCERTAIN) -> Feedback:
    """Exercise 2: a seed whose roll (temperature 1, no truncation) picks `word`."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    value = as_number(answer)
    if value is None or value != int(value) or value < 0:
        return Feedback(False, f"a seed is a whole number of 0 or more; got {answer!r}.")
    got = lm.vocab.tokens[sample(prompt_logits(lm, prompt), seed=int(value))]
    if got == word:
        return Feedback(True, f"seed {int(value)} rolls {word}.")
    return Feedback(False, f"seed {int(value)} rolls {got}, not {word}: try other seeds.")
