"""The circuits chapter's explorer: any head's attention pattern on any prompt.

Its page twin is `pattern` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

from typing import Sequence

from lib.chapters.part1.circuits.circuits import pattern_view
from lib.explorers.definition import Control, Explorer, prompt_control, registered
from lib.explorers.shared import example_model, example_prompts


@registered("pattern", lambda: [pattern_viewer(example_model(), [example_prompts()["confident"]])],
            where="one head inside a block's attention: where it looks, the pattern the map shows for a head.")
def pattern_viewer(lm, prompts: Sequence[str], layer: int = 0, head: int = 0) -> Explorer:
    """Any head's attention pattern on any prompt: rows are the positions that read, columns the
    positions they read from."""
    cfg = lm.model.cfg
    rows = [[prompt_control(prompts),
             Control("layer", "layer", "which layer's head to show", "choice", layer, options=tuple(range(cfg.n_layers))),
             Control("head", "head", "which head of that layer", "choice", head, options=tuple(range(cfg.n_heads)))]]

    def compute(v):
        view = pattern_view(lm, v["prompt"], v["layer"], v["head"])
        return {"tokens": view.tokens, "layer": view.layer, "head": view.head, "pattern": view.pattern}

    return Explorer("pattern", rows, compute, lm.name)
