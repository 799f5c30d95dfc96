"""Self-checks for the chapter "The residual stream on a concept plane"."""
from __future__ import annotations

from lib.analysis.ablation import all_heads, head_name
from lib.analysis.trajectory import path_view
from lib.exercises import Feedback, check_choice, check_number, same_option

PROMPT = "<BOS> Pietro chiama Paolo"


def block1_heads_off(lm, answer) -> Feedback:
    """Exercise 1: P(Tarso) with the four heads of block 1 switched off."""
    view = path_view(lm, PROMPT, heads_off=[h for h in all_heads(lm.model) if h[0] == 1])
    return check_number(answer, view.prob, tol=1e-3, what="P(Tarso)",
                        hints={view.prob_intact: "that is the intact model; switch the four heads of block 1 off."})


def single_effects(lm) -> dict[str, float]:
    """P(Tarso) with each head or MLP switched off alone, by the explorer's names."""
    out = {head_name(h): path_view(lm, PROMPT, heads_off=[h]).prob for h in all_heads(lm.model)}
    out.update({f"MLP {m}": path_view(lm, PROMPT, mlps_off=[m]).prob for m in range(lm.model.cfg.n_layers)})
    return out


def most_necessary(lm, answer) -> Feedback:
    """Exercise 2: the one component whose removal lowers P(Tarso) the most."""
    effects = single_effects(lm)
    best = min(effects, key=effects.get)
    largest_push = "MLP 1"
    wrong = (f"{answer} makes the largest push, but the answer does not depend on it the most; switch each "
             "component off and compare P(Tarso)." if same_option(answer, largest_push) and best != largest_push
             else f"switching {answer} off alone does not lower P(Tarso) the most.")
    return check_choice(answer, list(effects), best, right=f"without {answer}, P(Tarso) drops the most.", wrong=wrong)
