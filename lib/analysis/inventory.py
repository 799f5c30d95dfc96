"""Every weight and every activation of a Transformer, with its shape, computed from a config.

`Architecture` describes a decoder-only Transformer by its sizes and by the few choices that
change the parameter count (biases, a gated MLP, the kind of normalisation, tied weights, learned
positions). `weights` lists every tensor with its shape; `activations` does the same for one
forward pass over T tokens; `kv_cache_bytes` is the memory the keys and values of a context take.
Nothing is instantiated, so a 7-billion-parameter model is counted as easily as the course's own.
"""
from __future__ import annotations

import numbers
import operator
from dataclasses import dataclass, replace

from lib.content.real_models import REAL_MODELS, PublishedConfig
from lib.model.config import ModelConfig
from lib.errors import CourseError, require
from lib.messages import say

# Larger than any real model's layers, heads, width or context, and small enough that every
# product of such counts stays exact and finite.
MAX_COUNT = 10**12


@dataclass(frozen=True)
class Architecture:
    """A model's sizes (a `ModelConfig`) plus the choices that change its parameter count."""
    name: str
    sizes: ModelConfig
    attn_bias: bool = False      # biases on Q, K, V and the output projection (GPT-2 has them)
    mlp_bias: bool = True
    gated_mlp: bool = False      # three MLP matrices (SwiGLU, as in Llama) instead of two
    norm: str = "layernorm"      # "layernorm" (gain and bias), "rmsnorm" (gain only) or "none"
    unembed_bias: bool = False
    kv_heads: int | None = None  # heads that have their own K and V (grouped-query attention); None: every head

    def __getattr__(self, item):
        # vocab_size, n_ctx, d_model, n_heads, d_head, n_layers, d_mlp, tied, positions
        if item == "sizes":   # not set yet (copying): no recursion
            raise AttributeError(item)
        return getattr(self.sizes, item)


@dataclass(frozen=True)
class Row:
    name: str
    shape: tuple[int, ...]
    per_layer: bool = False

    @property
    def count(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


def _norm_rows(arch: Architecture, name: str, per_layer: bool) -> list[Row]:
    """A normalisation's learned numbers: a gain, and with LayerNorm also a bias (RMSNorm has none)."""
    if arch.norm == "none":
        return []
    rows = [Row(f"{name} gain", (arch.d_model,), per_layer)]
    if arch.norm == "layernorm":
        rows.append(Row(f"{name} bias", (arch.d_model,), per_layer))
    return rows


def weights(arch: Architecture) -> list[Row]:
    """Every parameter tensor; rows marked `per_layer` occur once in each of the n_layers blocks."""
    D, H, Dh, F, V = arch.d_model, arch.n_heads, arch.d_head, arch.d_mlp, arch.vocab_size
    rows = [Row("token embedding W_E", (V, D))]
    if arch.positions:
        rows.append(Row("position embedding W_pos", (arch.n_ctx, D)))
    layer: list[Row] = _norm_rows(arch, "norm before attention:", True)
    KV = H if arch.kv_heads is None else arch.kv_heads
    for m, heads in (("W_Q", H), ("W_K", KV), ("W_V", KV)):
        layer.append(Row(m, (D, heads * Dh), True))
        if arch.attn_bias:
            layer.append(Row(f"{m[-1]} bias", (heads * Dh,), True))
    layer.append(Row("W_O", (H * Dh, D), True))
    if arch.attn_bias:
        layer.append(Row("O bias", (D,), True))
    if F > 0:
        layer += _norm_rows(arch, "norm before the MLP:", True)
        layer.append(Row("MLP W_in", (D, F), True))
        if arch.gated_mlp:
            # SwiGLU: a second input matrix whose output gates the first's, element by element.
            layer.append(Row("MLP W_gate", (D, F), True))
        if arch.mlp_bias:
            layer.append(Row("MLP bias b_in", (F,), True))
        layer.append(Row("MLP W_out", (F, D), True))
        if arch.mlp_bias:
            layer.append(Row("MLP bias b_out", (D,), True))
    if arch.n_layers > 0:
        rows += layer
    rows += _norm_rows(arch, "final norm:", False)
    if not arch.tied:
        rows.append(Row("unembedding W_U", (D, V)))
    if arch.unembed_bias:
        rows.append(Row("unembedding bias b_U", (V,)))
    return rows


def parameter_count(arch: Architecture) -> int:
    return sum(row_total(arch, r) for r in weights(arch))


def row_total(arch: Architecture, row: Row) -> int:
    """A row's parameters in the whole model (a per-layer row counts once per layer)."""
    return row.count * (arch.n_layers if row.per_layer else 1)


@dataclass(frozen=True)
class TableRow:
    name: str
    cells: tuple[Row | None, ...]   # one per architecture; None where it has no such weight
    totals: tuple[int, ...]         # parameters in the whole model, per architecture (0 where absent)


def weights_table(archs: list[Architecture]) -> list[TableRow]:
    """Every weight of every architecture, one row per kind of weight in forward-pass order: each
    column adds up to that architecture's `parameter_count`."""
    by_arch = [{r.name: r for r in weights(a)} for a in archs]
    # Forward-pass order: the order in which an architecture with every option would list them.
    full = Architecture("every option", replace(archs[0].sizes, tied=False, positions=True, n_layers=1, d_mlp=1), attn_bias=True,
                        mlp_bias=True, gated_mlp=True, norm="layernorm", unembed_bias=True)
    order = [r.name for r in weights(full)]
    names = sorted({name for rows in by_arch for name in rows}, key=order.index)
    table = []
    for name in names:
        cells = tuple(rows.get(name) for rows in by_arch)
        totals = tuple(row_total(a, c) if c else 0 for a, c in zip(archs, cells))
        table.append(TableRow(name, cells, totals))
    return table


def twelve_L_d2(arch: Architecture) -> int:
    """The rule of thumb 12 * n_layers * d_model^2: attention (4 d^2) plus an MLP of width 4d (8 d^2)."""
    return 12 * arch.n_layers * arch.d_model ** 2


def activations(arch: Architecture, T: int) -> list[Row]:
    """The tensors one forward pass over T tokens computes (per layer where marked)."""
    T = whole_count("T", T)
    D, H, Dh, F, V = arch.d_model, arch.n_heads, arch.d_head, arch.d_mlp, arch.vocab_size
    rows = [Row("token ids", (T,)), Row("residual stream after the embedding", (T, D)),
            Row("Q, K and V, per head", (H, T, Dh), True), Row("attention scores QK^T, per head", (H, T, T), True),
            Row("attention pattern (after mask and softmax)", (H, T, T), True),
            Row("head outputs (pattern x V)", (H, T, Dh), True), Row("heads concatenated", (T, H * Dh), True),
            Row("attention write-back (concat x W_O)", (T, D), True)]
    if F > 0:
        rows += [Row("MLP hidden activation", (T, F), True), Row("MLP write-back", (T, D), True)]
    rows += [Row("final residual stream", (T, D)), Row("logits", (T, V)), Row("next-token probabilities", (V,))]
    return rows


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:20] + "..."


