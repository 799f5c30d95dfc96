"""The bigram table (lib.analysis.bigrams): counted from the game's rounds, and what the zero-layer model learns."""
import numpy as np

from lib.analysis.bigrams import bigram_table, compare


def test_the_zero_layer_model_learns_the_bigram_table(zero_layer):
    tokens, counts, probs = bigram_table(n_rounds=2000)
    assert np.allclose(probs[counts.sum(1) > 0].sum(1), 1)
    r = compare(zero_layer, probs, counts)
    assert r["max_gap"] < 0.1 and r["predecessors"] == 26
