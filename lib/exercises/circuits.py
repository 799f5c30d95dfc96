"""Self-checks for the chapter "Circuits: who attends, and what moves"."""
from __future__ import annotations

import numpy as np

from lib.analysis.ablation import all_heads, head_name
from lib.analysis.circuits import head_habits, ov_circuit
from lib.exercises import Feedback, check_choice, check_whole_number, per_model


def ov_rank(lm, answer, layer: int = 0, head: int = 3) -> Feedback:
    """Exercise 1: the rank of one head's W_OV (singular values above a relative 1e-5)."""
    s = np.linalg.svd(ov_circuit(lm.model, layer, head), compute_uv=False)
    return check_whole_number(answer, int((s > s[0] * 1e-5).sum()), what="The rank")


@per_model
def _most_self_attending(lm) -> str:
    habits = head_habits(lm)
    return head_name(max(all_heads(lm.model), key=lambda h: habits.shares[h]["the callee itself"]))


def most_self_attending(lm, answer) -> Feedback:
    """Exercise 2: the head that puts most attention on the callee itself."""
    names = [head_name(h) for h in all_heads(lm.model)]
    return check_choice(answer, names, _most_self_attending(lm), right=f"{answer} looks at the callee itself the most.",
                        wrong=f"{answer} is not the one; compare the 'itself' share of every head.")
