"""The QK and OV circuits of a head, and a summary of where each head looks.

A head does two separable things. Its QK circuit, W_Q W_K^T, decides who attends to whom; its OV
circuit, W_OV = W_V W_O, decides what moves once a position is attended to. Both are d_model x
d_model matrices of rank at most d_head. Read in token space (multiplying by the embedding on the
way in and the unembedding on the way out), the QK circuit scores each query token against each
key token, and the OV circuit says how attending to a token changes each next-token logit.
`head_habits` summarises where each head looks when the epithet is decided, over labelled prompts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.analysis.head_survey import attention_survey
from lib.content.prompt_sets import epithet_sets
from lib.errors import CourseError, require


def qk_circuit(model, layer: int, head: int) -> np.ndarray:
    attn = model.blocks[layer].attn
    return (attn.W_Q[head] @ attn.W_K[head].T).detach().double().numpy()


def ov_circuit(model, layer: int, head: int) -> np.ndarray:
    """W_OV = W_V W_O [d_model, d_model]: what the head writes for a given attended residual vector."""
    attn = model.blocks[layer].attn
    return (attn.W_V[head] @ attn.W_O[head]).detach().double().numpy()


def token_qk(model, layer: int, head: int) -> np.ndarray:
    """[query token, key token] attention scores between bare embeddings (positions left out), scaled."""
    E = model.W_E.detach().double().numpy()
    return E @ qk_circuit(model, layer, head) @ E.T / np.sqrt(model.cfg.d_head)


def token_ov(model, layer: int, head: int) -> np.ndarray:
    """[attended token, next-token logit]: the direct effect on the logits of attending to each token."""
    E = model.W_E.detach().double().numpy()
    return E @ ov_circuit(model, layer, head) @ model.W_U.detach().double().numpy()


def ov_copies(model, layer: int, head: int, tokens: list[int]) -> list[bool]:
    """For each token id: does attending to it raise that same token's logit more than any other's?
    A head whose OV circuit does this for a whole class of tokens is a copying head."""
    ov = token_ov(model, layer, head)
    return [int(np.argmax(ov[i])) == i for i in tokens]


# Where a head can look from the position where the epithet is decided (the callee just named),
# each habit a place of `prompt_sets.places`; what is left over is "elsewhere".
HABIT_PLACES = {"<BOS>": "<BOS>", "the callee itself": "itself", "chiama": "chiama", "the caller": "the caller",
                "where the caller was called": "where the caller was called"}
HABITS = tuple(HABIT_PLACES) + ("elsewhere",)


@dataclass(frozen=True)
class HeadHabits:
    shares: dict[tuple[int, int], dict[str, float]]   # head -> habit -> mean attention share
    positions: int                                     # prompts (one query position each) averaged over

    def main_habit(self, head) -> tuple[str, float]:
        habit = max(self.shares[head], key=self.shares[head].get)
        return habit, self.shares[head][habit]


def later_turn_epithet_prompts(lm, n_each: int = 40) -> list:
    """The later-turn epithet prompts the habits are measured on: `n_each` for each epithet."""
    sets = epithet_sets(n_each, max_tokens=lm.model.cfg.n_ctx)
    return [p for group in sets.values() for p in group]


def head_habits(lm, prompts=None) -> HeadHabits:
    """Where each head looks from the position where the epithet is decided, averaged over labelled
    later-turn prompts (by default 40 for each epithet): <BOS>, the callee itself, `chiama`, the
    caller, the place where the caller was called in the turn before, and everything else."""
    prompts = later_turn_epithet_prompts(lm) if prompts is None else list(prompts)
    for p in prompts:
        require(p.kind == "epithet-later-turn", f"habits are measured on later-turn epithet prompts, not {p.kind!r}")
    survey = attention_survey(lm, prompts, list(HABIT_PLACES.values()))
    shares = {}
    for head, by_place in survey.items():
        row = {habit: by_place[place].mean for habit, place in HABIT_PLACES.items()}
        row["elsewhere"] = 1.0 - sum(row.values())
        shares[head] = row
    return HeadHabits(shares, len(prompts))


# ----------------------------------------------------------------------------- the pattern viewer
@dataclass(frozen=True)
class PatternView:
    tokens: list[str]
    layer: int
    head: int
    pattern: list[list[float]]   # [query, key], rows sum to 1, zero above the diagonal


def pattern_view(lm, prompt: str, layer: int, head: int) -> PatternView:
    """One head's attention pattern on a prompt (the attention-pattern viewer)."""
    ids = lm.encode(prompt)
    cfg = lm.model.cfg
    if not (isinstance(layer, int) and 0 <= layer < cfg.n_layers and isinstance(head, int) and 0 <= head < cfg.n_heads):
        raise CourseError(f"head (layer {layer!r}, head {head!r}) does not exist: layers run 0 to {cfg.n_layers - 1}, "
                          f"heads 0 to {cfg.n_heads - 1}")
    _, cache = lm.model.run_with_cache(ids)
    return PatternView(lm.vocab.decode(ids), layer, head, cache[f"blocks.{layer}.attn.pattern"][head].tolist())
