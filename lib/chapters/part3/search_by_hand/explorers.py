"""The search-by-hand chapter's explorer: a temperature over the model's results page.

Its page twin is `temperature` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

from typing import Sequence

from lib.analysis.sampling import temperature_page
from lib.explorers.definition import Explorer, prompt_control, registered, temperature_control
from lib.explorers.shared import example_model, example_prompts, pairs, tokens


@registered("temperature", lambda: [temperature_explorer(example_model(), [example_prompts()["uncertain"],
                                                                           example_prompts()["confident"]])],
            where="the bottom of the machine: the read-out's logits, divided by the temperature before the softmax "
                  "makes the results page.")
def temperature_explorer(lm, prompts: Sequence[str], temperature: float = 1.0, k: int = 10) -> Explorer:
    """A temperature (slid, or typed over the read-out's whole range) and a prompt over the model's
    results page (the `k` best tokens)."""
    def compute(v):
        return {"tokens": tokens(lm, v["prompt"]), "temperature": v["temperature"],
                "page": pairs(temperature_page(lm, v["prompt"], v["temperature"], k))}

    return Explorer("temperature", [[prompt_control(prompts), temperature_control(temperature)]], compute,
                    lm.name, {"k": k})
