"""Self-checks for the chapter "Bigrams and the zero-layer model"."""
from __future__ import annotations

from lib.analysis.bigrams import bigram_table
from lib.exercises import Feedback, check_number
from lib.model.readout import prompt_logits, softmax


def bigram_probability(answer, prev: str = "chiama", nxt: str = "Pietro") -> Feedback:
    """Exercise 1: one entry of the counted bigram table."""
    tokens, _, probs = bigram_table()
    expected = float(probs[tokens.index(prev), tokens.index(nxt)])
    return check_number(answer, expected, tol=0.005, what=f"P({nxt} | {prev})")


def zero_layer_tarso(zl, answer) -> Feedback:
    """Exercise 2: what the zero-layer model gives Tarso after the last token Paolo."""
    probs = softmax(prompt_logits(zl, "<BOS> Paolo"))
    return check_number(answer, float(probs[zl.vocab.id("Tarso")]), tol=0.005, what="P(Tarso | Paolo)")
