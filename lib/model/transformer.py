"""The Transformer, written out as explicit math, one head at a time.

Read it top to bottom: `LayerNorm`, `Attention`, `MLP`, `Block`, then the `Transformer` that
stacks the blocks between an embedding and an unembedding. Nothing is fused: every head has its
own `W_Q`, `W_K`, `W_V` [head, d_model, d_head] and `W_O` [head, d_head, d_model], so each head's
query, pattern and write is a tensor a chapter can name and show (names as in TransformerLens).

Whatever a reader asks of a forward pass is an argument of `Transformer.forward`: `ablate`, the
(layer, head) pairs that write zero; `ablate_mlps`, the layers whose MLP writes zero; `cache`, an
`ActivationCache` each module writes its tensors into (`run_with_cache` makes one); `kv`, the keys
and values of earlier positions, for generating one token at a time (`forward_with_kv`).

Architecture: learned token and position embeddings, pre-LayerNorm blocks (optional), causal
self-attention without biases, a ReLU (or GELU) MLP with biases, a final LayerNorm (optional),
and an unembedding that is the embedding turned on its side when `tied`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import torch
from torch import nn
from torch.nn import functional as F

from lib.errors import CourseError, require
from lib.model.config import ModelConfig

Head = tuple[int, int]  # (layer, head)


class ActivationCache(dict):
    """Intermediate tensors by name; asking for a missing name lists the names there are."""

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except KeyError:
            known = ", ".join(sorted(self.keys()))
            raise CourseError(f"the cache has no entry {key!r}; it has: {known}") from None


class Recorder:
    """`keep(name, x)` stores x in the cache under the module's prefix and returns it unchanged;
    without a cache it only returns it. A single prompt's tensors are stored without the batch axis."""

    def __init__(self, cache: ActivationCache | None = None, prefix: str = "", single: bool = False):
        self.cache, self.prefix, self.single = cache, prefix, single

    def __call__(self, name: str, x: torch.Tensor, position_first: bool = False) -> torch.Tensor:
        if self.cache is not None:
            # Attention works in [batch, head, position, ...]; q, k, v, z and head_out are stored
            # in TransformerLens's [batch, position, head, ...].
            stored = x.transpose(1, 2) if position_first else x
            # Detached: the cache is for reading, and .numpy() fails on a tensor that needs grad.
            self.cache[self.prefix + name] = (stored[0] if self.single else stored).detach()
        return x

    def scope(self, name: str) -> "Recorder":
        return Recorder(self.cache, f"{self.prefix}{name}.", self.single)


NOT_RECORDED = Recorder()


class LayerNorm(nn.Module):
    """LayerNorm with its scale kept visible: the lens and attribution need to divide by it."""

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.b = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        """The per-position divisor, shaped [..., 1]."""
        centred = x - x.mean(-1, keepdim=True)
        return (centred.pow(2).mean(-1, keepdim=True) + self.eps).sqrt()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        centred = x - x.mean(-1, keepdim=True)
        return centred / self.scale(x) * self.w + self.b


