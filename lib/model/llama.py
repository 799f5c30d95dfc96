"""The Llama architecture (SmolLM2's), written out head by head like the course's own model.

Read it beside `lib.model.transformer`: the same residual stream, the same pre-norm blocks, the same
cache and hook names (`run_with_cache`, `run_with_hooks`, `forward_with_kv`, `ablate=` come from the
toy's `HookedModel`), so ablation, patching and the logit lens run on it unchanged. Every head has its
own W_Q [head, d_model, d_head] and W_O [head, d_head, d_model]; nothing is fused. What differs from
the toy, and why:

- **RMSNorm, not LayerNorm.** Each position's vector is divided by its root mean square and scaled,
  with no centring and no bias: x / sqrt(mean(x^2) + eps) * w. Cheaper, and as good in practice.
- **Rotary positions, no position embedding.** Nothing is added to the token's embedding (there is no
  `pos_embed`). Instead, inside attention, each query and key is turned by an angle proportional to its
  position: the 64 numbers of a head are 32 pairs (number i with number i + 32), and pair i turns by
  position * base^(-i/32), base 100,000. A rotation keeps lengths, and the dot product of a query at
  position m with a key at position n then depends on the offset m - n only: position enters where
  tokens meet, as a relative distance. The cache keeps both: `attn.q`, `attn.k` before the turn,
  `attn.rot_q`, `attn.rot_k` after it (TransformerLens's names).
- **Grouped-query attention.** 9 query heads share 3 key/value heads: query heads 0-2 read key/value
  head 0, heads 3-5 head 1, heads 6-8 head 2. So W_K and W_V are [3, d_model, d_head], and `attn.k`,
  `attn.rot_k` and `attn.v` have 3 heads where `attn.q`, the pattern and `attn.z` have 9. The KV cache
  is three times smaller than with one key and value per query head; the patterns can still all differ,
  since the queries do.
- **A gated MLP (SwiGLU).** Two projections of the input, a gate and an "up" one; the gate goes through
  SiLU (x * sigmoid(x)) and multiplies the other, position by position; then down. `mlp.pre` is the
  gate before SiLU, `mlp.up` the other projection, `mlp.post` their product (what W_out reads).
- **No biases anywhere**, the unembedding's included (`b_U` is zeros, kept so the read-out is written
  as the toy's); the unembedding is the embedding turned on its side (tied), as in the toy when `tied`.

Cache keys for one prompt of T tokens (a batch adds a leading axis): `embed`, `blocks.L.resid_pre`,
`blocks.L.ln1` [T, d_model]; `blocks.L.attn.q|rot_q` [T, 9, d_head]; `blocks.L.attn.k|rot_k|v` [T (keys),
3, d_head]; `blocks.L.attn.qk`, `.scores`, `.pattern` [9, T, T]; `blocks.L.attn.z` [T, 9, d_head];
`blocks.L.attn.head_out` [T, 9, d_model]; `blocks.L.attn_out`, `resid_mid`, `ln2` [T, d_model];
`blocks.L.mlp.pre|up|post` [T, d_mlp]; `blocks.L.mlp_out`, `resid_post`, `resid_final`, `ln_final`
[T, d_model]; `logits` [T, vocab]. With a KV cache, `attn.q` and `attn.k` hold the new positions only,
`rot_k` and `v` every position seen so far.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from lib.errors import require
from lib.model import transformer
from lib.model.hooks import NOT_RECORDED, Recorder
from lib.model.transformer import HookedModel, attend, one_thread


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int = 49152
    n_ctx: int = 8192             # the longest context it was trained for (rotary positions have no table)
    d_model: int = 576
    n_heads: int = 9              # query heads
    n_kv_heads: int = 3           # key/value heads, each shared by n_heads / n_kv_heads query heads
    d_head: int = 64
    n_layers: int = 30
    d_mlp: int = 1536
    rope_base: float = 100000.0
    eps: float = 1e-5             # RMSNorm's epsilon

    # What the shared code asks of a configuration (the toy's ModelConfig has the same names).
    layer_norm = True             # every sublayer reads through a norm (RMSNorm here)
    has_mlp = True

    def __post_init__(self):
        require(self.n_heads % self.n_kv_heads == 0, "the query heads must split evenly among the key/value heads")
        require(self.d_head % 2 == 0, "rotary positions turn pairs of numbers: d_head must be even")

    @property
    def group(self) -> int:
        """How many query heads share one key/value head."""
        return self.n_heads // self.n_kv_heads

    def hook_names(self) -> tuple[str, ...]:
        return _hook_names(self.n_layers)


@functools.lru_cache(maxsize=8)
def _hook_names(n_layers: int) -> tuple[str, ...]:
    names = ["embed"]
    for layer in range(n_layers):
        p = f"blocks.{layer}."
        names += [p + "resid_pre", p + "ln1"]
        names += [p + "attn." + n for n in ("q", "k", "v", "rot_q", "rot_k", "qk", "scores", "pattern", "z", "head_out")]
        names += [p + "attn_out", p + "resid_mid", p + "ln2", p + "mlp.pre", p + "mlp.up", p + "mlp.post",
                  p + "mlp_out", p + "resid_post"]
    return tuple(names + ["resid_final", "ln_final", "logits"])


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * w: LayerNorm without the centring and the bias."""

    centred = False               # what the lens's attribution asks of a norm (the toy's LayerNorm centres)

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.eps = eps

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        """The per-position divisor, shaped [..., 1]."""
        return (x.pow(2).mean(-1, keepdim=True) + self.eps).sqrt()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / self.scale(x) * self.w


