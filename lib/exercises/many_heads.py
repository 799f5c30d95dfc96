"""Self-checks for the chapter "Many heads, the MLP, two layers"."""
from __future__ import annotations

from lib.content.worked_examples import two_heads
from lib.exercises import Feedback, check_number, check_whole_number


def head_write(answer, head: int = 1, position: int = 2, coordinate: int = 0) -> Feedback:
    """Exercise 1: one number of one head's own write-back (its output times its slice of W_O)."""
    ex = two_heads()
    _, cache = ex.model.run_with_cache(ex.tokens)
    expected = float(cache["blocks.0.attn.head_out"][position, head, coordinate])
    return check_number(answer, expected, tol=1e-3, what="The write-back coordinate")


def mlp_weights(answer) -> Feedback:
    """Exercise 2: the numbers in one layer's W_in and W_out."""
    cfg = two_heads().model.cfg
    return check_whole_number(answer, 2 * cfg.d_model * cfg.d_mlp, what="The number of MLP weights")
