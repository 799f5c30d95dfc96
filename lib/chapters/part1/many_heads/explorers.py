"""The many-heads chapter's explorer: every head of one layer side by side, positions on or off.

Its page twin is `heads` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np
import torch

from lib.analysis.positions import without_positions
from lib.explorers.definition import Control, Explorer, prompt_control, registered
from lib.explorers.shared import example_model
from lib.model.store import load


@lru_cache(maxsize=4)
def _flat(name: str):
    return without_positions(load(name))


def total_variation(a, b) -> float:
    return 0.5 * float(sum(abs(x - y) for x, y in zip(a, b)))


@registered("heads", lambda: [heads_explorer(example_model(), ["<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice "
                                                               "<SEP> Paolo chiama Pietro"])],
            where="one block's attention: its four heads side by side, with the positions added to the embedding "
                  "or not.")
def heads_explorer(lm, prompts: Sequence[str], layer: int = 0) -> Explorer:
    """Every head of one layer side by side on any prompt, with the model's position embeddings on or
    off, and how far apart the heads read from the last position."""
    cfg = lm.model.cfg
    rows = [[prompt_control(prompts)],
            [Control("layer", "layer", "which layer's heads to show", "choice", layer,
                     options=tuple(range(cfg.n_layers))),
             Control("no_positions", "positions off", "run the model with its position embeddings set to zero: "
                     "only the tokens themselves reach the heads", "toggle", False)]]

    def compute(v):
        model = _flat(lm.name) if v["no_positions"] else lm
        ids = lm.encode(v["prompt"])
        with torch.no_grad():
            _, cache = model.model.run_with_cache(ids)
        patterns = cache[f"blocks.{v['layer']}.attn.pattern"].double()
        lasts = [patterns[h, -1].tolist() for h in range(cfg.n_heads)]
        pairs = [(a, b) for a in range(cfg.n_heads) for b in range(a + 1, cfg.n_heads)]
        return {"tokens": lm.vocab.decode(ids), "layer": v["layer"], "positions": not v["no_positions"],
                "heads": [f"L{v['layer']}H{h}" for h in range(cfg.n_heads)],
                "patterns": [patterns[h].tolist() for h in range(cfg.n_heads)],
                "best": [int(np.argmax(row)) for row in lasts],
                "spread": sum(total_variation(lasts[a], lasts[b]) for a, b in pairs) / len(pairs) if pairs else 0.0}

    return Explorer("heads", rows, compute, lm.name)
