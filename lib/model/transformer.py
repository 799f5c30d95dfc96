"""The Transformer, written out as explicit math, one head at a time.

Nothing here is fused: every head has its own slice of `W_Q`, `W_K`, `W_V` (shaped
[head, d_model, d_head]) and of `W_O` (shaped [head, d_head, d_model]), so each head's query,
pattern and write into the residual stream is a tensor a chapter can name and show. The naming
follows TransformerLens; `run_with_cache` returns `(logits, cache)` with keys such as
`blocks.0.attn.pattern`.

Architecture: learned token and position embeddings, pre-LayerNorm blocks (optional), causal
self-attention without biases, a ReLU (or GELU) MLP with biases, a final LayerNorm (optional)
and an unembedding that is the transposed embedding when `tied`.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Iterable, Iterator

import torch
from torch import nn

from lib.model.config import ModelConfig
from lib.errors import CourseError, require

Head = tuple[int, int]  # (layer, head)


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
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, D, Dh = cfg.n_heads, cfg.d_model, cfg.d_head
        self.W_Q = nn.Parameter(torch.empty(H, D, Dh))
        self.W_K = nn.Parameter(torch.empty(H, D, Dh))
        self.W_V = nn.Parameter(torch.empty(H, D, Dh))
        self.W_O = nn.Parameter(torch.empty(H, Dh, D))
        self.d_head = Dh


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.W_in = nn.Parameter(torch.empty(cfg.d_model, cfg.d_mlp))
        self.b_in = nn.Parameter(torch.zeros(cfg.d_mlp))
        self.W_out = nn.Parameter(torch.empty(cfg.d_mlp, cfg.d_model))
        self.b_out = nn.Parameter(torch.zeros(cfg.d_model))
        self.act = cfg.act


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1 = LayerNorm(cfg.d_model) if cfg.layer_norm else None
        self.attn = Attention(cfg)
        self.ln2 = LayerNorm(cfg.d_model) if (cfg.layer_norm and cfg.has_mlp) else None
        self.mlp = MLP(cfg) if cfg.has_mlp else None


@dataclass
class KVCache:
    """Keys and values of every position seen so far: per layer, ([batch, head, pos, d_head]) x 2."""

    layers: list
    length: int

    def n_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for kv in self.layers if kv for t in kv)


class ActivationCache(dict):
    """A dict of named intermediate tensors, with helpers that select per layer."""

    def layer(self, layer: int, name: str) -> torch.Tensor:
        return self[f"blocks.{layer}.{name}"]

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except KeyError:
            known = ", ".join(sorted(self.keys()))
            raise CourseError(f"the cache has no entry {key!r}; it has: {known}") from None


class Transformer(nn.Module):
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
        if cfg.tied:
            self.W_U_own = None
        else:
            self.W_U_own = nn.Parameter(torch.empty(cfg.d_model, cfg.vocab_size))
        self.b_U = nn.Parameter(torch.zeros(cfg.vocab_size))
        self._ablated: frozenset[Head] = frozenset()
        self.reset_parameters()

    # ----------------------------------------------------------------- parameters
    def reset_parameters(self) -> None:
        std = self.cfg.init_std
        for name, p in self.named_parameters():
            if name.endswith((".w",)):
                nn.init.ones_(p)
            elif name.split(".")[-1].startswith("b"):
                nn.init.zeros_(p)
            else:
                nn.init.normal_(p, std=std)

    @property
    def W_U(self) -> torch.Tensor:
        """The unembedding [d_model, vocab]: with tied weights, the embedding turned on its side."""
        return self.W_E.T if self.W_U_own is None else self.W_U_own

    # ----------------------------------------------------------------- ablation
    @contextlib.contextmanager
    def ablated(self, heads: Iterable[Head]) -> Iterator["Transformer"]:
        """Within the block, the listed (layer, head) pairs write zero into the residual stream."""
        previous = self._ablated
        self._ablated = previous | self._check_heads(heads)
        try:
            yield self
        finally:
            self._ablated = previous

    def _check_heads(self, heads: Iterable[Head]) -> frozenset[Head]:
        out = set()
        for item in heads:
            try:
                layer, head = (int(x) for x in item)
            except (TypeError, ValueError):
                raise CourseError(f"a head is named as (layer, head), got {item!r}") from None
            require(0 <= layer < self.cfg.n_layers and 0 <= head < self.cfg.n_heads,
                    f"head ({layer}, {head}) does not exist: layers run 0 to {self.cfg.n_layers - 1}, "
                    f"heads 0 to {self.cfg.n_heads - 1}")
            out.add((layer, head))
        return frozenset(out)

    # ----------------------------------------------------------------- forward
    def _as_batch(self, tokens) -> tuple[torch.Tensor, bool]:
        t = torch.as_tensor(tokens, dtype=torch.long)
        single = t.dim() == 1
        if single:
            t = t.unsqueeze(0)
        require(t.dim() == 2, f"tokens must be shaped [position] or [batch, position], got {tuple(t.shape)}")
        require(t.shape[1] >= 1, "the prompt is empty: give at least one token")
        require(int(t.min()) >= 0 and int(t.max()) < self.cfg.vocab_size,
                f"token ids must lie in 0 to {self.cfg.vocab_size - 1}")
        return t, single

    def forward(self, tokens, ablate: Iterable[Head] = (), ablate_mlps: Iterable[int] = ()) -> torch.Tensor:
        """Logits for every position, shaped like `tokens` plus a vocabulary axis."""
        logits, _ = self._run(tokens, ablate=ablate, cache=None, ablate_mlps=ablate_mlps)
        return logits

    def run_with_cache(self, tokens, ablate: Iterable[Head] = (),
                       ablate_mlps: Iterable[int] = ()) -> tuple[torch.Tensor, ActivationCache]:
        """Logits and every intermediate tensor, for a single prompt or a batch.

        Cache keys (shapes for a single prompt of T tokens; a batch adds a leading axis):
        `embed`, `pos_embed`, `blocks.L.resid_pre` [T, d_model]; `blocks.L.ln1` (normalised input);
        `blocks.L.attn.q|k|v` [T, head, d_head]; `blocks.L.attn.qk` raw Q.K [head, T, T];
        `blocks.L.attn.scores` scaled and masked (-inf above the diagonal); `blocks.L.attn.pattern`
        [head, T, T]; `blocks.L.attn.z` [T, head, d_head] (pattern times V); `blocks.L.attn.head_out`
        [T, head, d_model] (each head's write); `blocks.L.attn_out`; `blocks.L.resid_mid`;
        `blocks.L.mlp.pre` and `blocks.L.mlp.post` [T, d_mlp]; `blocks.L.mlp_out`; `blocks.L.resid_post`;
        `resid_final` (the residual before the final LayerNorm); `ln_final` (after it); `logits`.

        `ablate_mlps` lists layers whose MLP writes zero into the residual stream.
        """
        with torch.no_grad():
            return self._run(tokens, ablate=ablate, cache=ActivationCache(), ablate_mlps=ablate_mlps)

    def _check_layers(self, layers: Iterable[int]) -> frozenset[int]:
        out = set()
        for layer in layers:
            require(isinstance(layer, int) and 0 <= layer < self.cfg.n_layers,
                    f"layer {layer!r} does not exist: layers run 0 to {self.cfg.n_layers - 1}")
            out.add(layer)
        return frozenset(out)

    def _run(self, tokens, ablate, cache, past_kv=None, ablate_mlps: Iterable[int] = ()):
        t, single = self._as_batch(tokens)
        start = 0 if past_kv is None else past_kv.length
        T = t.shape[1]
        require(start + T <= self.cfg.n_ctx,
                f"the prompt has {start + T} tokens but the model's context holds at most {self.cfg.n_ctx}")
        ablated = self._ablated | self._check_heads(ablate)
        mlps_off = self._check_layers(ablate_mlps)

        def keep(name, x):
            if cache is not None:
                # Detached: the cache is for reading (a slice of a parameter would otherwise still
                # carry its gradient flag, and .numpy() on it fails).
                cache[name] = (x[0] if single else x).detach()
            return x

        resid = keep("embed", self.W_E[t]) + keep("pos_embed", self.W_pos[start:start + T].unsqueeze(0))
        new_kv = []
        for layer, block in enumerate(self.blocks):
            p = f"blocks.{layer}."
            keep(p + "resid_pre", resid)
            x = keep(p + "ln1", block.ln1(resid)) if block.ln1 is not None else resid
            attn_out, kv = self._attention(block.attn, x, layer, ablated, keep, p,
                                           None if past_kv is None else past_kv.layers[layer])
            new_kv.append(kv)
            resid = keep(p + "resid_mid", resid + keep(p + "attn_out", attn_out))
            if block.mlp is not None:
                x = keep(p + "ln2", block.ln2(resid)) if block.ln2 is not None else resid
                out = self._mlp(block.mlp, x, keep, p)
                resid = resid + keep(p + "mlp_out", torch.zeros_like(out) if layer in mlps_off else out)
            keep(p + "resid_post", resid)
        keep("resid_final", resid)
        final = keep("ln_final", self.ln_final(resid)) if self.ln_final is not None else resid
        logits = keep("logits", final @ self.W_U + self.b_U)
        out = logits[0] if single else logits
        return (out, cache) if past_kv is None else (out, KVCache(new_kv, start + T))

    def _attention(self, attn: Attention, x, layer, ablated, keep, p, past):
        q = keep(p + "attn.q", torch.einsum("btd,hde->bthe", x, attn.W_Q))
        k = torch.einsum("btd,hde->bthe", x, attn.W_K)
        v = torch.einsum("btd,hde->bthe", x, attn.W_V)
        if past is not None:
            # Keys and values of earlier positions come from the cache; only the new rows are computed.
            k = torch.cat([past[0].transpose(1, 2), k], dim=1)
            v = torch.cat([past[1].transpose(1, 2), v], dim=1)
        keep(p + "attn.k", k)
        keep(p + "attn.v", v)
        qk = keep(p + "attn.qk", torch.einsum("bqhe,bkhe->bhqk", q, k))
        Tq, Tk = q.shape[1], k.shape[1]
        # Query i sits at absolute position Tk - Tq + i and may look at keys 0..that position.
        offset = Tk - Tq
        future = torch.arange(Tk).unsqueeze(0) > (torch.arange(Tq).unsqueeze(1) + offset)
        scores = keep(p + "attn.scores", (qk / math.sqrt(attn.d_head)).masked_fill(future, float("-inf")))
        pattern = keep(p + "attn.pattern", torch.softmax(scores, dim=-1))
        z = keep(p + "attn.z", torch.einsum("bhqk,bkhe->bqhe", pattern, v))
        head_out = torch.einsum("bqhe,hed->bqhd", z, attn.W_O)
        if ablated:
            mask = torch.ones(head_out.shape[2])
            for (lyr, h) in ablated:
                if lyr == layer:
                    mask[h] = 0.0
            head_out = head_out * mask.view(1, 1, -1, 1)
        keep(p + "attn.head_out", head_out)
        kv = (k.transpose(1, 2), v.transpose(1, 2))  # stored as [batch, head, position, d_head]
        return head_out.sum(dim=2), kv

    def _mlp(self, mlp: MLP, x, keep, p):
        pre = keep(p + "mlp.pre", x @ mlp.W_in + mlp.b_in)
        post = torch.relu(pre) if mlp.act == "relu" else torch.nn.functional.gelu(pre)
        keep(p + "mlp.post", post)
        return post @ mlp.W_out + mlp.b_out

    # ----------------------------------------------------------------- incremental use
    def forward_with_kv(self, tokens, past_kv=None, ablate: Iterable[Head] = ()):
        """Logits for `tokens` given the keys and values of earlier positions.

        Returns `(logits, kv)`, where `kv` holds, per layer, the keys and values of every position
        seen so far, shaped [batch, head, position, d_head]. Queries are never cached: each is used
        once, by its own position.
        """
        with torch.no_grad():
            if past_kv is None:
                past_kv = KVCache([None] * self.cfg.n_layers, 0)
            return self._run(tokens, ablate=ablate, cache=None, past_kv=past_kv)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