def whole_count(name: str, value) -> int:
    """A count (layers, heads, tokens): a whole number from 1 to MAX_COUNT, numpy integers
    included; a float, a bool or a string is refused even when it looks whole."""
    if not isinstance(value, bool):
        try:
            n = operator.index(value)
        except TypeError:
            n = None
        if n is not None and 1 <= n <= MAX_COUNT:
            return n
    raise CourseError(say("whole_count", name=name, maximum=f"{MAX_COUNT:,}", got=_shown(value)))


def kv_cache_bytes(layers: int, context: int, heads: int, d_head: int, bytes_per_element: float) -> float:
    """2 (K and V) x layers x context x heads x d_head x bytes per number."""
    numbers_stored = 2
    for name, value in (("layers", layers), ("context", context), ("heads", heads), ("d_head", d_head)):
        numbers_stored *= whole_count(name, value)
    b = bytes_per_element
    ok = isinstance(b, numbers.Real) and not isinstance(b, bool) and 0 < b <= MAX_COUNT
    require(ok, say("bytes_per_element", maximum=f"{MAX_COUNT:,}", got=_shown(b)))
    # Whole bytes keep the answer a whole number of bytes.
    return numbers_stored * (int(b) if isinstance(b, numbers.Integral) else float(b))


def from_config(name: str, cfg: ModelConfig) -> Architecture:
    """The course's own models, in the same terms (they have an unembedding bias, no attention biases)."""
    return Architecture(name, cfg, attn_bias=False, mlp_bias=True, gated_mlp=False,
                        norm="layernorm" if cfg.layer_norm else "none", unembed_bias=True)


GPT2_SMALL = Architecture("GPT-2 small", ModelConfig(vocab_size=50257, n_ctx=1024, d_model=768, n_heads=12, d_head=64,
                                                     n_layers=12, d_mlp=3072, act="gelu", tied=True),
                          attn_bias=True, mlp_bias=True, norm="layernorm")
# A 7B model of the Llama-2 shape: no biases, RMSNorm, a gated MLP, untied, rotary positions.
SEVEN_B = Architecture("7B (Llama-2 shape)",
                       ModelConfig(vocab_size=32000, n_ctx=4096, d_model=4096, n_heads=32, d_head=128, n_layers=32,
                                   d_mlp=11008, tied=False, positions=False),
                       mlp_bias=False, gated_mlp=True, norm="rmsnorm")


