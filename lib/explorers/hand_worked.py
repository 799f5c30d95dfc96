"""The explorers of Part 1's hand-worked chapters: a window against a head, the bigram table of any
prompt, the cat-sat head with its embeddings in boxes, and a layer's heads with positions on or off.

Each is declared and registered as the catalogue's explorers are (`lib.explorers.definition`); the
page's twins of their views are in `lib/explorers/js/views_hand.js`, their pictures in `render.js`.
The catalogue imports this module, so the registry (and every test that iterates it) holds them.
"""
from __future__ import annotations

import copy
import math
from functools import lru_cache
from typing import Sequence

import numpy as np
import torch

from lib.errors import CourseError, require
from lib.explorers.boxes import parse_position
from lib.explorers.definition import Control, Explorer, prompt_control, registered
from lib.messages import say

# The largest number an embedding box takes: far beyond any the chapter uses, small enough that
# every score stays a finite number the softmax can weigh.
EMBED_LIMIT = 10
CAT_SAT_ORDERS = ("the cat sat", "cat the sat")
WIDTHS = tuple(range(1, 9))


def _model(name: str = "calling-game"):
    from lib.model.store import load
    return load(name)


def _tokens(lm, ids) -> list[str]:
    return lm.vocab.decode(ids)


# ----------------------------------------------------------------------------- why-attention
def box_filter(n: int, width: int) -> list[list[float]]:
    """The mixing weights of a causal box filter of `width` over `n` positions: position i takes an even
    share, 1/width, of itself and the width - 1 positions before it (fewer at the start, where the
    window hangs over the beginning and reads nothing there)."""
    return [[1.0 / width if i - width < j <= i else 0.0 for j in range(n)] for i in range(n)]


@registered("window", lambda: [window_explorer(_model(), ["<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice <SEP> "
                                                          "Paolo chiama Pietro"])])
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
        return {"tokens": _tokens(lm, ids), "width": v["width"], "layer": v["layer"], "head": v["head"],
                "window": box_filter(n, v["width"]), "pattern": pattern.tolist(),
                "head_best": int(np.argmax(last.tolist())), "outside": float(last[:max(0, n - v["width"])].sum())}

    return Explorer("window", rows, compute, lm.name)


# ----------------------------------------------------------------------------- bigrams
@lru_cache(maxsize=1)
def counted_table() -> tuple[list[str], list[list[float]], list[int]]:
    """The chapter's counted bigram table (lib.analysis.bigrams.bigram_table): tokens, P(next | last)
    and how many pairs each row was counted on."""
    from lib.analysis.bigrams import bigram_table

    tokens, counts, probs = bigram_table()
    return tokens, probs.tolist(), [int(c) for c in counts.sum(1)]


@registered("bigram", lambda: [bigram_explorer(_model("zero-layer"), ["<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo"])])
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
        from lib.model.readout import softmax

        ids = lm.encode(v["prompt"])
        at = parse_position(v["position"], len(ids))
        with torch.no_grad():
            model = softmax(lm.model(ids[:at + 1])[-1].double()).tolist()
        row, seen = probs[ids[at]], pairs[ids[at]]
        by = row if seen else model
        order = [i for i in sorted(range(len(tokens)), key=lambda i: -by[i]) if not seen or row[i] > 0][:k]
        return {"tokens": _tokens(lm, ids), "position": at, "last": tokens[ids[at]], "pairs": seen,
                "rows": [{"token": tokens[i], "model": model[i], "table": row[i]} for i in order],
                "gap": max(abs(m - t) for m, t in zip(model, row)) if seen else None}

    return Explorer("bigram", rows, compute, lm.name, {"k": k, "table": probs, "pairs": pairs})


# ----------------------------------------------------------------------------- one-head
def parse_vector(text, name: str, n: int, limit: float = EMBED_LIMIT) -> list[float]:
    """`n` numbers typed in a box, separated by spaces or commas, each from -limit to limit."""
    text = str(text).strip()
    pieces = text.replace(",", " ").split()
    problem = CourseError(say("vector_numbers", name=name, n=n, limit=f"{limit:g}", got=repr(text)))
    if len(pieces) != n:
        raise problem
    try:
        values = [float(p) for p in pieces]
    except ValueError:
        raise problem from None
    if not all(math.isfinite(x) and -limit <= x <= limit for x in values):
        raise problem
    return values


