"""Self-checks for the chapter "Hallucination, demystified"."""
from __future__ import annotations

from ..errors import CourseError
from ..signs import read_signs
from . import Feedback, NOT_ANSWERED, check_number, unanswered


def entropy_of(lm, answer, prompt: str = "<BOS> banana chiama") -> Feedback:
    """Exercise 1: the entropy of a page, in bits."""
    expected = read_signs(lm, prompt).entropy_bits
    import math
    nats = expected * math.log(2)
    return check_number(answer, expected, tol=0.01, what="The entropy",
                        hints={nats: "that is the entropy in nats (natural logarithm); the chapter uses bits (log base 2)."})


def confident_impossible(lm, answer, threshold: float = 0.9) -> Feedback:
    """Exercise 2: a prompt the rules forbid on which the model is still confident."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    if not isinstance(answer, str):
        return Feedback(False, f"the answer should be a prompt, as a string of tokens; got {answer!r}.")
    try:
        signs = read_signs(lm, answer)
    except CourseError as e:
        return Feedback(False, f"the model cannot read that prompt: {e}")
    if signs.on_distribution:
        return Feedback(False, "that prompt can occur in the game; find one the rules forbid.")
    if signs.top_prob <= threshold:
        return Feedback(False, f"the rules forbid it, but the model's top word has only {signs.top_prob:.3f}; "
                               f"find one where it exceeds {threshold}.")
    return Feedback(True, f"impossible in the game, yet the model gives {signs.top} {signs.top_prob:.3f}.")
