"""The self-checks of chapters/part1/bigrams (lib/chapters/part1/bigrams/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

import numpy as np

from lib.chapters.part1.bigrams import checks as bigrams


def test_bigram_two_steps_check(zero_layer):
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


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def bigram_table(rounds, tokens):
    index = {t: i for i, t in enumerate(tokens)}
    table = [[0.0] * len(tokens) for _ in tokens]
    for words in rounds:
        for a, b in zip(words, words[1:]):
            table[index[a]][index[b]] += 1
    return [[c / sum(row) if sum(row) else 0.0 for c in row] for row in table]


WRITE_CHECKS = {
    "bigram_table": (bigrams.bigram_table, bigram_table, [
        (lambda rounds, tokens: np.array(bigram_table(rounds, tokens)).T, "transposed"),
        (lambda rounds, tokens: bigram_table([[w for r in rounds for w in r]], tokens), "across the end of one round"),
        (lambda rounds, tokens: np.array(bigram_table(rounds, tokens)) * 3, "sum to 1"),
    ]),
}
