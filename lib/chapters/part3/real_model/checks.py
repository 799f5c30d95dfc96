"""Self-checks for the chapter "The last step of a real model" (SmolLM2-135M on the menu's prompts)."""
from __future__ import annotations

import numpy as np

from lib.chapters.part3.real_model import stored
from lib.chapters.part3.real_model.explorers import DATA, lens_view
from lib.exercises import Feedback
from lib.exercises.site import Values, site_check

# ------------------------------------------------------------------ predict: the top line at a temperature
COOL_PROMPT = "Once upon a time, there was a little"
COOL_TEMPERATURE = 0.5


def _top_at(temperature: float) -> float:
    """P(" girl") after COOL_PROMPT at a temperature, from the stored run's summary (within 2.1e-5 of the full
    softmax: the claim real-model.summary-bound), as the page's twin computes it from the same numbers."""
    return float(stored.probabilities(stored.by_text()[COOL_PROMPT].summary, temperature)[0][0])


def _cooled_values() -> Values:
    return Values(_top_at(COOL_TEMPERATURE), hints={"unchanged": _top_at(1.0), "times": _top_at(1 / COOL_TEMPERATURE)})


TOP_PROB_COOLED = site_check(__name__, "top_prob_cooled", rule="number", compute="realTopCooled",
                             values=_cooled_values, what=f"The top line's probability at temperature {COOL_TEMPERATURE:g}",
                             tol=0.02, args={"data": DATA, "prompt": COOL_PROMPT, "temperature": COOL_TEMPERATURE},
                             texts={"unchanged": "that is the page at temperature 1: a temperature below 1 sharpens it.",
                                    "times": "that is the page at temperature 2 (the logits multiplied by the "
                                             "temperature); a temperature divides them."})


def top_prob_cooled(answer) -> Feedback:
    """P(" girl"), the top line after COOL_PROMPT, at COOL_TEMPERATURE: the lines squared and shared out again."""
    return TOP_PROB_COOLED.judge(answer)


# ------------------------------------------------------------------ predict: the sharpest group of the menu
def _sharpest_values() -> Values:
    # deferred: the menu's numbers (one run of SmolLM2 per prompt, cached per build) only when asked
    from lib.chapters.part3.real_model import claims, prompts
    medians = {g: float(np.median([x["entropy"] for x in claims.per_prompt().values() if x["group"] == g]))
               for g in prompts.GROUPS}
    best = min(medians, key=medians.get)
    return Values(best, options=tuple(prompts.GROUPS), fields={"best": best, "bits": f"{medians[best]:.1f}"},
                  hints={g: g for g in ("fact", "pattern") if g != best})


SHARPEST_GROUP = site_check(__name__, "sharpest_group", rule="choice", compute=None, values=_sharpest_values, texts={
    "right": "{best}: a median of {bits} bits. Once a line of code is begun, the language's grammar fixes the next "
             "token more tightly than the world fixes a fact.",
    "wrong": "not the sharpest: ask which kind of text leaves the fewest ways to go on.",
    "fact": "facts are sharp, but the world leaves more than one way to say the answer (a space, a capital, "
            "'the').",
    "pattern": "a pattern fixes its next item once it is clear, but the model has to see it first."})


def sharpest_group(answer) -> Feedback:
    """Predict: which group of the menu (fact, open, made-up, pattern, code, grammar) gives the lowest median
    entropy of SmolLM2's page."""
    return SHARPEST_GROUP.judge(answer)


# ------------------------------------------------------------------ predict: the probability of a whole continuation
SEQUENCE_TOKENS = 4


def sequence_probabilities() -> list[tuple[str, float]]:
    """The first SEQUENCE_TOKENS tokens of greedy's continuation of COOL_PROMPT, each with the probability the
    model gave it after the prompt and the tokens before it (the build's run, `decoding.runs()`)."""
    from lib.chapters.part3.real_model import decoding  # deferred: the build's decoding runs only when asked

    row = next(r for r in decoding.runs()["greedy"] if r["prompt"] == COOL_PROMPT)
    return [(t, float(np.exp(lp))) for t, lp in zip(row["pieces"][:SEQUENCE_TOKENS], row["logprobs"][:SEQUENCE_TOKENS])]


def _sequence_values() -> Values:
    p = np.array([q for _, q in sequence_probabilities()])
    return Values(float(np.sum(np.log(p))), hints={
        "probability": float(np.prod(p)), "bits": float(np.sum(np.log2(p))), "mean": float(np.mean(np.log(p))),
        "sum": float(np.sum(p)), "log of the sum": float(np.log(np.sum(p)))})


SEQUENCE_LOGPROB = site_check(__name__, "sequence_logprob", rule="number", compute=None, values=_sequence_values,
                              what=f"The log-probability of the {SEQUENCE_TOKENS} tokens as a whole", tol=0.03,
                              texts={"probability": "that is the probability itself; its natural logarithm is asked "
                                                    "(a negative number).",
                                     "bits": "that is the logarithm to base 2 (bits); the natural logarithm is asked.",
                                     "mean": "that is the mean of the tokens' log-probabilities, one token's typical "
                                             "share; the whole sequence's is their sum.",
                                     "sum": "that is the sum of the tokens' probabilities; the probability of all of "
                                            "them together is their product, and its logarithm the sum of their "
                                            "logarithms.",
                                     "log of the sum": "that is the logarithm of the sum of the probabilities; the "
                                                       "sequence's is the sum of their logarithms."})


def sequence_logprob(answer) -> Feedback:
    """Predict: the natural log-probability of the first SEQUENCE_TOKENS tokens of greedy's continuation of
    COOL_PROMPT as a whole (the sum of the logarithms of the per-token probabilities the page prints)."""
    return SEQUENCE_LOGPROB.judge(answer)


# ------------------------------------------------------------------ predict on your own text: where the lens finds the answer
def _lens_values(text: str) -> Values:
    """On the learner's text: the block after which the logit lens keeps SmolLM2's final answer on top to the end
    (-1: from the embedding on), as the lens explorer marks it (`explorers.lens_view`)."""
    from lib.model import smollm2  # deferred: the model is read only when a learner checks

    view = lens_view(stored.run(smollm2.load(), text))
    return Values(view["first"] - 1, fields={"answer": repr(view["answer"]), "first": view["first"] - 1})


LENS_FROM = site_check(__name__, "lens_from", rule="number", compute="realLensFrom", values=_lens_values,
                       what="The block after which the lens keeps the answer on top", tol=3,
                       own="Your text", own_example="Anna and Tom went to the market. At the market, Anna gave an apple to",
                       texts={})


def lens_from(text, answer) -> Feedback:
    """Predict, on a text of your own: after which block does the logit lens put SmolLM2's final answer on top
    and keep it there (within 3 blocks counts)?"""
    return LENS_FROM.judge_text(text, answer)
