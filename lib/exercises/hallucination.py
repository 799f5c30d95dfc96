"""Self-checks for the chapter "Hallucination, demystified"."""
from __future__ import annotations

import math

from lib.analysis.signs import read_signs
from lib.exercises import Feedback, check_number, prompt_signs


def entropy_of(lm, answer, prompt: str = "<BOS> banana chiama") -> Feedback:
    """Investigate: the entropy of a page the chapter did not measure, in bits."""
    expected = read_signs(lm, prompt).entropy_bits
    nats = expected * math.log(2)
    # Computed, not estimated, so the tolerance is tight: a looser one would accept the round 1 (the
    # flag's threshold) that the chapter prints everywhere.
    return check_number(answer, expected, tol=1e-3, what="The entropy",
                        hints={nats: "that is the entropy in nats (natural logarithm); the chapter uses bits (log base 2)."})


def confident_impossible(lm, answer, threshold: float = 0.9) -> Feedback:
    """Investigate: a prompt the rules forbid on which the model is still confident."""
    signs = prompt_signs(lm, answer)
    if isinstance(signs, Feedback):
        return signs
    if signs.on_distribution:
        return Feedback(False, "that prompt can occur in the game; find one the rules forbid.")
    if signs.top_prob <= threshold:
        return Feedback(False, f"the rules forbid it, but the model's top word has only {signs.top_prob:.3f}; "
                               f"find one where it exceeds {threshold}.")
    return Feedback(True, f"impossible in the game, yet the model gives {signs.top} {signs.top_prob:.3f}.")


def entropy_sure_page(lm, answer, top: float = 0.9, tol: float = 0.005) -> Feedback:
    """Predict: the entropy, in bits, of a page whose top word holds `top` and whose other words share
    the rest equally (over the model's whole vocabulary). Is a page that sure above the one-bit flag?"""
    rest = len(lm.vocab) - 1

    def bits(p):
        return -p * math.log2(p)

    expected = bits(top) + rest * bits((1 - top) / rest)
    return check_number(answer, expected, tol=tol, what="The entropy",
                        hints={expected * math.log(2): "that is the entropy in nats (natural logarithm); the "
                                                       "flag counts bits (log base 2).",
                               bits(top): "that counts only the top word; every other word with a share adds "
                                          "its own term.",
                               bits(top) + bits(1 - top): "that treats the rest as one word; it is spread over "
                                                          f"the other {rest} words, and each adds a term."})
