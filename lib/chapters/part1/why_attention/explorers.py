"""The why-attention chapter's explorer: a filter's fixed window beside a trained head's pattern.

Its page twin is `window` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from lib.explorers.definition import Control, Explorer, prompt_control, registered
from lib.explorers.shared import example_model

WIDTHS = tuple(range(1, 9))


def box_filter(n: int, width: int) -> list[list[float]]:
    """The mixing weights of a causal box filter of `width` over `n` positions: position i takes an even
    share, 1/width, of itself and the width - 1 positions before it (fewer at the start, where the
    window hangs over the beginning and reads nothing there)."""
    return [[1.0 / width if i - width < j <= i else 0.0 for j in range(n)] for i in range(n)]


@registered("window", lambda: [window_explorer(example_model(), ["<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice "
                                                                 "<SEP> Paolo chiama Pietro"])],
            where="one head inside block 0's attention, set beside a filter whose window does not move with the "
                  "words.")
def window_explorer(lm, prompts: Sequence[str], width: int = 3, layer: int = 0, head: int = 3) -> Explorer:
    """A filter's fixed window beside a trained head's pattern, on the same prompt: rows are the positions
    that read, columns the positions they read from."""
    cfg = lm.model.cfg
    rows = [[prompt_control(prompts)],
            [Control("width", "window width", "how many positions the filter reads, its own and the ones just "
                     "before it", "choice", width, options=WIDTHS, slider=True),
             Control("layer", "layer", "which layer's head to set beside the filter", "choice", layer,
                     options=tuple(range(cfg.n_layers))),
             Control("head", "head", "which head of that layer", "choice", head, options=tuple(range(cfg.n_heads)))]]

    def compute(v):
        ids = lm.encode(v["prompt"])
        with torch.no_grad():
            _, cache = lm.model.run_with_cache(ids)
        pattern = cache[f"blocks.{v['layer']}.attn.pattern"][v["head"]].double()
        last = pattern[-1]
        n = len(ids)
        return {"tokens": lm.vocab.decode(ids), "width": v["width"], "layer": v["layer"], "head": v["head"],
                "window": box_filter(n, v["width"]), "pattern": pattern.tolist(),
                "head_best": int(np.argmax(last.tolist())), "outside": float(last[:max(0, n - v["width"])].sum())}

    return Explorer("window", rows, compute, lm.name)
