"""Part 1's map, the explorer of Part 1's index page: the whole machine at a glance.

`machine_explorer`: the whole model on any prompt, every part at once (the embedding and positions,
each head and MLP writing into the residual stream, the read-out and the results page), each part's
direct write toward the model's answer, one part's values in detail (a head's pattern, its write at
every position, the logit lens after it) and any part switched off through the model's hook points
(zero ablation, `ablate=` and `ablate_mlps=`). Its page twin is `machine` in this unit's page.js, its
picture in this unit's pictures.js.

The map's own data is here (`machine_parts`: the parts of the machine, in the order the residual
stream meets them). Every other explorer says where it sits on the map in its own registration
(`registered(view, examples, where=...)`), a line under its controls linking here.
"""
from __future__ import annotations

from typing import Sequence

import torch

from lib.explorers.boxes import parse_position
from lib.explorers.definition import Control, Explorer, head_toggles, prompt_control, registered, switched_off
from lib.explorers.shared import example_model


def machine_parts(cfg) -> list[tuple[str, str]]:
    """Every part of the model in the order the residual stream meets them: (name, label)."""
    parts = [("embed", "embedding + positions")]
    for layer in range(cfg.n_layers):
        parts += [(f"L{layer}H{h}", f"L{layer}H{h}") for h in range(cfg.n_heads)]
        if cfg.has_mlp:
            parts.append((f"MLP{layer}", f"MLP {layer}"))
    return parts + [("readout", "read-out")]


def machine_view(lm, prompt: str, part: str, position: str, heads_off, mlps_off, k: int = 8) -> dict:
    """The whole model on `prompt`: each part's write at `position` measured along the answer's
    unembedding (its direct logit contribution, exact here: the model has no final LayerNorm) and by
    its length, and `part` in detail."""
    model = lm.model
    cfg = model.cfg
    ids = lm.encode(prompt)
    T = len(ids)
    p = parse_position(position, T)
    logits, cache = model.run_with_cache(torch.tensor(ids), ablate=list(heads_off), ablate_mlps=list(mlps_off))
    names = [n for n, _ in machine_parts(cfg)]
    writes = {"embed": cache["embed"] + cache["pos_embed"]}
    for layer in range(cfg.n_layers):
        out = cache[f"blocks.{layer}.attn.head_out"]
        for h in range(cfg.n_heads):
            writes[f"L{layer}H{h}"] = out[:, h]
        if cfg.has_mlp:
            writes[f"MLP{layer}"] = cache[f"blocks.{layer}.mlp_out"]
    probs = torch.softmax(logits[p].double(), -1)
    order = torch.argsort(probs, descending=True, stable=True).tolist()
    tokens = lm.vocab.tokens
    answer = order[0]
    u = model.W_U[:, answer].double()
    writes = {n: w.double() for n, w in writes.items()}
    dla = {n: (w @ u).tolist() for n, w in writes.items()}
    norm = {n: w.norm(dim=-1).tolist() for n, w in writes.items()}

    def lens(resid):
        q = torch.softmax((resid.double() @ model.W_U.double() + model.b_U.double()), -1)
        return [[tokens[i], float(q[i])] for i in torch.argsort(q, descending=True, stable=True).tolist()[:5]]

    detail = {"part": part, "pattern": None, "dla": None, "norm": None, "lens": None, "stage": None}
    if part == "embed":
        detail.update(dla=dla[part], norm=norm[part], lens=lens(writes["embed"][p]), stage="embedding")
    elif part.startswith("L"):
        layer, h = int(part[1]), int(part[3:])
        detail.update(pattern=cache[f"blocks.{layer}.attn.pattern"][h].double().tolist(), dla=dla[part],
                      norm=norm[part], lens=lens(cache[f"blocks.{layer}.resid_mid"][p]), stage=f"attention {layer}")
    elif part.startswith("MLP"):
        layer = int(part[3:])
        detail.update(dla=dla[part], norm=norm[part], lens=lens(cache[f"blocks.{layer}.resid_post"][p]),
                      stage=f"MLP {layer}")
    off = [f"L{layer}H{h}" for layer, h in heads_off] + [f"MLP{layer}" for layer in mlps_off]
    return {"tokens": lm.vocab.decode(ids), "position": p, "parts": names[:-1], "off": off,
            "answer": tokens[answer], "logit": float(logits[p, answer]), "bias": float(model.b_U[answer]),
            "dla": [dla[n][p] for n in names[:-1]], "norm": [norm[n][p] for n in names[:-1]],
            "page": [[tokens[i], float(probs[i])] for i in order[:k]], "detail": detail}


# The map itself sits nowhere on it: no "where" line.
@registered("machine", lambda: [machine_explorer(example_model(), ["<BOS> Pietro chiama Paolo",
                                                                   "<BOS> Pietro chiama 4 <SEP> 4 chiama"])], where="")
def machine_explorer(lm, prompts: Sequence[str], part: str = "L0H0") -> Explorer:
    """The whole model at once on any prompt; one part in detail; any part switched off."""
    cfg = lm.model.cfg
    parts = machine_parts(cfg)
    rows = [[prompt_control(prompts)],
            [Control("part", "show", "the part of the model whose values are shown below the map (or click it on "
                     "the map)", "choice", part, options=tuple(n for n, _ in parts), shown=tuple(s for _, s in parts)),
             Control("position", "position", "the position whose write and results page the map shows, counted "
                     "from 0; blank: the last", "text", "", placeholder="last", width=5)],
            *head_toggles(cfg.n_layers, cfg.n_heads),
            [Control(f"MLP{layer}", f"MLP {layer}", f"switch block {layer}'s MLP off", "toggle", False)
             for layer in range(cfg.n_layers) if cfg.has_mlp]]

    def compute(v):
        mlps = [layer for layer in range(cfg.n_layers) if v.get(f"MLP{layer}")]
        return machine_view(lm, v["prompt"], v["part"], v["position"], switched_off(v, cfg.n_layers, cfg.n_heads), mlps)

    return Explorer("machine", [r for r in rows if r], compute, lm.name,
                    note="A switch makes its part write nothing (a test called zero ablation, met in Switching "
                    "attention off).")