class Attention(nn.Module):
    """Causal self-attention, head by head. Each head reads the residual stream through its own
    W_Q, W_K and W_V, mixes the values of the positions up to its own, and writes back through its
    own W_O; the layer's write is the sum of the heads' writes."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, D, Dh = cfg.n_heads, cfg.d_model, cfg.d_head
        self.W_Q = nn.Parameter(torch.empty(H, D, Dh))
        self.W_K = nn.Parameter(torch.empty(H, D, Dh))
        self.W_V = nn.Parameter(torch.empty(H, D, Dh))
        self.W_O = nn.Parameter(torch.empty(H, Dh, D))
        self.d_head = Dh

    def forward(self, x: torch.Tensor, keep: Recorder = NOT_RECORDED, heads_off: frozenset[int] = frozenset(),
                past: tuple[torch.Tensor, torch.Tensor] | None = None):
        """x [batch, position, d_model] -> (the write [batch, position, d_model], (keys, values)).

        Inside, every tensor is [batch, head, position, ...]: the heads are a batch of independent
        attentions. `past` holds the keys and values of earlier positions, [batch, head, position,
        d_head] each; the returned pair adds this call's positions to them.
        """
        # einsum, not `x.unsqueeze(1) @ W_Q`: broadcasting the weight over the batch makes its
        # gradient a sum of one product per prompt, four times slower to train.
        q = keep("q", torch.einsum("btd,hde->bhte", x, self.W_Q), position_first=True)
        k = torch.einsum("btd,hde->bhte", x, self.W_K)
        v = torch.einsum("btd,hde->bhte", x, self.W_V)
        if past is not None:
            # Earlier positions' keys and values come from the cache; only the new rows are computed.
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        keep("k", k, position_first=True)
        keep("v", v, position_first=True)
        qk = keep("qk", q @ k.transpose(2, 3))  # [batch, head, query, key]
        # Dividing by sqrt(d_head) keeps the scores' spread independent of the head's width.
        scaled = qk / math.sqrt(self.d_head)
        scores = keep("scores", scaled.masked_fill(_future(q.shape[2], k.shape[2]), float("-inf")))
        pattern = keep("pattern", torch.softmax(scores, dim=-1))
        z = keep("z", pattern @ v, position_first=True)  # each query's mix of values
        head_out = torch.einsum("bhqe,hed->bhqd", z, self.W_O)
        if heads_off:
            # A head switched off still looks (its pattern stays in the cache) but writes zero.
            on = torch.ones(head_out.shape[1])
            on[sorted(heads_off)] = 0.0
            head_out = head_out * on.view(1, -1, 1, 1)
        keep("head_out", head_out, position_first=True)
        return head_out.sum(dim=1), (k, v)


def _future(n_queries: int, n_keys: int) -> torch.Tensor:
    """True where a key lies after its query. The queries are the last `n_queries` of the
    `n_keys` positions (all of them, unless earlier keys came from a KV cache)."""
    return torch.ones(n_queries, n_keys, dtype=torch.bool).triu(n_keys - n_queries + 1)


class MLP(nn.Module):
    """Widen each position's vector, bend it (ReLU or GELU), narrow it back. Positions never mix."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.W_in = nn.Parameter(torch.empty(cfg.d_model, cfg.d_mlp))
        self.b_in = nn.Parameter(torch.zeros(cfg.d_mlp))
        self.W_out = nn.Parameter(torch.empty(cfg.d_mlp, cfg.d_model))
        self.b_out = nn.Parameter(torch.zeros(cfg.d_model))
        self.act = cfg.act

    def forward(self, x: torch.Tensor, keep: Recorder = NOT_RECORDED) -> torch.Tensor:
        pre = keep("pre", x @ self.W_in + self.b_in)
        post = keep("post", torch.relu(pre) if self.act == "relu" else F.gelu(pre))
        return post @ self.W_out + self.b_out


