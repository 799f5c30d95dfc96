"""Self-checks for the chapter "Many heads, the MLP, two layers"."""
from __future__ import annotations

import functools

import numpy as np

from lib.content.worked_examples import concat_heads, two_heads
from lib.exercises import Feedback, check_whole_number
from lib.exercises.site import Values, site_check
from lib.exercises.one_layer import random_layer, run_layer
from lib.exercises.writing import Case, Mistake, WriteCheck
from lib.model.store import load


def _mlp_sizes() -> dict:
    cfg = two_heads().model.cfg
    return {"d_model": cfg.d_model, "d_mlp": cfg.d_mlp}


def _mlp_values() -> Values:
    d, m = _mlp_sizes()["d_model"], _mlp_sizes()["d_mlp"]
    return Values(2 * d * m, hints={"one": d * m, "biases": 2 * d * m + d + m, "square": d * d + m * m})


MLP_WEIGHTS = site_check(__name__, "mlp_weights", rule="whole", compute="mlpWeights", values=_mlp_values,
                         units=("weights", "weight"),
                         what="The number of MLP weights", args=_mlp_sizes(), texts={
    "one": "that is one of the two matrices; the MLP reads the stream with W_in and writes back with W_out.",
    "biases": "that counts the biases too; the question leaves them out.",
    "square": "W_in turns a stream of d_model numbers into d_mlp hidden units: its shape is d_model by d_mlp, not "
              "square."})


def mlp_weights(answer) -> Feedback:
    """The numbers in one layer's W_in and W_out, biases left out."""
    return MLP_WEIGHTS.judge(answer)


# ------------------------------------------------------------------ write: split Q into heads, merge back
# The cases run the library's layer: Q is x times the heads' W_Q side by side (one projection), and
# the right split is the library's own per-head queries; the right merge is the layout its W_O,
# stacked head after head, reads (the cache's z, [position, head, d_head], flattened).
@functools.cache
def _layer_cases() -> tuple[tuple, ...]:
    """(Q as one projection [T, heads x d_head], the library's queries [T, head, d_head], its z
    [T, head, d_head], what the case is) for random layers and the shipped model's layer 1."""
    out = []
    for seed, T, H, Dh, about in ((1, 5, 4, 3, "5 positions, 4 heads of size 3"),
                                  (2, 3, 2, 8, "3 positions, 2 heads of size 8"),
                                  (3, 1, 3, 2, "one position, 3 heads of size 2"),
                                  (4, 6, 1, 5, "6 positions, a single head of size 5")):
        x, W_Q, W_K, W_V, W_O = random_layer(seed, T, H * Dh + 1, H, Dh)
        cache = run_layer(x, W_Q, W_K, W_V, W_O)
        out.append((x @ concat_heads(W_Q), cache["blocks.0.attn.q"], cache["blocks.0.attn.z"], about))
    lm = load("calling-game")
    prompt = "<BOS> Pietro chiama Paolo"
    _, cache = lm.model.run_with_cache(lm.encode(prompt))
    W_Q = lm.model.blocks[1].attn.W_Q.detach()
    out.insert(1, (cache["blocks.1.resid_pre"] @ concat_heads(W_Q), cache["blocks.1.attn.q"],
                   cache["blocks.1.attn.z"], f"the shipped model's layer 1 on {prompt!r}"))
    return tuple(out)


def _split_cases() -> list[Case]:
    return [Case((Q.double(), q.shape[1]), about, expected=q.transpose(0, 1).double().numpy())
            for Q, q, _, about in _layer_cases()]


def _merge_cases() -> list[Case]:
    return [Case((z.transpose(0, 1).double(),), about, expected=z.reshape(z.shape[0], -1).double().numpy())
            for _, _, z, about in _layer_cases()]


def _split_by_rows(Q, n_heads):
    Q = np.asarray(Q)
    return Q.reshape(n_heads, Q.shape[0], -1)


def _split_interleaved(Q, n_heads):
    Q = np.asarray(Q)
    return Q.reshape(Q.shape[0], -1, n_heads).transpose(2, 0, 1)


def _split_no_swap(Q, n_heads):
    Q = np.asarray(Q)
    return Q.reshape(Q.shape[0], n_heads, -1)


split_heads = WriteCheck(
    name="split_heads",
    cases=_split_cases,
    mistakes=(
        Mistake(_split_by_rows,
                "each head's slice mixes several positions: a reshape straight to [head, position, d_head] "
                "reads Q row after row and cuts across positions; split the columns into heads first."),
        Mistake(_split_interleaved,
                "head 0 takes every n_heads-th column of Q; in this model each head owns d_head neighbouring "
                "columns (the heads' W_Q sit side by side)."),
        Mistake(_split_no_swap,
                "the axes come out as [position, head, d_head]; the task asks for [head, position, d_head]."),
    ),
)


def _merge_no_swap(Z):
    Z = np.asarray(Z)
    return Z.reshape(Z.shape[1], -1)


def _merge_interleaved(Z):
    Z = np.asarray(Z)
    return Z.transpose(1, 2, 0).reshape(Z.shape[1], -1)


def _merge_sum(Z):
    return np.asarray(Z).sum(0)


merge_heads = WriteCheck(
    name="merge_heads",
    cases=_merge_cases,
    mistakes=(
        Mistake(_merge_no_swap,
                "each row mixes several positions: a reshape of [head, position, d_head] straight to "
                "[position, head x d_head] reads the heads one after the other; bring the position axis first."),
        Mistake(_merge_interleaved,
                "the heads' columns are interleaved; W_O expects head 0's d_head columns, then head 1's, "
                "and so on."),
        Mistake(_merge_sum,
                "the heads were added together; merging sets them side by side (W_O then mixes them)."),
    ),
)
