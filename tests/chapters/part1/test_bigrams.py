"""The self-checks of chapters/part1/bigrams (lib/chapters/part1/bigrams/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

import numpy as np



def test_bigram_two_steps_check(zero_layer):
    from lib.chapters.part1.bigrams import checks as bigrams
    from lib.model.readout import prompt_logits, softmax
    zl = zero_layer
    prefix, target = bigrams.TWO_STEPS["prefix"], bigrams.TWO_STEPS["target"]
    paths = bigrams.two_step_paths(zl, prefix, target)
    # The ways through x, summed over every x: the model's page two steps on, by brute force.
    t = zl.vocab.id(target)
    pages = [softmax(prompt_logits(zl, prefix + " " + x)) for x in zl.vocab.tokens]
    first = softmax(prompt_logits(zl, prefix))
    assert abs(sum(paths) - sum(float(first[x] * pages[x][t]) for x in range(len(pages)))) < 1e-12
    assert bigrams.two_steps_ahead(zl, sum(paths)) and bigrams.two_steps_ahead(zl, sum(paths) + 0.004)
    assert "only the way through vice" in bigrams.two_steps_ahead(zl, max(paths)).message
    assert "who called him" in bigrams.two_steps_ahead(zl, paths[zl.vocab.id("Tarso")]).message
    assert "right after Paolo" in bigrams.two_steps_ahead(zl, float(first[t])).message
    assert "rules say" in bigrams.two_steps_ahead(zl, 1).message
    assert "too high" in bigrams.two_steps_ahead(zl, 0.6).message
    assert not bigrams.two_steps_ahead(zl, ...).answered


def test_bigram_unseen_pair_check(zero_layer):
    from lib.chapters.part1.bigrams import checks as bigrams
    zl = zero_layer
    p = bigrams.unseen_probability(zl)
    assert 0 < p < 0.001, "the predict's right range is the second"
    assert bigrams.unseen_pair(zl, bigrams.range_of(p))
    assert "softmax" in bigrams.unseen_pair(zl, "exactly 0").message
    assert "how far down" in bigrams.unseen_pair(zl, "above 0.1").message
    assert [bigrams.range_of(q) for q in (0.0, 1e-5, 0.05, 0.5)] == list(bigrams.UNSEEN_RANGES)
    for garbage in (None, "zero", np.array([0.0]), 10**400, True):
        fb = bigrams.unseen_pair(zl, garbage)
        assert not fb.ok and fb.message
