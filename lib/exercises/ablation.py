"""Self-checks for the chapter "Switching attention off"."""
from __future__ import annotations

from lib.analysis.ablation import all_heads, head_effects, head_name
from lib.model.readout import token_prob
from lib.exercises import Feedback, check_choice, check_number

CEFA_PROMPT = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"


def cefa_head(lm, answer) -> Feedback:
    """Exercise 1: the single head whose ablation lowers P(Cefa) the most."""
    effects = head_effects(lm, CEFA_PROMPT, "Cefa")
    best = min((g for g in effects if g), key=effects.get)
    names = [head_name(h) for h in all_heads(lm.model)]
    return check_choice(answer, names, head_name(best[0]),
                        right=f"switching {answer} off drops Cefa to {effects[best]:.3f}.",
                        wrong=f"switching {answer} off leaves Cefa higher than another head does; try them all.")


def layer0_off(lm, answer) -> Feedback:
    """Exercise 2: P(Tarso) on the confident prompt with every head of layer 0 switched off."""
    p = token_prob(lm, "<BOS> Pietro chiama Paolo", "Tarso", ablate=[(0, h) for h in range(lm.model.cfg.n_heads)])
    return check_number(answer, p, tol=0.002, what="P(Tarso)")
