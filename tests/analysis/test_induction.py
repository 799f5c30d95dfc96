"""The induction measurements against an independent computation: a plain numpy forward pass of the
attention-only model, written here from the weights alone, on sequences the course never shows."""
import numpy as np
import pytest
import torch

from lib.analysis import induction
from lib.content.corpora import repeats
from lib.errors import CourseError

# Sequence seeds no page and no claim uses (the pages use 0, 1, 2; the trainer's monitor 20260).
FRESH = 7919
TOL = 1e-5      # float32 forward pass in the library against float64 here


def weights(model):
    return {k: v.detach().double().numpy() for k, v in model.state_dict().items()}


def numpy_forward(w, ids, n_layers=2, k_resid=None):
    """Logits [batch, T, vocab] and patterns per layer [batch, head, T, T] of an attention-only model
    without LayerNorm. `k_resid`: {layer: residual stream [batch, T, d] that layer's keys read instead}."""
    x = w["W_E"][ids] + w["W_pos"][: ids.shape[1]]
    T = ids.shape[1]
    mask = np.triu(np.ones((T, T), bool), 1)
    patterns, outs = [], []
    for layer in range(n_layers):
        p = f"blocks.{layer}.attn."
        q = np.einsum("btd,hde->bhte", x, w[p + "W_Q"])
        xk = x if k_resid is None or layer not in k_resid else k_resid[layer]
        k = np.einsum("btd,hde->bhte", xk, w[p + "W_K"])
        v = np.einsum("btd,hde->bhte", x, w[p + "W_V"])
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
        s[:, :, mask] = -np.inf
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        patterns.append(a)
        head_out = np.einsum("bhte,hed->bthd", a @ v, w[p + "W_O"])
        outs.append(head_out)
        x = x + head_out.sum(2)
    return x @ w["W_U_own"] + w["b_U"], patterns, outs


def test_pattern_scores_equal_a_numpy_forward_pass(induction_model):
    model = induction_model.model
    batches = induction.sequences(FRESH, per_period=4)
    got = induction.pattern_scores(model, batches)
    w = weights(model)
    prev, dup, ind, n_prev, n_ind = np.zeros((2, 4)), np.zeros((2, 4)), np.zeros((2, 4)), 0, 0
    assert len({b.filler for b in batches}) > 1, "the sequences draw fillers of several lengths"
    for b in batches:
        _, pats, _ = numpy_forward(w, b.ids)
        p, f = b.period, b.filler
        for layer, a in enumerate(pats):
            for s in range(len(b.ids)):
                for i in range(1, f + 2 * p + 1):
                    prev[layer] += a[s, :, i, i - 1]
                for i in range(f + p + 1, f + 2 * p + 1):
                    ind[layer] += a[s, :, i, i - p + 1]
                    dup[layer] += a[s, :, i, i - p]
        n_prev += len(b.ids) * (f + 2 * p)
        n_ind += len(b.ids) * p
    assert np.allclose(got["previous"], prev / n_prev, atol=TOL)
    assert np.allclose(got["induction"], ind / n_ind, atol=TOL)
    assert np.allclose(got["duplicate"], dup / n_ind, atol=TOL)


def test_copy_losses_equal_a_numpy_forward_pass(induction_model):
    model = induction_model.model
    batches = induction.sequences(FRESH + 1, per_period=4)
    got = induction.in_context_loss(model, batches)
    w = weights(model)
    first, second = [], []
    for b in batches:
        logits, _, _ = numpy_forward(w, b.ids[:, :-1])
        logp = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
            - logits.max(-1, keepdims=True)
        p, f = b.period, b.filler
        for s in range(len(b.ids)):
            first += [-logp[s, i, b.ids[s, i + 1]] for i in range(f + 1, f + p)]
            second += [-logp[s, i, b.ids[s, i + 1]] for i in range(f + p + 1, f + 2 * p)]
    assert got["first_copy_loss"] == pytest.approx(np.mean(first), abs=1e-4)
    assert got["second_copy_loss"] == pytest.approx(np.mean(second), abs=1e-4)
    # the model has learned the task: the second copy is nearly free, the first is not
    assert got["second_copy_loss"] < 0.2 < 3.0 < got["first_copy_loss"]


