"""Part 1's map: the calling game's rules checker, and the whole machine at a glance.

Two explorers, registered like the catalogue's (`definition.registered`), their page twins in
`js/machine.js` and their pictures in `js/machine-render.js`:

- `rules_explorer`: a round typed or built from the vocabulary, read by the library's rules checker
  (`calling_game.read_round`): where it breaks a rule, which rule, and what the rules allow there;
- `machine_explorer`: the whole model on any prompt, every part at once (the embedding and
  positions, each head and MLP writing into the residual stream, the read-out and the results
  page), each part's direct write toward the model's answer, one part's values in detail (a head's
  pattern, its write at every position, the logit lens after it) and any part switched off through
  the model's hook points (zero ablation, `ablate=` and `ablate_mlps=`).
"""
from __future__ import annotations

from typing import Sequence

import torch

from lib.content.corpora import calling_game as cg
from lib.explorers.boxes import parse_position
from lib.explorers.definition import Control, Explorer, head_toggles, prompt_control, registered, switched_off


def _model(name: str = "calling-game"):
    from lib.model.store import load
    return load(name)


def _example_rounds(count: int = 3, seed: int = 25) -> list[str]:
    """Rounds from the library's generator (`sample_round`), as text, the first a whole round of 8 calls."""
    import random

    rng = random.Random(seed)
    full, short = [], []
    while len(full) < 1 or len(short) < count - 1:
        r = cg.sample_round(rng)
        (short if "perde" in r else full).append(" ".join(r))
    return full[:1] + short[:count - 1]


# ----------------------------------------------------------------------------- the rules checker
@registered("rules", lambda: [rules_explorer(_model(), _example_rounds())])
def rules_explorer(lm, rounds: Sequence[str]) -> Explorer:
    """A round of the game, typed or built token by token, read against the rules."""
    def compute(v):
        tokens = lm.vocab.decode(lm.encode(v["prompt"]))
        verdict = cg.read_round(tokens)
        return {"tokens": tokens, "roles": [cg.ROLES[t] for t in tokens], "status": verdict.status,
                "position": verdict.position, "rule": verdict.rule,
                "rule_text": cg.RULES[verdict.rule] if verdict.rule else "", "message": verdict.message,
                "allowed": list(verdict.allowed), "turns": list(verdict.turns)}

    control = Control("prompt", "round", "a round of the game, tokens separated by spaces: type it, or add tokens "
                      "from the vocabulary; the checker reads it token by token", "prompt", rounds[0],
                      options=tuple(rounds))
    return Explorer("rules", [[control]], compute, lm.name,
                    note="The checker is the library's (read_round); change a token and see which rule it breaks.")


# ----------------------------------------------------------------------------- the machine at a glance
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


@registered("machine", lambda: [machine_explorer(_model(), ["<BOS> Pietro chiama Paolo", "<BOS> Pietro chiama 4 <SEP> 4 chiama"])])
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
                    note="A switch makes its part write nothing (zero ablation through the model's hook points).")


# ----------------------------------------------------------------------------- where each explorer sits on the map
# Every other explorer names the part of the machine it shows (a line under its controls, linking to
# the map); a view without an entry shows none.
WHERE = {
    "temperature": "the bottom of the machine: the read-out's logits, divided by the temperature before the softmax "
                   "makes the results page.",
    "sampling": "after the read-out: the results page reshaped (temperature, top-k, top-p) and one token drawn "
                "from it.",
    "lens": "the residual stream, read out after each stage as if the machine stopped there (the logit lens of "
            "the map's detail).",
    "pattern": "one head inside a block's attention: where it looks, the pattern the map shows for a head.",
    "ablation": "every head and MLP of both blocks, switched off as the map's switches do, with a choice of what "
                "they write instead.",
    "patching": "one head's or MLP's write at one position, taken from another prompt's run.",
    "kv_cache": "inside each block's attention: the keys and values every head keeps for the earlier positions.",
    "tsne": "the top of the machine: the embedding table, its rows laid out flat.",
    "plane": "the top of the machine: the embedding table, its rows on a plane of two directions.",
    "path": "one position's residual stream, the line down the map's left, followed from the embedding past "
            "every block.",
    "window": "one head inside block 0's attention, set beside a filter whose window does not move with the words.",
    "bigram": "a machine with no blocks at all: the embedding read straight out by the unembedding.",
    "cat_sat": "one head of a toy block, worked by hand: its queries, keys and values from three embeddings.",
    "heads": "one block's attention: its four heads side by side, with the positions added to the embedding or not.",
    "real_attention": "not on this map: a real pretrained model's heads (MiniLM, six blocks of twelve), read the same "
                      "way as the map's patterns.",
}


def where_it_sits(view: str) -> str:
    """The sentence saying where an explorer of this view sits on the machine's map, or ""."""
    return WHERE.get(view, "")
