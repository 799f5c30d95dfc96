"""The Transformer, written out as explicit math, one head at a time.

Read it top to bottom: `LayerNorm`, `Attention`, `MLP`, `Block`, then the `Transformer` that
stacks the blocks between an embedding and an unembedding. Nothing is fused: every head has its
own `W_Q`, `W_K`, `W_V` [head, d_model, d_head] and `W_O` [head, d_head, d_model], so each head's
query, pattern and write is a tensor a chapter can name and show (names as in TransformerLens).

Every named tensor passes through a hook point (`lib.model.hooks`): `keep(name, x)` stores it in the
`ActivationCache` when there is one (`run_with_cache`) and lets hooks read or replace it
(`run_with_hooks`); every intervention is written on that one mechanism. `ablate` (the (layer, head)
pairs that write zero) and `ablate_mlps` (the layers whose MLP writes zero) are zero ablation as hooks;
`kv`, the keys and values of earlier positions, is for generating one token at a time (`forward_with_kv`).

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

from lib.messages import say
from lib.errors import CourseError, require
from lib.model.config import ModelConfig
from lib.model.hooks import NOT_RECORDED, HookFn, Hooks, NameOrPredicate, Recorder, zero_hooks

Head = tuple[int, int]  # (layer, head)


class ActivationCache(dict):
    """Intermediate tensors by name; asking for a missing name lists the names there are."""

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except KeyError:
            known = ", ".join(sorted(self.keys()))
            raise CourseError(f"the cache has no entry {key!r}; it has: {known}") from None


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
        # One key and value head per query head here; SmolLM2's 9 query heads share 3 (lib.model.llama).
        K = getattr(cfg, "n_kv_heads", H)
        self.W_Q = nn.Parameter(torch.empty(H, D, Dh))
        self.W_K = nn.Parameter(torch.empty(K, D, Dh))
        self.W_V = nn.Parameter(torch.empty(K, D, Dh))
        self.W_O = nn.Parameter(torch.empty(H, Dh, D))
        self.d_head = Dh

    def forward(self, x: torch.Tensor, keep: Recorder = NOT_RECORDED,
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
        k = keep("k", k, position_first=True)
        v = keep("v", v, position_first=True)
        return attend(q, k, v, self.W_O, keep), (k, v)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, W_O: torch.Tensor,
           keep: Recorder = NOT_RECORDED) -> torch.Tensor:
    """What every causal attention does once its queries, keys and values are made (each [batch, head,
    position, d_head], one key and value per query head): score, mask, softmax, mix, write; the layer's
    write [batch, position, d_model] is the sum of the heads' writes."""
    qk = keep("qk", q @ k.transpose(2, 3))  # [batch, head, query, key]
    # Dividing by sqrt(d_head) keeps the scores' spread independent of the head's width.
    scaled = qk / math.sqrt(q.shape[-1])
    scores = keep("scores", scaled.masked_fill(_future(q.shape[2], k.shape[2]), float("-inf")))
    pattern = keep("pattern", torch.softmax(scores, dim=-1))
    z = keep("z", pattern @ v, position_first=True)  # each query's mix of values
    # Each head's write, a hook point of its own: a hook that changes one head's slice changes the sum.
    head_out = keep("head_out", torch.einsum("bhqe,hed->bhqd", z, W_O), position_first=True)
    return head_out.sum(dim=1)


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

    def forward(self, resid: torch.Tensor, keep: Recorder = NOT_RECORDED, past=None):
        """resid [batch, position, d_model] -> (the stream after this layer, the keys and values)."""
        resid = keep("resid_pre", resid)
        x = keep("ln1", self.ln1(resid)) if self.ln1 is not None else resid
        attn_out, kv = self.attn(x, keep.scope("attn"), past)
        resid = keep("resid_mid", resid + keep("attn_out", attn_out))
        if self.mlp is not None:
            x = keep("ln2", self.ln2(resid)) if self.ln2 is not None else resid
            resid = resid + keep("mlp_out", self.mlp(x, keep.scope("mlp")))
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


def _names_filter(names):
    """run_with_cache's `names` as a predicate over names (None: every name)."""
    if names is None or callable(names):
        return names
    wanted = {names} if isinstance(names, str) else set(names)
    return wanted.__contains__


