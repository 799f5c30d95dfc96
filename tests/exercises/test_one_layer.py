"""The library's own attention layer on an exercise's inputs (lib.exercises.one_layer): the cache is one causal
attention layer written out here in numpy, head by head; a seed draws the same case every time."""
import numpy as np

from lib.exercises.one_layer import random_layer, run_layer


def test_the_cache_is_one_causal_attention_layer():
    x, W_Q, W_K, W_V, W_O = (t.numpy() for t in random_layer(3, T=5, d_model=6, n_heads=2, d_head=3))
    cache = run_layer(x, W_Q, W_K, W_V, W_O)
    out = np.zeros_like(x)
    for h in range(2):
        scores = (x @ W_Q[h]) @ (x @ W_K[h]).T / np.sqrt(3)
        scores[np.triu_indices(5, 1)] = -np.inf
        pattern = np.exp(scores - scores.max(1, keepdims=True))
        pattern /= pattern.sum(1, keepdims=True)
        assert np.allclose(cache["blocks.0.attn.pattern"][h].numpy(), pattern, atol=1e-12)
        out += pattern @ (x @ W_V[h]) @ W_O[h]
    assert np.allclose(cache["blocks.0.attn_out"].numpy(), out, atol=1e-12)
    assert np.allclose(cache["resid_final"].numpy(), x + out, atol=1e-12), "the layer's input is x itself"


def test_a_seed_draws_the_same_case():
    a, b = random_layer(7, 4, 8, 2, 4), random_layer(7, 4, 8, 2, 4)
    assert all(np.array_equal(p, q) for p, q in zip(a, b))
    assert not np.array_equal(random_layer(8, 4, 8, 2, 4)[0], a[0])
    assert [tuple(t.shape) for t in a] == [(4, 8), (2, 8, 4), (2, 8, 4), (2, 8, 4), (2, 4, 8)]
