"""The self-checks of chapters/part1/induction (lib/chapters/part1/induction/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""
import numpy as np
import pytest

from lib.analysis import induction
from lib.chapters.part1.induction import checks


# A learner's solutions, as written on the page. tests/exercises/test_writing.py gathers every chapter's
# WRITE_CHECKS (name -> (the check, a right function, [(a typical wrong function, words its diagnosis must
# contain), ...])) and runs each check on its right function, its wrong ones and garbage.
def prefix_matching_score(pattern, tokens):
    a = np.asarray(pattern, dtype=float)
    shares = []
    for i, t in enumerate(tokens):
        after = [j + 1 for j in range(i) if tokens[j] == t]
        if after:
            shares.append(a[i, after].sum())
    return float(np.mean(shares)) if shares else 0.0


def _only_the_latest(pattern, tokens):
    a = np.asarray(pattern, dtype=float)
    shares = []
    for i, t in enumerate(tokens):
        after = [j + 1 for j in range(i) if tokens[j] == t]
        if after:
            shares.append(a[i, after[-1]])
    return float(np.mean(shares)) if shares else 0.0


WRITE_CHECKS = {
    "prefix_matching_score": (checks.prefix_matching_score, prefix_matching_score, [
        (checks._prefix_shifted, "earlier occurrence of the query's token itself"),
        (checks._prefix_all_queries, "every query"),
        (_only_the_latest, "too low"),
    ]),
}


def test_the_prefix_matching_score_is_the_induction_score_on_repeated_segments(induction_model):
    batches = induction.sequences(4242, per_period=2)
    want = induction.pattern_scores(induction_model.model, batches)["induction"]
    got = np.zeros_like(want)
    n = 0
    import torch
    for b in batches:
        for row in b.ids:
            _, cache = induction_model.model.run_with_cache(torch.as_tensor(row))
            for layer in range(2):
                for h in range(4):
                    # each sequence counts its p second-copy queries, as pattern_scores does
                    got[layer, h] += b.period * induction.prefix_matching_score(
                        cache[f"blocks.{layer}.attn.pattern"][h].numpy(), row.tolist())
            n += b.period
    assert np.allclose(got / n, want, atol=1e-6)


def test_the_value_checks(induction_model, calling_game):
    lm = induction_model
    right = checks.ABLATE_INDUCTION.computed(lm).expected
    assert checks.ablate_induction_heads(lm, right)
    wrong = next(o for o in checks.ABLATION_OPTIONS if o != right)
    fb = checks.ablate_induction_heads(lm, wrong)
    assert not fb and right not in fb.message
    assert "one of" in checks.ablate_induction_heads(lm, "it goes up").message
    name = checks.K_READER.computed(lm).expected
    assert checks.k_reader(lm, name)
    fb = checks.k_reader(lm, next(h for h in ("L1H0", "L1H1") if h != name))
    assert not fb and name not in fb.message
    assert "reads the induction model" in checks.k_reader(calling_game, name).message