class Block(nn.Module):
    """One layer: attention, then the MLP. Each reads the residual stream (through its own
    LayerNorm, when the model has them) and adds its write onto it, so the stream is a running sum."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1 = LayerNorm(cfg.d_model) if cfg.layer_norm else None
        self.attn = Attention(cfg)
        self.ln2 = LayerNorm(cfg.d_model) if (cfg.layer_norm and cfg.has_mlp) else None
        self.mlp = MLP(cfg) if cfg.has_mlp else None

    def forward(self, resid: torch.Tensor, keep: Recorder = NOT_RECORDED, heads_off: frozenset[int] = frozenset(),
                mlp_off: bool = False, past=None):
        """resid [batch, position, d_model] -> (the stream after this layer, the keys and values)."""
        keep("resid_pre", resid)
        x = keep("ln1", self.ln1(resid)) if self.ln1 is not None else resid
        attn_out, kv = self.attn(x, keep.scope("attn"), heads_off, past)
        resid = keep("resid_mid", resid + keep("attn_out", attn_out))
        if self.mlp is not None:
            x = keep("ln2", self.ln2(resid)) if self.ln2 is not None else resid
            mlp_out = self.mlp(x, keep.scope("mlp"))
            if mlp_off:
                mlp_out = torch.zeros_like(mlp_out)  # computed all the same, so its activations can be read
            resid = resid + keep("mlp_out", mlp_out)
        return keep("resid_post", resid), kv


@dataclass
class KVCache:
    """Keys and values of every position seen so far: per layer, (keys, values), each shaped
    [batch, head, position, d_head]. Queries are never cached: each is used once, by its own position."""

    layers: list
    length: int

    @classmethod
    def empty(cls, n_layers: int) -> "KVCache":
        return cls([None] * n_layers, 0)

    def copy(self) -> "KVCache":
        return KVCache(list(self.layers), self.length)

    def n_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for kv in self.layers if kv for t in kv)


class Transformer(nn.Module):
    """Embed, run the blocks, read out: logits for the next token at every position."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.W_E = nn.Parameter(torch.empty(cfg.vocab_size, cfg.d_model))
        if cfg.positions:
            self.W_pos = nn.Parameter(torch.empty(cfg.n_ctx, cfg.d_model))
        else:
            # Zeros, not a parameter: nothing to learn and nothing saved.
            self.register_buffer("W_pos", torch.zeros(cfg.n_ctx, cfg.d_model), persistent=False)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.ln_final = LayerNorm(cfg.d_model) if cfg.layer_norm else None
        self.W_U_own = None if cfg.tied else nn.Parameter(torch.empty(cfg.d_model, cfg.vocab_size))
        self.b_U = nn.Parameter(torch.zeros(cfg.vocab_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        std = self.cfg.init_std
        for name, p in self.named_parameters():
            if name.endswith(".w"):
                nn.init.ones_(p)
            elif name.split(".")[-1].startswith("b"):
                nn.init.zeros_(p)
            else:
                nn.init.normal_(p, std=std)

    @property
    def W_U(self) -> torch.Tensor:
        """The unembedding [d_model, vocab]: with tied weights, the embedding turned on its side."""
        return self.W_E.T if self.W_U_own is None else self.W_U_own

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, tokens, ablate: Iterable[Head] = (), ablate_mlps: Iterable[int] = (),
                cache: ActivationCache | None = None, kv: KVCache | None = None) -> torch.Tensor:
        """Logits for every position: `tokens` is [position] or [batch, position], the logits
        add a vocabulary axis. A `kv` is extended in place: `tokens` continue from `kv.length`."""
        t, single = _as_batch(tokens, self.cfg.vocab_size)
        start = 0 if kv is None else kv.length
        end = start + t.shape[1]
        require(end <= self.cfg.n_ctx,
                f"the prompt has {end} tokens but the model's context holds at most {self.cfg.n_ctx}")
        heads_off = _heads_by_layer(ablate, self.cfg)
        mlps_off = _check_layers(ablate_mlps, self.cfg)
        keep = Recorder(cache, single=single)

        resid = keep("embed", self.W_E[t]) + keep("pos_embed", self.W_pos[start:end].unsqueeze(0))
        for layer, block in enumerate(self.blocks):
            past = None if kv is None else kv.layers[layer]
            resid, present = block(resid, keep.scope(f"blocks.{layer}"), heads_off[layer], layer in mlps_off, past)
            if kv is not None:
                kv.layers[layer] = present
        if kv is not None:
            kv.length = end
        keep("resid_final", resid)
        final = keep("ln_final", self.ln_final(resid)) if self.ln_final is not None else resid
        logits = keep("logits", final @ self.W_U + self.b_U)
        return logits[0] if single else logits

    def run_with_cache(self, tokens, ablate: Iterable[Head] = (),
                       ablate_mlps: Iterable[int] = ()) -> tuple[torch.Tensor, ActivationCache]:
        """Logits and every intermediate tensor. Keys, with shapes for one prompt of T tokens (a
        batch adds a leading axis; LayerNorm and MLP keys exist only where the model has them):

        `embed`, `pos_embed`, `blocks.L.resid_pre`, `blocks.L.ln1` [T, d_model];
        `blocks.L.attn.q|k|v|z` [T, head, d_head]; `blocks.L.attn.qk` (raw Q.K), `.scores` (scaled,
        -inf above the diagonal), `.pattern` [head, T, T]; `blocks.L.attn.head_out` [T, head, d_model];
        `blocks.L.attn_out`, `resid_mid`, `ln2` [T, d_model]; `blocks.L.mlp.pre|post` [T, d_mlp];
        `blocks.L.mlp_out`, `resid_post`, `resid_final` (before the final LayerNorm), `ln_final`
        [T, d_model]; `logits` [T, vocab].
        """
        cache = ActivationCache()
        with torch.no_grad():
            logits = self(tokens, ablate=ablate, ablate_mlps=ablate_mlps, cache=cache)
        return logits, cache

    def forward_with_kv(self, tokens, past_kv: KVCache | None = None, ablate: Iterable[Head] = (),
                        ablate_mlps: Iterable[int] = ()) -> tuple[torch.Tensor, KVCache]:
        """Logits for `tokens` given the keys and values of earlier positions (none at first).

        Returns `(logits, kv)`: `kv` holds the keys and values of every position seen so far.
        `past_kv` itself is left as it was, so one prefix can be continued in several ways.
        """
        kv = KVCache.empty(self.cfg.n_layers) if past_kv is None else past_kv.copy()
        with torch.no_grad():
            logits = self(tokens, ablate=ablate, ablate_mlps=ablate_mlps, kv=kv)
        return logits, kv


# ----------------------------------------------------------------- checks of a reader's input
def _as_batch(tokens, vocab_size: int) -> tuple[torch.Tensor, bool]:
    """Token ids as [batch, position], and whether they came as a single prompt."""
    try:
        t = torch.as_tensor(tokens)
    except (TypeError, ValueError, RuntimeError):
        raise CourseError("tokens must be whole-number ids, one prompt or a batch of prompts of one "
                          "length") from None
    # Refused rather than rounded: a fractional id (or True) is a mistake, not a token.
    require(t.numel() == 0 or not (t.is_floating_point() or t.is_complex() or t.dtype == torch.bool),
            f"token ids must be whole numbers from 0 to {vocab_size - 1}, got {t.dtype} values")
    t = t.long()
    single = t.dim() == 1
    if single:
        t = t.unsqueeze(0)
    require(t.dim() == 2, f"tokens must be shaped [position] or [batch, position], got {tuple(t.shape)}")
    require(t.shape[1] >= 1, "the prompt is empty: give at least one token")
    require(int(t.min()) >= 0 and int(t.max()) < vocab_size, f"token ids must lie in 0 to {vocab_size - 1}")
    return t, single


def _heads_by_layer(heads: Iterable[Head], cfg: ModelConfig) -> list[frozenset[int]]:
    """(layer, head) pairs, checked, as one set of head numbers per layer."""
    per_layer = [set() for _ in range(cfg.n_layers)]
    for item in heads:
        try:
            layer, head = (int(x) for x in item)
        except (TypeError, ValueError):
            raise CourseError(f"a head is named as (layer, head), got {item!r}") from None
        require(0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads,
                f"head ({layer}, {head}) does not exist: layers run 0 to {cfg.n_layers - 1}, "
                f"heads 0 to {cfg.n_heads - 1}")
        per_layer[layer].add(head)
    return [frozenset(s) for s in per_layer]


def _check_layers(layers: Iterable[int], cfg: ModelConfig) -> frozenset[int]:
    out = set()
    for layer in layers:
        require(isinstance(layer, int) and 0 <= layer < cfg.n_layers,
                f"layer {layer!r} does not exist: layers run 0 to {cfg.n_layers - 1}")
        out.add(layer)
    return frozenset(out)
