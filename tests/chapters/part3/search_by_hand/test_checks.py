"""The self-checks of chapters/part3/search-by-hand (lib/chapters/part3/search_by_hand/checks.py): each
accepts the right answer and names the typical mistakes, without giving the answer away."""

import numpy as np

from lib.chapters.part3.search_by_hand import checks as check


def test_search_by_hand_checks(lm):
    assert not check.logit_of_cefa(...).answered
    assert check.logit_of_cefa(0.2 * 0.3 + 1.0 * 1.0 + 0.4 * 0.2)
    assert "chapter's query" in check.logit_of_cefa(0.3 + 0.5 - 0.04).message
    assert not check.winner_for_query("Tarso") and check.winner_for_query("Cefa")
    assert "chapter's query" in check.winner_for_query("Tarso").message
    assert "not the largest" in check.winner_for_query("Paolo").message
    assert "one of" in check.winner_for_query("banana").message
    assert check.smallest_scale(5) and not check.smallest_scale(6) and not check.smallest_scale(4)
    assert "whole number" in check.smallest_scale(2.5).message
    assert "raise" in check.temperature_for_half(lm, 1.0).message
    assert "positive" in check.temperature_for_half(lm, -1).message


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def search_page(query, dictionary):
    scores = dictionary @ query
    e = np.exp(scores - scores.max())
    return e / e.sum()


WRITE_CHECKS = {
    "search_page": (check.search_page, search_page, [
        (lambda q, d: d @ q, "these are the scores"),
        (lambda q, d: search_page(q / np.linalg.norm(q), d / np.linalg.norm(d, axis=1, keepdims=True)), "cosines"),
        (lambda q, d: np.sort(search_page(q, d))[::-1], "sorted"),
    ]),
}
