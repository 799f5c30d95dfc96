"""The one-head chapter's explorer: the chapter's head on *the cat sat*, its embeddings in boxes.

Its page twin is `cat_sat` in this unit's page.js; its picture, in this unit's pictures.js, is drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

import copy
import math
import random

import torch

from lib.content import worked_examples as w
from lib.errors import CourseError
from lib.explorers.definition import Control, Explorer, registered
from lib.messages import say

# The largest number an embedding box takes: far beyond any the chapter uses, small enough that
# every score stays a finite number the softmax can weigh.
EMBED_LIMIT = 10
CAT_SAT_ORDERS = ("the cat sat", "cat the sat")


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
    return {"words": list(w.SENTENCE), "W_Q": w.CAT_SAT_W_Q, "W_K": w.CAT_SAT_W_K, "W_V": w.CAT_SAT_W_V,
            "W_O": w.CAT_SAT_W_O, "d_head": len(w.CAT_SAT_W_Q[0]), "limit": EMBED_LIMIT}


def _shown(row) -> str:
    return " ".join(f"{x:g}" for x in row)


def random_embedding(rng: random.Random, name: str, values: dict, tokens) -> str:
    """A word's embedding as a reader types it (for the tests), now and then one the box refuses."""
    if rng.random() < 0.15:
        return rng.choice(["1 2 3 4", "1 2 3 4 5 6", "a b c d e", "1 2 3 4 nan", "0 0 0 0 11", "", "1;2;3;4;5"])
    return rng.choice([" ", ", "]).join(f"{rng.uniform(-3, 3):.{rng.randint(0, 3)}f}" for _ in range(5))


@registered("cat_sat", lambda: [cat_sat_explorer()], random_text=random_embedding,
            where="one head of a toy block, worked by hand: its queries, keys and values from three embeddings.")
def cat_sat_explorer() -> Explorer:
    """The chapter's head on *the cat sat* with the three words' embeddings in boxes: the scores, the
    pattern and what the head writes for the last word follow; the division by the square root of d_head
    can be switched off, and the first two words swapped."""
    ex = w.cat_sat()
    args = _cat_sat_args()
    words = args["words"]
    d_model = len(w.CAT_SAT_EMBED[words[0]])
    rows = [[Control(f"embed_{word}", word, f"the embedding of {word}: {d_model} numbers, separated by spaces",
                     "text", _shown(w.CAT_SAT_EMBED[word]), width=22) for word in words],
            [Control("scaled", "divide by √d_head", "divide the scores by the square root of d_head before the "
                     "softmax (the transformer's own rule); off: the raw dot products", "toggle", True),
             Control("order", "word order", "the order the head reads the words in", "choice", CAT_SAT_ORDERS[0],
                     options=CAT_SAT_ORDERS)]]

    def compute(v):
        embed = {word: parse_vector(v[f"embed_{word}"], f"the embedding of {word}", d_model) for word in words}
        model = copy.deepcopy(ex.model)
        with torch.no_grad():
            for word in words:
                model.W_E[ex.vocab.id(word)] = torch.tensor(embed[word], dtype=model.W_E.dtype)
        order = v["order"].split()
        ids = [ex.vocab.id(word) for word in order]
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
