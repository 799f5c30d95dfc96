"""The self-checks of chapters/part3/results-page (lib/chapters/part3/results_page/checks.py): each accepts
the right answer and names the typical mistakes, without giving the answer away."""

import numpy as np
import pytest
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


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def softmax_with_temperature(logits, temperature):
    z = logits / temperature
    z = z - z.max()
    return z.exp() / z.exp().sum()


def top_k_top_p(probs, top_k=None, top_p=None):
    p = np.asarray(probs, dtype=float)
    order = np.argsort(-p)
    keep = np.zeros(len(p), bool)
    keep[order[: top_k or len(p)]] = True
    if top_p is not None:
        kept = np.where(keep, p, 0) / p[keep].sum()
        total = 0.0
        survivors = np.zeros(len(p), bool)
        for i in order:
            if not keep[i]:
                break
            survivors[i] = True
            total += kept[i]
            if total >= top_p:
                break
        keep = survivors
    out = np.where(keep, p, 0.0)
    return out / out.sum()


def rules_processor(prefix, logits):
    from lib.content.corpora.calling_game import next_token_distribution
    from lib.model.store import load

    rules = next_token_distribution(list(prefix))
    allowed = torch.tensor([rules.get(t, 0) > 0 for t in load("calling-game").vocab.tokens])
    return torch.where(allowed, logits, torch.tensor(float("-inf"), dtype=logits.dtype))


WRITE_CHECKS = {
    "softmax_with_temperature": (results_page.softmax_with_temperature, softmax_with_temperature, [
        (lambda z, t: softmax_with_temperature(z * t * t, t), "multiplies the logits"),
        (lambda z, t: softmax_with_temperature(z, 1.0), "does not change with the temperature"),
        (lambda z, t: (z / t).exp() / (z / t).exp().sum(), "overflows"),
    ]),
    "top_k_top_p": (results_page.top_k_top_p, top_k_top_p, [
        (lambda p, top_k=None, top_p=None: top_k_top_p(p, top_k) * (top_k_top_p(p, None, top_p) > 0) /
         (top_k_top_p(p, top_k) * (top_k_top_p(p, None, top_p) > 0)).sum(), "judged on the probabilities of the whole page"),
        (lambda p, top_k=None, top_p=None: np.asarray(p) * (top_k_top_p(p, top_k, top_p) > 0), "do not add up to 1"),
        (lambda p, top_k=None, top_p=None: top_k_top_p(-np.asarray(p) + 1, top_k, top_p), "less likely than one it cut"),
    ]),
    "rules_processor": (results_page.rules_processor, rules_processor, [
        (lambda prefix, logits: torch.where(rules_processor(prefix, logits).isinf(), torch.zeros_like(logits), logits),
         "set to 0"),
        (lambda prefix, logits: torch.softmax(rules_processor(prefix, logits), 0), "returned probabilities"),
        (lambda prefix, logits: logits, "left every logit"),
    ]),
}
