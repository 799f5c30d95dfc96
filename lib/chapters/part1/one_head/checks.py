"""Self-checks for the chapter "Q, K, V and one head, by hand"."""
from __future__ import annotations

from functools import partial
import functools
import math

import numpy as np
import torch

from lib.content.worked_examples import cat_sat
from lib.exercises import Feedback, check_number
from lib.exercises.site import Values, site_check
from lib.exercises.one_layer import random_layer, run_layer
from lib.exercises.writing import Case, Mistake, Unreadable, WriteCheck, first_future_cell, read_array
from lib.model.store import load


def _sat_row() -> dict:
    """sat's raw scores against the, cat and sat (the Q K^T row the page prints), and d_head."""
    ex = cat_sat()
    _, cache = ex.model.run_with_cache(ex.tokens)
    return {"scores": [float(s) for s in cache["blocks.0.attn.qk"][0, 2, :3]], "d_head": ex.model.cfg.d_head}


def _sat_values() -> Values:
    ex = cat_sat()
    _, cache = ex.model.run_with_cache(ex.tokens)
    return Values(float(cache["blocks.0.attn.qk"][0, 2, :3].softmax(-1)[1]),
                  hints={"scaled": float(cache["blocks.0.attn.pattern"][0, 2, 1])})


SAT_ON_CAT = site_check(__name__, "sat_on_cat_unscaled", rule="number", compute="unscaledWeight", values=_sat_values,
                        what="The weight", tol=0.003, args=_sat_row, texts={
    "scaled": "that is the weight with the scores divided by sqrt(d_head); this time take the softmax of the raw "
              "dot products."})


def sat_on_cat_unscaled(answer) -> Feedback:
    """How much "sat" would attend to "cat" if the scores were not divided by sqrt(d_head)."""
    return SAT_ON_CAT.judge(answer)


ABC_DOTS, ABC_D_HEAD = (1.0, 1.0, 2.0), 8


def _abc_values() -> Values:
    e = [math.exp(s / math.sqrt(ABC_D_HEAD)) for s in ABC_DOTS]
    return Values(e[2] / sum(e))


ABC_SELF_WEIGHT = site_check(__name__, "abc_self_weight", rule="number", compute="abcSelfWeight", values=_abc_values,
                             what="C's weight on itself", tol=0.002, args={"dots": ABC_DOTS, "d_head": ABC_D_HEAD})


def abc_self_weight(answer) -> Feedback:
    """C's weight on itself when the dot products stay (1, 1, 2) but d_head is 8."""
    return ABC_SELF_WEIGHT.judge(answer)


# ------------------------------------------------------------------ write: the causal mask
def library_mask(T: int) -> np.ndarray:
    """Where the library's attention lets query i look at key j: the cells its scores leave finite."""
    x, W_Q, W_K, W_V, W_O = random_layer(0, T, 4, 1, 2)
    return torch.isfinite(run_layer(x, W_Q, W_K, W_V, W_O)["blocks.0.attn.scores"][0]).numpy()


def _read_mask(value, like):
    """A mask as booleans (True: may look). 1/0 and additive masks (0 where allowed, -inf where
    not) are read too: they say the same thing."""
    m = read_array(value)
    if m.dtype == bool:
        return m
    values = set(np.unique(m).tolist())
    if values <= {0.0, 1.0} and not (values == {0.0} and m.shape == (1, 1)):
        return m == 1.0
    if values <= {0.0, -np.inf}:
        return m == 0.0
    shown = next(v for v in sorted(values) if v not in (0.0, 1.0))
    raise Unreadable(f"a mask holds True where a query may look and False where it may not (or 1 and 0); "
                     f"yours holds {shown:g}")


def _future_leak(case: Case, got) -> str:
    i, j = first_future_cell(got)
    return f"row {i} may look at position {j}, which comes after it: the future is not masked."


@functools.cache
def _mask_cases() -> tuple[Case, ...]:
    return tuple(Case((T,), about) for T, about in ((4, "T = 4"), (7, "T = 7"), (2, "T = 2"),
                                                    (48, "T = 48, the shipped model's whole context"),
                                                    (1, "T = 1, a prompt of one token")))


causal_mask = WriteCheck(
    name="causal_mask",
    cases=_mask_cases,
    reference=library_mask,
    read=_read_mask,
    mistakes=(
        Mistake(lambda T: np.triu(np.ones((T, T), bool)),
                "the mask is the wrong way round: row 0 may look at every later position and the last row "
                "only at itself. A query looks back at earlier positions, never ahead."),
        Mistake(lambda T: np.tril(np.ones((T, T), bool), -1),
                "row 0 may look at nothing, not even itself: a position always sees itself, so the "
                "diagonal stays open."),
        Mistake(lambda T: ~np.tril(np.ones((T, T), bool)),
                "your mask is True exactly where a query may not look: True marks the cells a query may see."),
        Mistake(lambda T: np.tril(np.ones((T, T), bool), 1),
                "row 0 may look at position 1, one step into the future: the mask must close every cell "
                "to the right of the diagonal."),
        Mistake(lambda T: np.ones((T, T), bool), _future_leak),
    ),
    invariants=(
        lambda case, got: _future_leak(case, got) if first_future_cell(got) else None,
        lambda case, got: (lambda cell: f"row {cell[0]} may not look at position {cell[1]}, which comes before it: "
                                        f"only the future is masked." if cell else None)(
            next(((i, j) for i, j in zip(*np.nonzero(np.tril(~np.asarray(got, bool))))), None)),
    ),
)


