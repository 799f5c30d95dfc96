"""Real models' published configurations, as data: what the scale chapter's table is computed from.

Each entry copies the sizes from the model's own published configuration (Hugging Face `config.json`
where there is one, the paper's table otherwise) and the total its authors give, with where both come
from. Nothing is computed here: `lib.analysis.inventory.real_model_rows` turns these into parameter
counts, the unembedding's share and the KV cache, and a test checks each count against its published
total.
"""
from __future__ import annotations

from dataclasses import dataclass

from lib.errors import require


@dataclass(frozen=True)
class PublishedConfig:
    name: str
    vocab: int
    d_model: int
    layers: int
    heads: int
    kv_heads: int            # heads with their own keys and values (fewer than heads: grouped-query attention)
    d_head: int
    d_mlp: int
    n_ctx: int
    tied: bool               # the unembedding is the embedding table, transposed
    bias: bool               # biases on the attention and MLP matrices
    unembed_bias: bool
    norm: str                # "layernorm" (gain and bias) or "rmsnorm" (gain only)
    gated_mlp: bool          # SwiGLU: three MLP matrices instead of two
    learned_positions: bool  # a table of position vectors (GPT-2, GPT-3); rotary positions have no weights
    published_total: float   # the parameter count its authors publish
    source: str


REAL_MODELS: tuple[PublishedConfig, ...] = (
    PublishedConfig("GPT-2 small", 50257, 768, 12, 12, 12, 64, 3072, 1024, True, True, False, "layernorm", False, True,
                    124e6, "openai-community/gpt2 config.json; 124M, the size OpenAI's release names it by"),
    PublishedConfig("GPT-2 XL", 50257, 1600, 48, 25, 25, 64, 6400, 1024, True, True, False, "layernorm", False, True,
                    1.558e9, "openai-community/gpt2-xl config.json; 1558M, the size OpenAI's release names it by"),
    PublishedConfig("GPT-3 175B", 50257, 12288, 96, 96, 96, 128, 49152, 2048, True, True, False, "layernorm", False,
                    True, 175.0e9, "Brown et al. 2020, Table 2.1 (d_ff = 4 d_model; GPT-2's vocabulary and layout)"),
    PublishedConfig("Llama-2-7B", 32000, 4096, 32, 32, 32, 128, 11008, 4096, False, False, False, "rmsnorm", True, False,
                    6.74e9, "meta-llama/Llama-2-7b-hf config.json; 6.74B parameters in its safetensors files"),
    PublishedConfig("Llama-3-8B", 128256, 4096, 32, 32, 8, 128, 14336, 8192, False, False, False, "rmsnorm", True,
                    False, 8.03e9, "meta-llama/Meta-Llama-3-8B config.json; 8.03B parameters in its safetensors files"),
    PublishedConfig("SmolLM2-135M", 49152, 576, 30, 9, 3, 64, 1536, 8192, True, False, False, "rmsnorm", True, False,
                    135e6, "HuggingFaceTB/SmolLM2-135M config.json; 135M in its name and model card"),
)


def by_name(name: str) -> PublishedConfig:
    found = [m for m in REAL_MODELS if m.name == name]
    require(bool(found), f"no published configuration named {name!r}; known: {', '.join(m.name for m in REAL_MODELS)}")
    return found[0]
