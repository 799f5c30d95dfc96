"""Self-checks for the chapter "The last step of a real model" (SmolLM2-135M on the menu's prompts)."""
from __future__ import annotations

import numpy as np

from lib.chapters.part3.real_model import stored
from lib.exercises import Feedback, check_number

# ------------------------------------------------------------------ predict: the top line at a temperature
COOL_PROMPT = "Once upon a time, there was a little"
COOL_TEMPERATURE = 0.5


def _page(temperature: float) -> np.ndarray:
    """The full page after COOL_PROMPT at a temperature (from the build's run of the menu)."""
    x = np.asarray(stored.by_text()[COOL_PROMPT].logits, dtype=np.float64) / temperature
    p = np.exp(x - x.max())
    return p / p.sum()


def top_prob_cooled(answer) -> Feedback:
    """P(" girl"), the top line after COOL_PROMPT, at COOL_TEMPERATURE: the lines squared and shared out again."""
    pages = {t: float(_page(t).max()) for t in (COOL_TEMPERATURE, 1.0, 1 / COOL_TEMPERATURE)}
    return check_number(answer, pages[COOL_TEMPERATURE], tol=0.02,
                        what=f"The top line's probability at temperature {COOL_TEMPERATURE:g}", hints={
                            pages[1.0]: "that is the page at temperature 1: a temperature below 1 sharpens it.",
                            pages[1 / COOL_TEMPERATURE]: "that is the page at temperature 2 (the logits multiplied by "
                                                         "the temperature); a temperature divides them."})
