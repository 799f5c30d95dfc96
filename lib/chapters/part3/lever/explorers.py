"""The lever chapter's explorer: the logit lens on any prompt, at any position.

Its page twin is `lens` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

from typing import Sequence

from lib.analysis.lens import lens_view, stage_label
from lib.explorers.boxes import parse_position
from lib.explorers.definition import FOLLOW, Control, Explorer, prompt_control, registered, token_control
from lib.explorers.shared import example_model, example_prompts, pairs


@registered("lens", lambda: [lens_explorer(example_model(), [example_prompts()["confident"]]),
                             lens_explorer(example_model("zero-layer"), [example_prompts()["uncertain"]])],
            where="the residual stream, read out after each stage as if the machine stopped there (the logit lens "
                  "of the map's detail).")
def lens_explorer(lm, prompts: Sequence[str], track: str = "", k: int = 3) -> Explorer:
    """The logit lens on any prompt, at any position: the ranking after each stage, and one token's climb."""
    rows = [[prompt_control(prompts)],
            [token_control("track", "follow the token", FOLLOW, track, placeholder="the final winner"),
             Control("position", "at position", "which position's residual stream to read, counted from 0; blank: "
                     "the last", "text", "", placeholder="last", width=5)]]

    def compute(v):
        ids = lm.encode(v["prompt"])
        position = parse_position(v["position"], len(ids))
        view = lens_view(lm, v["prompt"], v["track"].strip(), k, position)
        return {"tokens": lm.vocab.decode(ids), "position": view.position,
                "stages": [stage_label(s) for s in view.stages], "top": [pairs(col) for col in view.top],
                "track": view.track, "track_probs": view.track_probs, "track_ranks": view.track_ranks}

    return Explorer("lens", rows, compute, lm.name, {"k": k})
