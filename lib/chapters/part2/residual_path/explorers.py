"""The residual-path chapter's explorer: the residual stream's path on a concept plane, heads and MLPs
switched off.

Its page twin is `path` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

from typing import Sequence

from lib.analysis.ablation import head_name
from lib.analysis.lens import stage_label
from lib.analysis.trajectory import path_view
from lib.explorers.definition import (Control, Explorer, head_toggles, prompt_control, registered, switched_off,
                                      token_control)
from lib.explorers.shared import example_model, tokens


@registered("path", lambda: [path_explorer(example_model()),
                             path_explorer(example_model("hand-wired"), "<BOS> the king is", "queen", "king")],
            where="one position's residual stream, the line down the map's left, followed from the embedding past "
                  "every block.")
def path_explorer(lm, prompt: str = "<BOS> Pietro chiama Paolo", toward: str = "Tarso", against: str = "Paolo",
                  prompts: Sequence[str] = ()) -> Explorer:
    """Switch heads and MLPs off and watch the residual stream's path on a concept plane change."""
    cfg = lm.model.cfg
    rows = [[prompt_control([prompt, *prompts])],
            [token_control("toward", "axis toward", "the token the first axis points at", toward),
             token_control("against", "second axis", "the token the second axis points at, made orthogonal to the "
                           "first", against)],
            *head_toggles(cfg.n_layers, cfg.n_heads),
            [Control(f"MLP{layer}", f"MLP {layer}", f"switch block {layer}'s MLP off", "toggle", False)
             for layer in range(cfg.n_layers) if cfg.has_mlp]]

    def compute(v):
        heads = switched_off(v, cfg.n_layers, cfg.n_heads)
        mlps = [layer for layer in range(cfg.n_layers) if v.get(f"MLP{layer}")]
        view = path_view(lm, v["prompt"], heads, mlps, v["toward"].strip(), v["against"].strip())
        off = [head_name(h) for h in view.heads_off] + [f"MLP {m}" for m in view.mlps_off]
        return {"tokens": tokens(lm, v["prompt"]), "toward": v["toward"].strip(), "against": v["against"].strip(),
                "stages": [stage_label(s) for s in view.intact.stages], "intact": view.intact.coords.tolist(),
                "ablated": view.ablated.coords.tolist() if off else None, "off": off, "prob": view.prob,
                "prob_intact": view.prob_intact}

    return Explorer("path", rows, compute, lm.name)