class HookedModel(nn.Module):
    """The entry points every model of the course shares (the toy here, SmolLM2 in `lib.model.llama`):
    the subclass says how a token enters the stream (`embed`) and has `W_E`, `blocks`, `ln_final` (or
    None), `W_U` and `b_U`."""

    def forward(self, tokens, ablate: Iterable[Head] = (), ablate_mlps: Iterable[int] = (),
                cache: ActivationCache | None = None, kv: KVCache | None = None,
                fwd_hooks: Iterable[tuple[NameOrPredicate, HookFn]] = (), names=None) -> torch.Tensor:
        """Logits for every position: `tokens` is [position] or [batch, position], the logits
        add a vocabulary axis. A `kv` is extended in place: `tokens` continue from `kv.length`.

        `fwd_hooks`: (hook point's name or a predicate over names, function) pairs that read or replace
        named activations (see `lib.model.hooks`). `ablate` ((layer, head) pairs) and `ablate_mlps`
        (layers) are zero ablation written as hooks (`hooks.zero_hooks`), run before `fwd_hooks`."""
        t, single = _as_batch(tokens, self.cfg.vocab_size)
        start = 0 if kv is None else kv.length
        end = start + t.shape[1]
        require(end <= self.cfg.n_ctx,
                say("context_holds", n=end, n_ctx=self.cfg.n_ctx))
        hooks = None
        if ablate or ablate_mlps or fwd_hooks:
            hooks = Hooks([*zero_hooks(self.cfg, ablate, ablate_mlps), *fwd_hooks], self.cfg)
        keep = Recorder(cache, single=single, hooks=hooks, names=_names_filter(names))

        resid = self.embed(t, start, end, keep)
        for layer, block in enumerate(self.blocks):
            past = None if kv is None else kv.layers[layer]
            resid, present = block(resid, keep.scope(f"blocks.{layer}"), past)
            if kv is not None:
                kv.layers[layer] = present
        if kv is not None:
            kv.length = end
        resid = keep("resid_final", resid)
        final = keep("ln_final", self.ln_final(resid)) if self.ln_final is not None else resid
        logits = keep("logits", final @ self.W_U + self.b_U)
        return logits[0] if single else logits

    def run_with_cache(self, tokens, ablate: Iterable[Head] = (), ablate_mlps: Iterable[int] = (),
                       fwd_hooks: Iterable[tuple[NameOrPredicate, HookFn]] = (),
                       names: NameOrPredicate | Iterable[str] | None = None) -> tuple[torch.Tensor, ActivationCache]:
        """Logits and every intermediate tensor (after any hooks: what the pass used). The toy's keys
        (`lib.model.llama` lists SmolLM2's), with shapes for one prompt of T tokens (a batch adds a
        leading axis; LayerNorm and MLP keys exist only where the model has them); each key is also a
        hook point (`lib.model.hooks.hook_names`):

        `embed`, `pos_embed`, `blocks.L.resid_pre`, `blocks.L.ln1` [T, d_model];
        `blocks.L.attn.q|k|v|z` [T, head, d_head]; `blocks.L.attn.qk` (raw Q.K), `.scores` (scaled,
        -inf above the diagonal), `.pattern` [head, T, T]; `blocks.L.attn.head_out` [T, head, d_model];
        `blocks.L.attn_out`, `resid_mid`, `ln2` [T, d_model]; `blocks.L.mlp.pre|post` [T, d_mlp];
        `blocks.L.mlp_out`, `resid_post`, `resid_final` (before the final LayerNorm), `ln_final`
        [T, d_model]; `logits` [T, vocab].

        `names` keeps only some of them (a name, a list of names or a predicate over names, as TransformerLens's
        names_filter): a real model's every activation over a batch is hundreds of MB (SmolLM2: about 20 MB a layer
        for ten prompts of 30 tokens), where a chapter reads a few.
        """
        cache = ActivationCache()
        with torch.no_grad():
            logits = self(tokens, ablate=ablate, ablate_mlps=ablate_mlps, cache=cache, fwd_hooks=fwd_hooks, names=names)
        return logits, cache

    def run_with_hooks(self, tokens, fwd_hooks: Iterable[tuple[NameOrPredicate, HookFn]] = ()) -> torch.Tensor:
        """Logits of a pass in which each hook reads, and may replace, the activation it is attached
        to: `fwd_hooks` is a list of (hook point's name, or a predicate over names; function
        `fn(tensor, name) -> tensor | None`). The hooks last for this one pass."""
        with torch.no_grad():
            return self(tokens, fwd_hooks=fwd_hooks)

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


class Transformer(HookedModel):
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

    def embed(self, t: torch.Tensor, start: int, end: int, keep: Recorder) -> torch.Tensor:
        """The stream before block 0: each token's embedding plus its position's (positions start to end - 1)."""
        return keep("embed", self.W_E[t]) + keep("pos_embed", self.W_pos[start:end].unsqueeze(0))


class one_thread:
    """torch on one thread for the duration: for one sentence, the second thread of a 2-core
    machine (busy with the notebook or the page) costs more in waiting than it gains (MiniLM and
    SmolLM2 run their passes this way)."""

    def __enter__(self):
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc):
        torch.set_num_threads(self.threads)


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
    require(t.shape[1] >= 1, say("empty_ids"))
    require(int(t.min()) >= 0 and int(t.max()) < vocab_size, f"token ids must lie in 0 to {vocab_size - 1}")
    return t, single
