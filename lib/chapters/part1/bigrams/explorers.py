"""The bigrams chapter's explorer: the counted bigram table's row beside the zero-layer model's guess.

Its page twin is `bigram` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import torch

from lib.analysis.bigrams import bigram_table
from lib.errors import require
from lib.explorers.boxes import parse_position
from lib.explorers.definition import Control, Explorer, prompt_control, registered
from lib.explorers.shared import example_model
from lib.model.readout import softmax


@lru_cache(maxsize=1)
def counted_table() -> tuple[list[str], list[list[float]], list[int]]:
    """The chapter's counted bigram table (lib.analysis.bigrams.bigram_table): tokens, P(next | last)
    and how many pairs each row was counted on."""
    tokens, counts, probs = bigram_table()
    return tokens, probs.tolist(), [int(c) for c in counts.sum(1)]


@registered("bigram", lambda: [bigram_explorer(example_model("zero-layer"),
                                               ["<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo"])],
            where="a machine with no blocks at all: the embedding read straight out by the unembedding.")
def bigram_explorer(lm, prompts: Sequence[str], position: str = "", k: int = 10) -> Explorer:
    """At any position of any prompt, the counted bigram table's row for the token there (its followers,
    most frequent first) beside the zero-layer model's probabilities for the same next tokens. A token
    the rounds never show followed by anything has an empty row: then the model's own best k."""
    tokens, probs, pairs = counted_table()
    require(list(lm.vocab.tokens) == tokens, f"{lm.name}'s vocabulary is not the calling game's, in its order")
    rows = [[prompt_control(prompts)],
            [Control("position", "at position", "which position's next token to predict, counted from 0; blank: "
                     "the last", "text", position, placeholder="last", width=5)]]

    def compute(v):
        ids = lm.encode(v["prompt"])
        at = parse_position(v["position"], len(ids))
        with torch.no_grad():
            model = softmax(lm.model(ids[:at + 1])[-1].double()).tolist()
        row, seen = probs[ids[at]], pairs[ids[at]]
        by = row if seen else model
        order = [i for i in sorted(range(len(tokens)), key=lambda i: -by[i]) if not seen or row[i] > 0][:k]
        return {"tokens": lm.vocab.decode(ids), "position": at, "last": tokens[ids[at]], "pairs": seen,
                "rows": [{"token": tokens[i], "model": model[i], "table": row[i]} for i in order],
                "gap": max(abs(m - t) for m, t in zip(model, row)) if seen else None}

    return Explorer("bigram", rows, compute, lm.name, {"k": k, "table": probs, "pairs": pairs})
