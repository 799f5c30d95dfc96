"""Reading the residual stream early: the logit lens and direct logit attribution.

The logit lens applies the model's own final read-out (final LayerNorm, then the unembedding) to
the residual stream after each stage, as if the model stopped there. Direct logit attribution
splits the final logits into one share per component that wrote into the residual stream: the
embeddings, each head of each layer, each MLP. The final LayerNorm is not linear, so the split
divides every component by the scale the LayerNorm actually applied to the whole residual; with
that scale frozen, the shares add up exactly to the logits.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from lib.errors import require
from lib.model.readout import softmax
from lib.model.transformer import ActivationCache, Transformer


def stage_names(model: Transformer) -> list[str]:
    """Residual checkpoints in forward order: the embedding, then after each attention and MLP."""
    names = ["embed"]
    for layer in range(model.cfg.n_layers):
        names.append(f"blocks.{layer}.attn")
        if model.cfg.has_mlp:
            names.append(f"blocks.{layer}.mlp")
    return names


def stage_label(stage: str) -> str:
    """A stage's name for a reader: 'embed' -> 'embedding', 'blocks.0.attn' -> 'attention 0',
    'blocks.1.mlp' -> 'MLP 1'. Every figure, table and explorer names stages with this."""
    if stage == "embed":
        return "embedding"
    _, layer, kind = stage.split(".")
    return f"{'MLP' if kind == 'mlp' else 'attention'} {layer}"


def is_stage_name(name: str) -> bool:
    """The cache names `stage_residuals` reads."""
    return name in ("embed", "pos_embed") or name.endswith((".resid_mid", ".resid_post"))


def stage_residuals(model: Transformer, cache: ActivationCache) -> dict[str, torch.Tensor]:
    """The residual stream [.., position, d_model] after each stage."""
    # SmolLM2 (lib.model.llama) adds no position vector: its positions enter inside attention.
    out = {"embed": cache["embed"] + cache["pos_embed"] if "pos_embed" in cache else cache["embed"]}
    for layer in range(model.cfg.n_layers):
        out[f"blocks.{layer}.attn"] = cache[f"blocks.{layer}.resid_mid"]
        if model.cfg.has_mlp:
            out[f"blocks.{layer}.mlp"] = cache[f"blocks.{layer}.resid_post"]
    return out


def read_out(model: Transformer, resid: torch.Tensor) -> torch.Tensor:
    """The model's own final step applied to any residual vector: LayerNorm, then unembedding."""
    with torch.no_grad():
        x = model.ln_final(resid) if model.ln_final is not None else resid
        return x @ model.W_U + model.b_U


@dataclass(frozen=True)
class LensStage:
    name: str
    logits: torch.Tensor  # [vocab], at the chosen position
    probs: torch.Tensor


def logit_lens(model: Transformer, tokens, position: int = -1) -> list[LensStage]:
    """For one prompt, the read-out after every stage at `position` (the last by default)."""
    # Only the stream after each stage is kept (a real model's every activation is tens of MB a layer).
    _, cache = model.run_with_cache(tokens, names=is_stage_name)
    residuals = stage_residuals(model, cache)
    # Every stage read out in one product: the unembedding is read once (SmolLM2's is 113 MB).
    logits = read_out(model, torch.stack([resid[position] for resid in residuals.values()]))
    return [LensStage(name, row, softmax(row)) for name, row in zip(residuals, logits)]


def components(model: Transformer, cache: ActivationCache, position: int = -1) -> dict[str, torch.Tensor]:
    """Every write into the residual stream at `position`, by name; they sum to `resid_final`."""
    out = {"embed": cache["embed"][position]}
    if "pos_embed" in cache:
        out["pos_embed"] = cache["pos_embed"][position]
    for layer in range(model.cfg.n_layers):
        heads = cache[f"blocks.{layer}.attn.head_out"][position]
        for h in range(model.cfg.n_heads):
            out[f"blocks.{layer}.head{h}"] = heads[h]
        if model.cfg.has_mlp:
            out[f"blocks.{layer}.mlp"] = cache[f"blocks.{layer}.mlp_out"][position]
    return out


def direct_logit_attribution(model: Transformer, cache: ActivationCache, position: int = -1) -> dict[str, torch.Tensor]:
    """Each component's share of the logits [vocab] at `position`; the shares sum to the logits.

    With a final LayerNorm each component is centred and divided by the LayerNorm's scale for the
    full residual, and the LayerNorm's bias (and the unembedding bias) appear as their own terms. An
    RMSNorm (SmolLM2's) neither centres nor adds a bias: each component is only divided by the scale.
    """
    parts = components(model, cache, position)
    names, vecs = list(parts), torch.stack(list(parts.values()))      # [component, d_model]
    out = {}
    with torch.no_grad():
        ln = model.ln_final
        if ln is not None:
            if getattr(ln, "centred", True):
                vecs = vecs - vecs.mean(-1, keepdim=True)
            vecs = vecs / ln.scale(cache["resid_final"][position]) * ln.w
        # One product for every component: the unembedding is read once (SmolLM2's is 113 MB).
        out.update(zip(names, vecs @ model.W_U))
        if ln is not None and getattr(ln, "b", None) is not None:
            out["ln_final.bias"] = ln.b @ model.W_U
        out["unembed.bias"] = model.b_U.detach().clone()
    return out


def group_by_block(attribution: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Fold per-head shares into one per attention block: embed, blocks.L.attn, blocks.L.mlp, biases."""
    out: dict[str, torch.Tensor] = {}
    for name, value in attribution.items():
        if ".head" in name:
            key = name.split(".head")[0] + ".attn"
        elif name in ("embed", "pos_embed"):
            key = "embed"
        else:
            key = name
        out[key] = out.get(key, 0) + value
    return out


# ----------------------------------------------------------------------------- the lens explorer
@dataclass(frozen=True)
class LensView:
    stages: list[str]                          # forward order, embedding first
    top: list[list[tuple[str, float]]]         # per stage, the k best (token, prob)
    track: str                                 # the token followed across stages
    track_probs: list[float]                   # its probability after each stage
    track_ranks: list[int]                     # its rank after each stage (1 = top)
    position: int = -1                         # the position read, counted from 0


def lens_view(lm, prompt: str, track: str | None = None, k: int = 3, position: int = -1) -> LensView:
    """The logit lens at one position (the last by default): the ranking after each stage and one
    token's climb.

    `track` defaults to the model's final top-1 token at that position.
    """
    ids = lm.encode(prompt)
    require(isinstance(position, int) and -len(ids) <= position < len(ids),
            f"position must be a whole number from 0 to {len(ids) - 1}, got {position!r}")
    position = position % len(ids)
    stages = logit_lens(lm.model, ids, position)
    tokens = lm.vocab.tokens
    track_id = int(torch.argmax(stages[-1].probs)) if track in (None, "") else lm.vocab.id(str(track).strip())
    top, probs, ranks = [], [], []
    for s in stages:
        order = torch.argsort(s.probs, descending=True, stable=True).tolist()
        top.append([(tokens[i], float(s.probs[i])) for i in order[:k]])
        probs.append(float(s.probs[track_id]))
        ranks.append(order.index(track_id) + 1)
    return LensView([s.name for s in stages], top, tokens[track_id], probs, ranks, position)