def test_composition_scores_follow_the_definition(induction_model):
    model = induction_model.model
    w = weights(model)
    got = induction.composition_scores(model)

    def score(x, y):
        return np.linalg.norm(x @ y) / (np.linalg.norm(x) * np.linalg.norm(y))
    for a in range(4):
        ov_a = w["blocks.0.attn.W_V"][a] @ w["blocks.0.attn.W_O"][a]
        for b in range(4):
            qk_b = w["blocks.1.attn.W_Q"][b] @ w["blocks.1.attn.W_K"][b].T
            ov_b = w["blocks.1.attn.W_V"][b] @ w["blocks.1.attn.W_O"][b]
            assert got["K"][a, b] == pytest.approx(score(qk_b, ov_a.T), rel=1e-9)
            assert got["Q"][a, b] == pytest.approx(score(ov_a, qk_b), rel=1e-9)
            assert got["V"][a, b] == pytest.approx(score(ov_a, ov_b), rel=1e-9)
    base = induction.composition_baseline(model.cfg, draws=20)
    # random 64x64 matrices of rank 16: the score sits near 1/4, far below 1
    assert all(0.05 < v < 0.4 for v in base.values())


def test_k_path_patching_equals_a_numpy_forward_pass(induction_model):
    """Path patching sender -> receiver's keys: computed here by running layer 1's keys on a residual
    stream whose sender's write comes from the partner sequence, everything else clean."""
    model = induction_model.model
    batches = induction.sequences(FRESH + 2, per_period=3, periods=[5, 9])
    sender, receiver = (0, 1), (1, 2)
    got = induction.path_patch(model, batches, sender, receiver, "K")
    w = weights(model)
    losses = []
    for b in batches:
        ids, other = b.ids[:, :-1], np.roll(b.ids, 1, axis=0)[:, :-1]
        _, _, outs_c = numpy_forward(w, ids)
        _, _, outs_o = numpy_forward(w, other)
        x1 = w["W_E"][ids] + w["W_pos"][: ids.shape[1]] + outs_c[0].sum(2)
        k_in = x1 - outs_c[0][:, :, sender[1]] + outs_o[0][:, :, sender[1]]
        # only the receiver's keys read k_in: build layer 1 by hand
        p = "blocks.1.attn."
        q = np.einsum("btd,hde->bhte", x1, w[p + "W_Q"])
        k = np.einsum("btd,hde->bhte", x1, w[p + "W_K"])
        k[:, receiver[1]] = k_in @ w[p + "W_K"][receiver[1]]
        v = np.einsum("btd,hde->bhte", x1, w[p + "W_V"])
        T = ids.shape[1]
        s = q @ k.transpose(0, 1, 3, 2) / 4.0
        s[:, :, np.triu(np.ones((T, T), bool), 1)] = -np.inf
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        x2 = x1 + np.einsum("bhte,hed->btd", a @ v, w[p + "W_O"])
        logits = x2 @ w["W_U_own"] + w["b_U"]
        m = logits.max(-1, keepdims=True)
        logp = logits - m - np.log(np.exp(logits - m).sum(-1, keepdims=True))
        for s_ in range(len(ids)):
            losses += [-logp[s_, i, b.ids[s_, i + 1]] for i in range(b.filler + b.period + 1, b.filler + 2 * b.period)]
    assert got["loss"] == pytest.approx(np.mean(losses), abs=1e-4)


def test_resample_ablation_of_nothing_is_the_clean_run_and_of_a_head_costs(induction_model):
    model = induction_model.model
    batches = induction.sequences(FRESH + 3, per_period=4)
    clean = induction.clean(model, batches)
    assert induction.resample_ablation(model, batches, [])["loss"] == pytest.approx(clean["loss"], abs=1e-9)
    r = induction.roles(induction.pattern_scores(model, batches))
    assert induction.resample_ablation(model, batches, [r.induction])["loss"] > clean["loss"] + 0.1


def test_bad_input_is_one_clear_line(induction_model):
    model = induction_model.model
    batches = induction.sequences(FRESH, per_period=2, periods=[4])
    with pytest.raises(CourseError, match="via must be one of"):
        induction.path_patch(model, batches, (0, 0), (1, 0), "X")
    with pytest.raises(CourseError, match="earlier layer"):
        induction.path_patch(model, batches, (1, 0), (1, 1), "K")
    with pytest.raises(CourseError, match="a period is from 2"):
        repeats.repeated_batch(np.random.default_rng(0), 2, 40, {t: i for i, t in enumerate(repeats.TOKENS)})
    with pytest.raises(CourseError, match="two sequences or more"):
        induction.resample_ablation(model, induction.sequences(FRESH, per_period=1, periods=[4]), [(0, 0)])