# ------------------------------------------------------------------ write: one head's pattern and output
def library_head(x, W_Q, W_K, W_V, W_O) -> tuple[np.ndarray, np.ndarray]:
    """One head's pattern [T, T] and write into the residual stream [T, d_model], as the library's
    Transformer computes them (its head 0, given these weights)."""
    cache = run_layer(x, W_Q[None], W_K[None], W_V[None], W_O[None])
    return cache["blocks.0.attn.pattern"][0].numpy(), cache["blocks.0.attn.head_out"][:, 0].numpy()


def _head_by_hand(x, W_Q, W_K, W_V, W_O, *, scale="sqrt", mask="-inf", axis=-1, transpose_scores=False,
                  transpose_pattern=False, use_W_O=True, stable=True):
    """One head written out with switches, each switch one typical mistake (the defaults are right)."""
    x, W_Q, W_K, W_V, W_O = (np.asarray(a, dtype=float) for a in (x, W_Q, W_K, W_V, W_O))
    q, k, v = x @ W_Q, x @ W_K, x @ W_V
    scores = k @ q.T if transpose_scores else q @ k.T
    d_head = W_Q.shape[1]
    scores = scores / {"sqrt": np.sqrt(d_head), "none": 1.0, "d_head": d_head}[scale]
    T = len(x)
    future = np.triu(np.ones((T, T), bool), 1)
    if mask == "-inf":
        scores = np.where(future, -np.inf, scores)
    elif mask == "zero":
        scores = np.where(future, 0.0, scores)
    if stable:
        scores = scores - scores.max(axis=axis, keepdims=True)
    e = np.exp(scores)
    pattern = e / e.sum(axis=axis, keepdims=True)
    if mask == "after":
        pattern = np.where(future, 0.0, pattern)
    z = (pattern.T if transpose_pattern else pattern) @ v
    return pattern, (z @ W_O if use_W_O else z)



def _pattern_leak(case: Case, got) -> str:
    cell = first_future_cell(got[0])
    i, j = cell if cell else (0, 1)
    return f"row {i} gives weight to position {j}: the future is not masked."


@functools.cache
def _head_cases() -> tuple[Case, ...]:
    def one(seed, T, d_model, d_head, about, scale=1.0):
        x, W_Q, W_K, W_V, W_O = random_layer(seed, T, d_model, 1, d_head, scale)
        return Case((x, W_Q[0], W_K[0], W_V[0], W_O[0]), about)

    lm = load("calling-game")
    prompt = "<BOS> Pietro chiama 5 <SEP> 5 chiama Pietro capo"
    _, cache = lm.model.run_with_cache(lm.encode(prompt))
    attn = lm.model.blocks[0].attn
    real = tuple(w.detach().double()[3] for w in (attn.W_Q, attn.W_K, attn.W_V, attn.W_O))
    return (one(1, 5, 8, 4, "5 positions, d_model 8, d_head 4"),
            Case((cache["blocks.0.resid_pre"].double(), *real),
                 f"the shipped model's layer-0 head 3 on {prompt!r}"),
            one(2, 6, 12, 3, "6 positions, d_model 12, d_head 3"),
            one(3, 1, 8, 4, "a prompt of one position"),
            one(4, 4, 8, 4, "large scores (queries and keys 40 times longer)", scale=40.0))


one_head = WriteCheck(
    name="one_head",
    cases=_head_cases,
    reference=library_head,
    mistakes=(
        Mistake(partial(_head_by_hand, scale="none"), "the scores are not divided by sqrt(d_head)."),
        Mistake(partial(_head_by_hand, scale="d_head"),
                "the scores are divided by d_head; the scale is its square root."),
        Mistake(partial(_head_by_hand, mask="none"), _pattern_leak),
        Mistake(partial(_head_by_hand, mask="zero"),
                "the future still gets weight: a masked score of 0 becomes e^0 = 1 in the softmax; a masked "
                "score must be -inf."),
        Mistake(partial(_head_by_hand, mask="after"),
                "the rows do not sum to 1: the future was zeroed after the softmax, so each row lost its share; "
                "mask the scores before the softmax."),
        Mistake(partial(_head_by_hand, axis=0),
                "the rows do not sum to 1: the softmax runs over the wrong axis (down each column, over the "
                "queries, instead of along each row, over the keys)."),
        Mistake(partial(_head_by_hand, transpose_scores=True),
                "the scores are K Q^T, not Q K^T: row i must hold query i's dot products with every key."),
        Mistake(partial(_head_by_hand, transpose_pattern=True),
                "the pattern is right but the output reads it by columns: position i's output is row i of "
                "the pattern times V."),
        Mistake(partial(_head_by_hand, use_W_O=False),
                "the output stops at the weighted sum of values: the head writes into the residual stream "
                "through W_O."),
        Mistake(partial(_head_by_hand, stable=False),
                "with large scores exp overflows to infinity and the pattern turns into NaN: subtract each "
                "row's largest score before exp (the softmax does not change)."),
    ),
    invariants=(
        lambda case, got: _pattern_leak(case, got) if first_future_cell(got[0]) else None,
        lambda case, got: (None if np.allclose(np.nan_to_num(got[0]).sum(-1), 1, atol=1e-6) else
                           "the rows of the pattern do not sum to 1: each row is a softmax over the keys."),
    ),
)