@functools.lru_cache(maxsize=64)
def rotary_angles(start: int, end: int, d_head: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [position, d_head] of the angle each pair turns by at positions start to end - 1:
    pair i (numbers i and i + d_head/2) turns by position * base^(-2i/d_head), so the first pairs turn
    fast and the last barely move. (Kept: the 30 layers of a pass ask for the same angles.)"""
    # Computed as Hugging Face's Llama computes them (float32 frequencies, then the product), so
    # both models turn by the same float32 angles.
    inv_freq = 1.0 / (base ** (torch.arange(0, d_head, 2, dtype=torch.int64).float() / d_head))
    angles = torch.arange(start, end).float()[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Turn each pair (x_i, x_{i+d/2}) of the last axis by its angle: (x_i cos - x_{i+d/2} sin,
    x_{i+d/2} cos + x_i sin)."""
    half = x.shape[-1] // 2
    turned = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    if cos.dtype != x.dtype:          # a model widened to float64 (activation patching of the toys)
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return x * cos + turned * sin


class Attention(transformer.Attention):
    """Causal self-attention with rotary positions; 9 query heads read 3 shared key/value heads
    (the toy's weights, W_K and W_V with n_kv_heads heads)."""

    def __init__(self, cfg: LlamaConfig):
        super().__init__(cfg)
        self.cfg = cfg

    def forward(self, x: torch.Tensor, keep: Recorder = NOT_RECORDED,
                past: tuple[torch.Tensor, torch.Tensor] | None = None):
        """x [batch, position, d_model] -> (the write [batch, position, d_model], (turned keys, values)),
        each of the pair [batch, kv_head, position, d_head], earlier positions' (`past`) included."""
        start = 0 if past is None else past[0].shape[2]
        cos, sin = rotary_angles(start, start + x.shape[1], self.cfg.d_head, self.cfg.rope_base)
        q = keep("q", torch.einsum("btd,hde->bhte", x, self.W_Q), position_first=True)
        k = keep("k", torch.einsum("btd,hde->bhte", x, self.W_K), position_first=True)
        v = torch.einsum("btd,hde->bhte", x, self.W_V)
        q = keep("rot_q", rotate(q, cos, sin), position_first=True)
        k = rotate(k, cos, sin)
        if past is not None:
            # Keys are cached after their turn: a key's angle is fixed by its own position.
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        k = keep("rot_k", k, position_first=True)
        v = keep("v", v, position_first=True)
        # Each query head meets the keys and values its group shares: head h reads key/value head h // group.
        shared = torch.arange(self.cfg.n_heads) // self.cfg.group
        return attend(q, k[:, shared], v[:, shared], self.W_O, keep), (k, v)


class MLP(nn.Module):
    """SwiGLU: down(SiLU(gate(x)) * up(x)), position by position."""

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.W_gate = nn.Parameter(torch.empty(cfg.d_model, cfg.d_mlp))
        self.W_in = nn.Parameter(torch.empty(cfg.d_model, cfg.d_mlp))     # the "up" projection
        self.W_out = nn.Parameter(torch.empty(cfg.d_mlp, cfg.d_model))

    def forward(self, x: torch.Tensor, keep: Recorder = NOT_RECORDED) -> torch.Tensor:
        pre = keep("pre", x @ self.W_gate)
        up = keep("up", x @ self.W_in)
        post = keep("post", F.silu(pre) * up)
        return post @ self.W_out


class Block(transformer.Block):
    """One layer, as the toy's (the same forward: norm, attention, add; norm, MLP, add), with RMSNorm,
    rotary grouped-query attention and the gated MLP."""

    def __init__(self, cfg: LlamaConfig):
        nn.Module.__init__(self)
        self.ln1 = RMSNorm(cfg.d_model, cfg.eps)
        self.attn = Attention(cfg)
        self.ln2 = RMSNorm(cfg.d_model, cfg.eps)
        self.mlp = MLP(cfg)


class Llama(HookedModel):
    """Embed, run the blocks, normalise, read out: logits for the next token at every position."""

    # Activation patching widens the toys to float64; 540 MB of weights widened would be 1.1 GB more.
    widen_for_patching = False

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        self.W_E = nn.Parameter(torch.empty(cfg.vocab_size, cfg.d_model))
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.ln_final = RMSNorm(cfg.d_model, cfg.eps)
        # No unembedding bias in Llama: zeros, so the lens and patching read out as they do the toy's.
        # (On the CPU even when the model is built on the meta device to be handed its weights.)
        self.register_buffer("b_U", torch.zeros(cfg.vocab_size, device="cpu"), persistent=False)

    @property
    def W_U(self) -> torch.Tensor:
        """The unembedding [d_model, vocab]: the embedding turned on its side (tied weights)."""
        return self.W_E.T

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, *args, **kwargs) -> torch.Tensor:
        """`HookedModel.forward`, on one thread: measured on the 2-core machine beside other work, a
        prompt of 32 tokens took 0.22 s of processor time on one thread and 2.5 s on two (the second
        thread spends it waiting), and a generated token 0.09 s against 0.9 s."""
        with one_thread():
            return super().forward(*args, **kwargs)

    def embed(self, t: torch.Tensor, start: int, end: int, keep: Recorder) -> torch.Tensor:
        """The stream before block 0: each token's embedding alone (positions enter inside attention)."""
        return keep("embed", self.W_E[t])
