"""Self-checks for the chapter "The last step of a real model" (SmolLM2-135M on the menu's prompts)."""
from __future__ import annotations

from lib.chapters.part3.real_model import stored
from lib.chapters.part3.real_model.explorers import DATA
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


# ------------------------------------------------------------------ predict: the same line, warmed
WARM_TEMPERATURE = 2.0


def _warmed_values() -> Values:
    return Values(_top_at(WARM_TEMPERATURE), hints={"unchanged": _top_at(1.0), "times": _top_at(1 / WARM_TEMPERATURE)})


TOP_PROB_WARMED = site_check(__name__, "top_prob_warmed", rule="number", compute="realTopCooled",
                             values=_warmed_values, what=f"The top line's probability at temperature {WARM_TEMPERATURE:g}",
                             tol=0.02, args={"data": DATA, "prompt": COOL_PROMPT, "temperature": WARM_TEMPERATURE},
                             texts={"unchanged": "that is the page at temperature 1: a temperature above 1 flattens it.",
                                    "times": "that is the page at temperature 0.5 (the logits divided by the "
                                             "temperature's inverse); a temperature of 2 halves them."})


def top_prob_warmed(answer) -> Feedback:
    """P(" girl"), the top line after COOL_PROMPT, at WARM_TEMPERATURE: the square roots of the lines, shared out again."""
    return TOP_PROB_WARMED.judge(answer)
