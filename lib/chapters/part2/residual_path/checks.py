"""Self-checks for the chapter "The residual stream on a concept plane".

The page follows the first turn, `<BOS> Pietro chiama Paolo`, component by component, and counts
over sets of later turns. The exercises go to one later turn the page only draws, the first prompt
of its later-turn set, where the caller must be read from the context, and to that whole set."""
from __future__ import annotations

from lib.analysis.ablation import all_heads, head_name
from lib.analysis.trajectory import path_view
from lib.content.prompt_sets import prompt_set
from lib.model.readout import prompt_logits, softmax
from lib.exercises import Feedback, check_choice, per_model, same_option, shown
from lib.exercises.site import Values, site_check
from lib.model.store import load

PROMPT = "<BOS> Pietro chiama Paolo"
TARGET = "Tarso"


@per_model
def later_turn(lm) -> str:
    """The later turn the page draws beside the first: Pietro calls Paolo after a few calls."""
    return prompt_set("epithet-later-turn", n=40, target=TARGET, max_tokens=lm.model.cfg.n_ctx)[0].text


def _block_heads(lm, block: int) -> list:
    return [h for h in all_heads(lm.model) if h[0] == block]


# ------------------------------------------------------------------ predict: a model that cannot read the caller
@per_model
def _top_token(lm, prompt: str, block_off: int | None) -> str:
    heads = _block_heads(lm, block_off) if block_off is not None else ()
    return lm.vocab.tokens[int(softmax(prompt_logits(lm, prompt, ablate=heads)).argmax())]


def _blind_values(lm) -> Values:
    expected = _top_token(lm, later_turn(lm), 0)
    return Values(expected, options=tuple(lm.vocab.tokens), hints={"target": TARGET})


def _later_turn_args() -> dict:
    return {"prompt": later_turn(load("calling-game")), "target": TARGET}


BLIND_TOP_TOKEN = site_check(__name__, "blind_top_token", rule="choice", compute="topWithHeadsOff",
                             values=_blind_values, model="calling-game", args=lambda: {**_later_turn_args(), "block": 0,
                                                          "wrong_tokens": {"target": TARGET}}, texts={
    "right": "without block 0's heads the model bets on {answer}.",
    "wrong": "{shown} is not first. Without block 0's heads, the model cannot tell who calls Paolo: which epithet "
             "would be right for most callers on a later turn?",
    "target": TARGET + " is what the intact model says, and what it still says on the first turn without these "
              "heads; here the caller is no longer read, so the model must guess who is calling."})


def blind_top_token(lm, answer) -> Feedback:
    """Predict: the token the model puts first on the later turn with block 0's heads switched off."""
    return BLIND_TOP_TOKEN.judge(answer, lm)


# ------------------------------------------------------------------ investigate: a whole block off
# Over the whole later-turn set: the explorer reads one prompt, and P(Tarso) on the drawn later turn with
# block 1 off is one prompt and five switches away in it.
@per_model
def later_turns(lm) -> tuple[str, ...]:
    """The 40 later turns of the set whose first the page draws."""
    return tuple(p.text for p in prompt_set("epithet-later-turn", n=40, target=TARGET, max_tokens=lm.model.cfg.n_ctx))


def mean_target(lm, prompts, heads=(), mlps=()) -> float:
    """P(TARGET) averaged over `prompts`, with `heads` and `mlps` switched off."""
    t = lm.vocab.id(TARGET)
    return sum(float(softmax(prompt_logits(lm, p, ablate=heads, ablate_mlps=mlps))[t]) for p in prompts) / len(prompts)


def _block1_values(lm) -> Values:
    prompts, heads1 = later_turns(lm), _block_heads(lm, 1)
    return Values(mean_target(lm, prompts, heads1, [1]), hints={
        "intact": mean_target(lm, prompts), "heads": mean_target(lm, prompts, heads1),
        "mlp": mean_target(lm, prompts, mlps=[1]), "one": mean_target(lm, prompts[:1], heads1, [1])})


BLOCK1_OFF = site_check(__name__, "block1_off", rule="number", compute="blockOff", values=_block1_values,
                        what="The mean P(Tarso)", tol=1e-3, model="calling-game",
                        args=lambda: {"prompts": list(later_turns(_load())), "target": TARGET, "block": 1}, texts={
    "intact": "that is the intact model; switch block 1's heads and its MLP off.",
    "heads": "that is block 1's heads alone; switch its MLP off too.",
    "mlp": "that is MLP 1 alone; switch block 1's four heads off too.",
    "one": "that is the later turn the page draws, alone; average over all 40 prompts of the set."})


def _load():
    return load("calling-game")


def block1_off(lm, answer) -> Feedback:
    """Investigate: P(Tarso) averaged over the 40 later turns with the whole of block 1 switched off, its
    four heads and its MLP."""
    return BLOCK1_OFF.judge(answer, lm)


# ------------------------------------------------------------------ investigate: the most necessary component
@per_model
def single_effects(lm, prompt: str = PROMPT) -> dict[str, float]:
    """P(Tarso) with each head or MLP switched off alone, by the explorer's names."""
    out = {head_name(h): path_view(lm, prompt, heads_off=[h]).prob for h in all_heads(lm.model)}
    out.update({f"MLP {m}": path_view(lm, prompt, mlps_off=[m]).prob for m in range(lm.model.cfg.n_layers)})
    return out


def _necessary_values(lm) -> Values:
    effects = single_effects(lm, later_turn(lm))
    first = single_effects(lm, PROMPT)
    return Values(min(effects, key=effects.get), options=tuple(effects),
                  hints={"first": min(first, key=first.get), "mlp1": "MLP 1"})


MOST_NECESSARY = site_check(__name__, "most_necessary", rule="choice", compute="mostNecessary",
                            values=_necessary_values, model="calling-game",
                            args=lambda: {**_later_turn_args(), "first": PROMPT}, texts={
    "right": "without {answer}, P(Tarso) drops the most.",
    "wrong": "switching {shown} off alone does not lower P(Tarso) the most.",
    "first": "{answer} is the most necessary on the first turn; on this later turn another component matters more. "
             "Switch each one off on this prompt.",
    "mlp1": "MLP 1 makes the largest push, but the answer does not depend on it the most; switch each component off "
            "and compare P(Tarso)."})


def most_necessary(lm, answer) -> Feedback:
    """Investigate: on the later turn, the one component whose removal alone lowers P(Tarso) the most."""
    return MOST_NECESSARY.judge(answer, lm)