def _cat_sat_args() -> dict:
    from lib.content import worked_examples as w

    return {"words": list(w.SENTENCE), "W_Q": w.CAT_SAT_W_Q, "W_K": w.CAT_SAT_W_K, "W_V": w.CAT_SAT_W_V,
            "W_O": w.CAT_SAT_W_O, "d_head": len(w.CAT_SAT_W_Q[0]), "limit": EMBED_LIMIT}


def _shown(row) -> str:
    return " ".join(f"{x:g}" for x in row)


@registered("cat_sat", lambda: [cat_sat_explorer()])
def cat_sat_explorer() -> Explorer:
    """The chapter's head on *the cat sat* with the three words' embeddings in boxes: the scores, the
    pattern and what the head writes for the last word follow; the division by the square root of d_head
    can be switched off, and the first two words swapped."""
    from lib.content.worked_examples import CAT_SAT_EMBED, cat_sat

    ex = cat_sat()
    args = _cat_sat_args()
    words = args["words"]
    d_model = len(CAT_SAT_EMBED[words[0]])
    rows = [[Control(f"embed_{w}", w, f"the embedding of {w}: {d_model} numbers, separated by spaces", "text",
                     _shown(CAT_SAT_EMBED[w]), width=22) for w in words],
            [Control("scaled", "divide by √d_head", "divide the scores by the square root of d_head before the "
                     "softmax (the transformer's own rule); off: the raw dot products", "toggle", True),
             Control("order", "word order", "the order the head reads the words in", "choice", CAT_SAT_ORDERS[0],
                     options=CAT_SAT_ORDERS)]]

    def compute(v):
        embed = {w: parse_vector(v[f"embed_{w}"], f"the embedding of {w}", d_model) for w in words}
        model = copy.deepcopy(ex.model)
        with torch.no_grad():
            for w in words:
                model.W_E[ex.vocab.id(w)] = torch.tensor(embed[w], dtype=model.W_E.dtype)
        order = v["order"].split()
        ids = [ex.vocab.id(w) for w in order]
        with torch.no_grad():
            _, cache = model.run_with_cache(ids)
        raw = cache["blocks.0.attn.qk"][0].double()
        scores = raw / math.sqrt(args["d_head"]) if v["scaled"] else raw
        future = torch.triu(torch.ones(len(ids), len(ids), dtype=torch.bool), 1)
        pattern = torch.softmax(scores.masked_fill(future, float("-inf")), -1)
        values = cache["blocks.0.attn.v"][:, 0].double()
        W_O = model.blocks[0].attn.W_O[0].double()
        write = (pattern @ values @ W_O)[-1]
        return {"words": order, "scaled": bool(v["scaled"]),
                "scores": [[None if j > i else float(scores[i, j]) for j in range(len(ids))] for i in range(len(ids))],
                "pattern": pattern.tolist(), "write": write.tolist(),
                "stream": (cache["embed"][-1].double() + write).tolist()}

    return Explorer("cat_sat", rows, compute, args=args,
                    note="The head's weights are the chapter's: W_Q, W_K and W_V as printed in step 2, W_O the "
                         "identity. The words' embeddings are yours to change.")


# ----------------------------------------------------------------------------- many-heads
@lru_cache(maxsize=4)
def _flat(name: str):
    from lib.analysis.positions import without_positions
    return without_positions(_model(name))


def total_variation(a, b) -> float:
    return 0.5 * float(sum(abs(x - y) for x, y in zip(a, b)))


@registered("heads", lambda: [heads_explorer(_model(), ["<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice <SEP> "
                                                        "Paolo chiama Pietro"])])
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
        return {"tokens": _tokens(lm, ids), "layer": v["layer"], "positions": not v["no_positions"],
                "heads": [f"L{v['layer']}H{h}" for h in range(cfg.n_heads)],
                "patterns": [patterns[h].tolist() for h in range(cfg.n_heads)],
                "best": [int(np.argmax(row)) for row in lasts],
                "spread": sum(total_variation(lasts[a], lasts[b]) for a, b in pairs) / len(pairs) if pairs else 0.0}

    return Explorer("heads", rows, compute, lm.name)
