"""Self-checks for the chapter "Circuits: who attends, and what moves"."""
from __future__ import annotations

import numpy as np

from lib.analysis.ablation import all_heads, head_name
from lib.chapters.part1.circuits.circuits import head_habits, ov_circuit
from lib.content.prompt_sets import epithet_sets
from lib.exercises import Feedback, check_choice, check_whole_number, per_model
from lib.exercises.site import Values, site_check
from lib.model.store import load

PAIR = ((0, 1), (0, 3))   # two heads of layer 0, whose OV circuits the learner adds
RANK_TOL = 1e-5           # a singular value counts above this share of the largest


def _rank(M: np.ndarray) -> int:
    """Singular values above a relative RANK_TOL, as the chapter counts them."""
    s = np.linalg.svd(M, compute_uv=False)
    return int((s > s[0] * RANK_TOL).sum())


def _rank_values(lm) -> Values:
    cfg = lm.model.cfg
    return Values(_rank(sum(ov_circuit(lm.model, layer, head) for layer, head in PAIR)),
                  hints={"one_head": cfg.d_head, "d_model": cfg.d_model})


PAIR_OV_RANK = site_check(__name__, "pair_ov_rank", rule="whole", compute="ovRank", values=_rank_values,
                          what="The rank", model="calling-game", args={"pair": PAIR, "tol": RANK_TOL}, texts={
    "one_head": "that is one head's rank; each head adds directions of its own, and two heads' output directions "
                "need not coincide.",
    "d_model": "d_model bounds the rank, but each of the two heads brings at most d_head directions."})


def pair_ov_rank(lm, answer) -> Feedback:
    """The rank of the sum of two heads' OV circuits (what the two write together)."""
    return PAIR_OV_RANK.judge(answer, lm)


def _capo_set(lm):
    return epithet_sets(40, max_tokens=lm.model.cfg.n_ctx)["capo"]


@per_model
def _most_self_attending_capo(lm) -> str:
    habits = head_habits(lm, _capo_set(lm))
    return head_name(max(all_heads(lm.model), key=lambda h: habits.shares[h]["the callee itself"]))


def _self_values(lm) -> Values:
    return Values(_most_self_attending_capo(lm), options=tuple(head_name(h) for h in all_heads(lm.model)))


def _capo_prompts() -> dict:
    """The page's input: the 40 prompts (the question's set, not its answer: the page runs them)."""
    return {"prompts": [p.text for p in _capo_set(load("calling-game"))]}


MOST_SELF_ATTENDING = site_check(__name__, "most_self_attending_capo", rule="choice", compute="selfAttention",
                                 values=_self_values, model="calling-game", args=_capo_prompts, texts={
    "right": "on the capo prompts {answer} looks at the callee itself the most.",
    "wrong": "not on the capo prompts: measure the share on the callee itself for every head, over those 40 prompts "
             "only."})


def most_self_attending_capo(lm, answer) -> Feedback:
    """Over the 40 later-turn capo prompts, the head that puts most attention on the callee itself."""
    return MOST_SELF_ATTENDING.judge(answer, lm)
