"""The results-page chapter's explorer: temperature, top-k, top-p, greedy and a seed over one prompt.

Its page twin is `sampling` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

from typing import Sequence

from lib.analysis.sampling import sampling_view
from lib.errors import CourseError
from lib.explorers.boxes import parse_seed, parse_top_k, parse_top_p
from lib.explorers.definition import Control, Explorer, prompt_control, registered, temperature_control
from lib.explorers.shared import example_model, example_prompts, tokens
from lib.messages import say
from lib.model.readout import MIN_TEMPERATURE


def greedy_hint(temperature, greedy: bool) -> None:
    """A temperature of 0 (or below the least the read-out takes, not below 0) is what greedy decoding is:
    the refusal points to the greedy switch (its page twin: greedyHint in page.js)."""
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and 0 <= temperature < MIN_TEMPERATURE:
        minimum = f"{MIN_TEMPERATURE:g}"
        raise CourseError(say("temperature_greedy", got=f"{temperature:g}", minimum=minimum,
                              switch=say("greedy_on" if greedy else "greedy_off", minimum=minimum)))


@registered("sampling", lambda: [sampling_explorer(example_model(), [example_prompts()["uncertain"]]),
                                 sampling_explorer(example_model("hand-wired"), ["<BOS> the king is"])],
            where="after the read-out: the results page reshaped (temperature, top-k, top-p) and one token drawn "
                  "from it.")
def sampling_explorer(lm, prompts: Sequence[str], k: int = 10) -> Explorer:
    """Temperature, top-k, top-p, greedy and a seed over one prompt: the reshaped page, what survives
    the truncation, and the token one seeded roll of the die picks."""
    rows = [[prompt_control(prompts), temperature_control()],
            [Control("top_k", "top-k", "keep only the k most probable tokens; blank keeps all", "text", "",
                     placeholder="all", width=6),
             Control("top_p", "top-p", "keep the fewest best tokens whose probability reaches p; blank keeps all",
                     "text", "", placeholder="1 (off)", width=7),
             Control("greedy", "greedy", "always take the most probable token instead of rolling", "toggle", False)],
            [Control("seed", "seed", "which roll of the die: the same seed always picks the same token", "text",
                     "0", width=8)]]

    def compute(v):
        top_k, top_p = parse_top_k(v["top_k"]), parse_top_p(v["top_p"])
        seed = parse_seed(v["seed"])
        greedy_hint(v["temperature"], v["greedy"])
        s = sampling_view(lm, v["prompt"], v["temperature"], top_k, top_p, v["greedy"], seed, k)
        return {"tokens": tokens(lm, v["prompt"]), "temperature": v["temperature"],
                "top_k": None if top_k is None else min(top_k, len(lm.vocab)), "top_p": top_p,
                "greedy": bool(v["greedy"]), "seed": str(seed),
                "rows": [{"token": r.token, "base": r.base, "heated": r.heated, "final": r.final} for r in s.rows],
                "chosen": s.chosen, "chosen_prob": s.chosen_prob, "survivors": s.survivors}

    return Explorer("sampling", rows, compute, lm.name, {"k": k})
