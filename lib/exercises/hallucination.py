"""Self-checks for the chapter "Hallucination, demystified"."""
from __future__ import annotations

import math

from lib.analysis.signs import read_signs
from lib.exercises import Feedback, check_number, prompt_signs


def entropy_of(lm, answer, prompt: str = "<BOS> banana chiama") -> Feedback:
    """Exercise 1: the entropy of a page, in bits."""
    expected = read_signs(lm, prompt).entropy_bits
    nats = expected * math.log(2)
    return check_number(answer, expected, tol=0.01, what="The entropy",
                        hints={nats: "that is the entropy in nats (natural logarithm); the chapter uses bits (log base 2)."})


def confident_impossible(lm, answer, threshold: float = 0.9) -> Feedback:
    """Exercise 2: a prompt the rules forbid on which the model is still confident."""
    signs = prompt_signs(lm, answer)
    if isinstance(signs, Feedback):
        return signs
    if signs.on_distribution:
        return Feedback(False, "that prompt can occur in the game; find one the rules forbid.")
    if signs.top_prob <= threshold:
        return Feedback(False, f"the rules forbid it, but the model's top word has only {signs.top_prob:.3f}; "
                               f"find one where it exceeds {threshold}.")
    return Feedback(True, f"impossible in the game, yet the model gives {signs.top} {signs.top_prob:.3f}.")
