"""The self-checks of chapters/part3/hallucination (lib/chapters/part3/hallucination/checks.py): each accepts
the right answer and names the typical mistakes, without giving the answer away."""

import math

import numpy as np

from helpers import one_line_verdicts
from lib.chapters.part3.hallucination import checks as hallucination
from lib.content.prompts import CONFIDENT


def test_hallucination_checks(lm):
    from lib.analysis.signs import read_signs
    h = read_signs(lm, "<BOS> banana chiama").entropy_bits
    assert hallucination.entropy_of(lm, h) and "nats" in hallucination.entropy_of(lm, h * math.log(2)).message
    # The page sits just under the one-bit flag the chapter prints everywhere: the round 1 is not it.
    assert abs(h - 1.0) > 1e-3 and not hallucination.entropy_of(lm, 1.0)
    one_line_verdicts(hallucination.entropy_of, lm)
    assert hallucination.confident_impossible(lm, "<BOS> Pietro chiama Pietro")
    assert "can occur" in hallucination.confident_impossible(lm, CONFIDENT).message
    assert "only" in hallucination.confident_impossible(lm, "<BOS> 7 chiama").message
    assert "cannot read" in hallucination.confident_impossible(lm, "<BOS> Giovanni").message


def test_the_entropy_of_a_sure_page(lm):
    n = len(lm.vocab)
    page = np.full(n, 0.1 / (n - 1))
    page[0] = 0.9
    right = float(-(page * np.log2(page)).sum())
    assert hallucination.entropy_sure_page(lm, right) and hallucination.entropy_sure_page(lm, round(right, 2))
    assert "nats" in hallucination.entropy_sure_page(lm, right * math.log(2)).message
    assert "only the top word" in hallucination.entropy_sure_page(lm, -0.9 * math.log2(0.9)).message
    two = -0.9 * math.log2(0.9) - 0.1 * math.log2(0.1)
    assert "as one word" in hallucination.entropy_sure_page(lm, two).message
    assert "too high" in hallucination.entropy_sure_page(lm, 1.5).message
    one_line_verdicts(hallucination.entropy_sure_page, lm)


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]); tests/exercises/test_writing.py runs them.
def expected_calibration_error(confidence, correct, n_bins):
    confidence, correct = np.asarray(confidence, float), np.asarray(correct, float)
    which = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        inside = which == b
        if inside.any():
            total += inside.mean() * abs(correct[inside].mean() - confidence[inside].mean())
    return total


def ece_unweighted(confidence, correct, n_bins):
    confidence, correct = np.asarray(confidence, float), np.asarray(correct, float)
    which = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    gaps = [abs(correct[which == b].mean() - confidence[which == b].mean()) for b in range(n_bins) if (which == b).any()]
    return float(np.mean(gaps))


def ece_signed(confidence, correct, n_bins):
    confidence, correct = np.asarray(confidence, float), np.asarray(correct, float)
    which = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    return float(sum((which == b).mean() * (correct[which == b].mean() - confidence[which == b].mean())
                     for b in range(n_bins) if (which == b).any()))


WRITE_CHECKS = {
    "expected_calibration_error": (hallucination.expected_calibration_error, expected_calibration_error, [
        (ece_unweighted, "weight each bin"), (ece_signed, "opposite signs")]),
}
