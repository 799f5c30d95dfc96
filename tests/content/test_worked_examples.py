import math

import numpy as np
import torch

from lib.content import worked_examples as wx
from lib.content.worked_examples import ABC_D_K, ABC_KEYS, ABC_QUERY, ABC_VALUES, attend_one, cat_sat, echo_count


def test_cat_sat_runs_the_notes_matrices_through_the_model():
    ex = wx.cat_sat()
    logits, cache = ex.model.run_with_cache(ex.tokens)
    X = np.array([wx.CAT_SAT_EMBED[w] for w in wx.SENTENCE])
    Q, K, V = X @ np.array(wx.CAT_SAT_W_Q), X @ np.array(wx.CAT_SAT_W_K), X @ np.array(wx.CAT_SAT_W_V)
    scores = Q @ K.T / np.sqrt(5)
    scores[np.triu_indices(3, 1)] = -np.inf
    pattern = np.exp(scores - scores.max(1, keepdims=True))
    pattern /= pattern.sum(1, keepdims=True)
    assert np.allclose(cache["blocks.0.attn.q"][:, 0].numpy(), Q, atol=1e-6)
    assert np.allclose(cache["blocks.0.attn.pattern"][0].numpy(), pattern, atol=1e-6)
    h = X + pattern @ V  # W_O is the identity
    assert np.allclose(cache["resid_final"].numpy(), h, atol=1e-6)
    assert np.allclose(logits.numpy(), h @ ex.model.W_E.detach().numpy().T, atol=1e-5)
    # The note's hand-rounded first query row matches; its third row does not (see the chapter).
    assert np.allclose(Q[1], wx.NOTE_CAT_SAT["Q"][1], atol=0.005)
    assert not np.allclose(Q[2], wx.NOTE_CAT_SAT["Q"][2], atol=0.05)


def test_two_heads_per_head_view_equals_the_concatenated_view():
    ex = wx.two_heads()
    _, cache = ex.model.run_with_cache(ex.tokens)
    h0 = torch.tensor(wx.TWO_HEADS_H0)
    assert torch.allclose(cache["blocks.0.resid_pre"], h0, atol=1e-6)
    attn = ex.model.blocks[0].attn
    Q_full = h0 @ wx.concat_heads(attn.W_Q)
    assert Q_full.shape == (3, 6)
    assert torch.allclose(Q_full[:, 3:], cache["blocks.0.attn.q"][:, 1], atol=1e-6)
    z = cache["blocks.0.attn.z"]                       # [T, head, d_head]
    concat = z.reshape(3, 6)                            # heads side by side
    assert torch.allclose(concat @ wx.concat_W_O(attn.W_O), cache["blocks.0.attn_out"], atol=1e-6)
    assert torch.allclose(cache["blocks.0.attn.head_out"].sum(1), cache["blocks.0.attn_out"], atol=1e-6)
    assert cache["blocks.0.mlp.pre"].shape == (3, 8)
    assert (cache["blocks.0.mlp.post"] >= 0).all()


def test_reading_numbers_off_the_examples_raises_no_warning():
    # The many-heads chapter recomputes one MLP row from the weights and prints the gap as a float;
    # a weight that still asked for gradients made torch warn on that page.
    import warnings
    for ex in (wx.cat_sat(), wx.two_heads()):
        assert not any(p.requires_grad for p in ex.model.parameters())
    ex = wx.two_heads()
    _, cache = ex.model.run_with_cache(ex.tokens)
    mlp = ex.model.blocks[0].mlp
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alone = torch.relu(cache["blocks.0.resid_mid"][2:3] @ mlp.W_in + mlp.b_in)
        assert float((alone[0] - cache["blocks.0.mlp.post"][2]).abs().max()) < 1e-6
        ex.model.blocks[0].attn.W_O.numpy()


def test_abc_reproduces_the_sources_weights():
    w = attend_one(ABC_QUERY, ABC_KEYS, ABC_VALUES, ABC_D_K)["weights"]
    assert np.allclose(w, (0.25, 0.25, 0.5), atol=0.01) and math.isclose(w.sum(), 1)

def test_a_tied_toy_prefers_the_word_it_just_read():
    hits, tried = echo_count(cat_sat())
    assert tried == 20 and hits > 5, "far above the one word a blind guess would get"