# ----------------------------------------------------------------------------- real models, from their configs

def published_architecture(c: PublishedConfig) -> Architecture:
    """A published configuration (`lib.content.real_models`) in the inventory's terms."""
    sizes = ModelConfig(vocab_size=c.vocab, n_ctx=c.n_ctx, d_model=c.d_model, n_heads=c.heads, d_head=c.d_head,
                        n_layers=c.layers, d_mlp=c.d_mlp, tied=c.tied, positions=c.learned_positions)
    return Architecture(c.name, sizes, attn_bias=c.bias, mlp_bias=c.bias, gated_mlp=c.gated_mlp, norm=c.norm,
                        unembed_bias=c.unembed_bias, kv_heads=c.kv_heads)


@dataclass(frozen=True)
class ModelFacts:
    name: str
    parameters: int
    published: float              # the published total (for the course's own model: its own count)
    unembed_params: int           # d_model x vocab (+ its bias): the read-out dictionary
    unembed_share: float          # of all parameters (for tied models the dictionary is the embedding table too)
    unembed_compute_share: float  # of one token's multiply-adds in the weight matrices
    kv_bytes_per_token: int       # keys and values kept per token of context, 16-bit numbers
    tied: bool
    bias: bool
    norm: str
    kv_heads: int
    heads: int
    vocab: int = 0
    d_model: int = 0
    layers: int = 0
    source: str = "its published configuration"


def per_token_multiply_adds(arch: Architecture) -> int:
    """One token's multiply-adds in the weight matrices: every matrix of every block once, and the
    read-out dictionary once; the embedding lookups are reads, not products, and attention over the earlier
    tokens (which grows with the context) is left out."""
    matrices = sum(row_total(arch, r) for r in weights(arch)
                   if r.per_layer and len(r.shape) == 2)
    return matrices + arch.d_model * arch.vocab_size


def model_facts(arch: Architecture, published: float | None = None) -> ModelFacts:
    total = parameter_count(arch)
    unembed = arch.d_model * arch.vocab_size + (arch.vocab_size if arch.unembed_bias else 0)
    kv = arch.n_heads if arch.kv_heads is None else arch.kv_heads
    return ModelFacts(arch.name, total, float(total if published is None else published), unembed, unembed / total,
                      arch.d_model * arch.vocab_size / per_token_multiply_adds(arch),
                      int(kv_cache_bytes(arch.n_layers, 1, kv, arch.d_head, 2)) if arch.n_layers else 0,
                      arch.tied, arch.attn_bias or arch.mlp_bias, arch.norm, kv, arch.n_heads,
                      arch.vocab_size, arch.d_model, arch.n_layers)


def file_model_facts(name: str, facts) -> ModelFacts:
    """A model's facts counted from its weights file rather than from a published configuration: every
    parameter from the shapes of the tensors the file stores, the sizes from its metadata (`facts`: a
    `lib.model.smollm2.FileFacts`, GGUF tensor names: `token_embd.weight`, `output.weight` when untied,
    `blk.N.*` per layer)."""
    shapes, cfg = facts.shapes, facts.cfg
    total = 0
    for shape in shapes.values():
        n = 1
        for s in shape:
            n *= s
        total += n
    vocab, d = shapes["token_embd.weight"]
    require((vocab, d) == (cfg.vocab_size, cfg.d_model),
            f"{name}: the embedding's shape {shapes['token_embd.weight']} disagrees with the metadata's sizes")
    tied = "output.weight" not in shapes
    # One token's multiply-adds in the weight matrices: every 2-D tensor of every block, then the dictionary.
    matrices = sum(shape[0] * shape[1] for n, shape in shapes.items() if n.startswith("blk.") and len(shape) == 2)
    kv = cfg.n_kv_heads
    return ModelFacts(name, total, float(total), d * vocab, d * vocab / total, d * vocab / (matrices + d * vocab),
                      int(kv_cache_bytes(cfg.n_layers, 1, kv, cfg.d_head, 2)), tied,
                      any(n.endswith(".bias") for n in shapes),
                      "layernorm" if any(n.endswith("norm.bias") for n in shapes) else "rmsnorm", kv, cfg.n_heads,
                      vocab, d, cfg.n_layers, "its weights file")


def real_model_rows(toy: Architecture | None = None) -> list[ModelFacts]:
    """Every published model of `lib.content.real_models`, then the course's own model if given."""
    rows = [model_facts(published_architecture(c), c.published_total) for c in REAL_MODELS]
    return rows + ([model_facts(toy)] if toy is not None else [])
