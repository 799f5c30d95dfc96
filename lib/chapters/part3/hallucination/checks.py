"""Self-checks for the chapter "Hallucination, demystified"."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from lib.analysis import calibration
from lib.analysis.signs import read_signs
from lib.content.corpora.calling_game import TOKENS as GAME_TOKENS
from lib.exercises import PROMPT_TEXTS, Feedback, prompt_signs
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck


ENTROPY_PROMPT = "<BOS> banana chiama"


def _entropy_values(lm) -> Values:
    expected = read_signs(lm, ENTROPY_PROMPT).entropy_bits
    return Values(expected, hints={"nats": expected * math.log(2)})


# Computed, not estimated, so the tolerance is tight: a looser one would accept the round 1 (the
# flag's threshold) that the chapter prints everywhere.
ENTROPY_OF = site_check(__name__, "entropy_of", rule="number", compute="pageEntropy", values=_entropy_values,
                        units=("bits", "bit"),
                        what="The entropy", tol=1e-3, model="calling-game", args={"prompt": ENTROPY_PROMPT}, texts={
                            "nats": "that is the entropy in nats (natural logarithm); the chapter uses bits (log base 2)."})


def entropy_of(lm, answer) -> Feedback:
    """Investigate: the entropy of a page the chapter did not measure, in bits."""
    return ENTROPY_OF.judge(answer, lm)


CONFIDENT_AT = 0.9


def _confident_examples(lm) -> Values:
    """Prompts the tests type (an open check ships no values): a right one, found among prompts that end
    in a call the rules could not have made, and one per text."""
    candidates = [f"<BOS> {a} chiama {b}" for a in ("Paolo", "1", "2") for b in ("Pietro", "Paolo", "3")]
    right = next(p for p in candidates if not read_signs(lm, p).on_distribution
                 and read_signs(lm, p).top_prob > CONFIDENT_AT)
    unsure = next(p for p in (ENTROPY_PROMPT, "<BOS> banana", "<BOS> chiama chiama")
                  if read_signs(lm, p).top_prob <= CONFIDENT_AT)
    return Values(right, hints={"possible": "<BOS> Pietro chiama Paolo", "unsure": unsure,
                                "unreadable": "<BOS> Pietro chiama Nessuno"})


CONFIDENT_IMPOSSIBLE = site_check(
    __name__, "confident_impossible", rule="open", reads="text", compute="confidentImpossible",
    values=_confident_examples, model="calling-game", words=tuple(GAME_TOKENS), args={"threshold": CONFIDENT_AT}, texts={
        **PROMPT_TEXTS,
        "possible": "that prompt can occur in the game; find one the rules forbid.",
        "unsure": "the rules forbid it, but the model's top word has only {top_prob:.3f}; find one where it "
                  "exceeds {threshold}.",
        "right": "impossible in the game, yet the model gives {top} {top_prob:.3f}."})


def confident_impossible(lm, answer) -> Feedback:
    """Investigate: a prompt the rules forbid on which the model is still confident (top word above
    CONFIDENT_AT)."""
    signs = prompt_signs(lm, answer)
    if isinstance(signs, Feedback):
        return signs
    if signs.on_distribution:
        return CONFIDENT_IMPOSSIBLE.say("possible")
    if signs.top_prob <= CONFIDENT_AT:
        return CONFIDENT_IMPOSSIBLE.say("unsure", top_prob=signs.top_prob, threshold=CONFIDENT_AT)
    return CONFIDENT_IMPOSSIBLE.say("right", True, top=signs.top, top_prob=signs.top_prob)


SURE_TOP = 0.9


def _sure_values(lm) -> Values:
    rest = len(lm.vocab) - 1

    def bits(p):
        return -p * math.log2(p)

    expected = bits(SURE_TOP) + rest * bits((1 - SURE_TOP) / rest)
    return Values(expected, hints={"nats": expected * math.log(2), "top_only": bits(SURE_TOP),
                                   "two_words": bits(SURE_TOP) + bits(1 - SURE_TOP)}, fields={"rest": rest})


ENTROPY_SURE_PAGE = site_check(
    __name__, "entropy_sure_page", rule="number", compute="surePageEntropy", values=_sure_values, units=("bits", "bit"),
    what="The entropy", tol=0.005, model="calling-game", args={"top": SURE_TOP}, texts={
        "nats": "that is the entropy in nats (natural logarithm); the flag counts bits (log base 2).",
        "top_only": "that counts only the top word; every other word with a share adds its own term.",
        "two_words": "that treats the rest as one word; it is spread over the other {rest} words, and each adds a "
                     "term."})


def entropy_sure_page(lm, answer) -> Feedback:
    """Predict: the entropy, in bits, of a page whose top word holds SURE_TOP and whose other words share
    the rest equally (over the model's whole vocabulary). Is a page that sure above the one-bit flag?"""
    return ENTROPY_SURE_PAGE.judge(answer, lm)


# ------------------------------------------------------------------ write: the expected calibration error
def _ece_by_hand(confidence, correct, n_bins, *, weighted=True, absolute=True, last_closed=True):
    """The expected calibration error with switches, each switch one typical mistake (the defaults are right)."""
    c = np.asarray(confidence, float)
    y = np.asarray(correct, float)
    which = np.floor(c * n_bins).astype(int)
    if last_closed:
        which = np.minimum(which, n_bins - 1)
    gaps, weights = [], []
    for b in range(n_bins):
        inside = which == b
        if inside.any():
            gap = y[inside].mean() - c[inside].mean()
            gaps.append(abs(gap) if absolute else gap)
            weights.append(inside.sum() / len(c))
    gaps = np.array(gaps)
    return float((np.array(weights) * gaps).sum() if weighted else gaps.mean())


def _ece_cases() -> list[Case]:
    rng = np.random.default_rng(8)
    calibrated = rng.uniform(0, 1, 400)
    sure = np.clip(rng.uniform(0.5, 1.2, 300), 0, 1)           # many answers at exactly 1
    return [Case((calibrated, rng.uniform(size=400) < calibrated, 10), "400 answers, about calibrated, in 10 bins"),
            Case((sure, rng.uniform(size=300) < 0.7, 10), "300 answers, many given with probability exactly 1"),
            Case((np.array([0.95, 0.9, 0.3, 0.35, 0.6]), np.array([True, False, False, False, True]), 5),
                 "five answers in five bins, some bins empty"),
            Case((rng.uniform(0.2, 0.9, 50), rng.uniform(size=50) < 0.9, 1), "50 under-confident answers in one bin")]


expected_calibration_error = WriteCheck(
    name="expected_calibration_error",
    cases=_ece_cases,
    reference=lambda confidence, correct, n_bins: calibration.expected_calibration_error(confidence, correct, n_bins),
    mistakes=(
        Mistake(partial(_ece_by_hand, weighted=False),
                "each bin counted the same; weight each bin's gap by the share of the answers it holds."),
        Mistake(partial(_ece_by_hand, absolute=False),
                "gaps of opposite signs cancelled: take each bin's gap between accuracy and confidence in size "
                "(its absolute value)."),
        Mistake(partial(_ece_by_hand, last_closed=False),
                "the answers given with probability exactly 1 fell outside the last bin; the last bin runs up to "
                "and including 1."),
    ),
    invariants=(lambda case, got: None if 0 <= got <= 1 + 1e-9 else
                f"an expected calibration error lies between 0 and 1, and yours is {got:.4g}.",),
)
