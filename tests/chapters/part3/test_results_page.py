"""The self-checks of chapters/part3/results-page (lib/chapters/part3/results_page/checks.py): each accepts
the right answer and names the typical mistakes, without giving the answer away."""

import torch

from lib.chapters.part3.results_page import checks as results_page
from lib.content.prompts import CONFIDENT


def test_results_page_checks(lm):
    from lib.model.readout import prompt_logits, softmax
    # Hugging Face's order: top-k 5 leaves five near-equal players, shared out to about a fifth each.
    assert results_page.survivors_after_top_k(lm, 3) and not results_page.survivors_after_top_k(lm, 4)
    assert "whole page" in results_page.survivors_after_top_k(lm, 5).message
    assert "whole number" in results_page.survivors_after_top_k(lm, 4.5).message
    logits = prompt_logits(lm, CONFIDENT)
    hot = float(softmax(logits, 3.0).max())
    assert results_page.top_prob_at(lm, hot) and results_page.top_prob_at(lm, hot + 0.004)
    assert not results_page.top_prob_at(lm, hot + 0.01)
    # What a learner gets by hand from the ten logits the first table prints, to two decimals.
    ten = torch.round(torch.sort(logits, descending=True).values[:10] * 100) / 100
    assert results_page.top_prob_at(lm, float(softmax(ten, 3.0)[0]))
    assert "multiplied" in results_page.top_prob_at(lm, float(softmax(logits * 9, 3.0).max())).message
    hot_count, warm_count = results_page._broken_rounds(lm, 2.0, range(20)), results_page._broken_rounds(lm, 1.0, range(20))
    assert results_page.broken_rounds(lm, hot_count) and not results_page.broken_rounds(lm, hot_count + 1)
    # The count at temperature 1 is the mistake the check names (the temperature left out of the generator):
    # on the shipped model the two counts differ (7 and 4), or that hint could never be shown.
    assert warm_count != hot_count, "the same count at both temperatures: the temperature-1 hint is unreachable"
    assert "temperature 1" in results_page.broken_rounds(lm, warm_count).message
