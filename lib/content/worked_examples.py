"""The worked examples of Part 1, as data that runs through the library's own model.

- `cat_sat()`: one head, d_model 5, the sentence "the cat sat", with the matrices of note 1,
  section 5. The note gives only the three embedding rows it uses and no unembedding; the other
  seventeen rows are seeded random numbers and the unembedding is tied, so every logit is
  computed rather than supposed.
- `two_heads()`: two heads, two layers, d_model 6, d_ff 8 (note 1, section 6), with seeded random
  weights (the note's own were random and unpublished). The initial residual stream is the
  note's h0, set as the embedding rows of the three words, with zero position embeddings.
- `stroke_image()` and `FILTERS`: the 5x5 vertical stroke and the two 3x3 filters of appendix B.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from lib.model.config import ModelConfig
from lib.model.readout import softmax
from lib.model.transformer import Transformer
from lib.model.vocab import Vocabulary

TOY_VOCAB = ("the", "cat", "dog", "sat", "ran", "on", "mat", "floor", "big", "small", "red", "blue",
             "fast", "slow", "a", "and", ".", "is", "was", ".EOS")
SENTENCE = ("the", "cat", "sat")

CAT_SAT_EMBED = {
    "the": [0.10, -0.20, 0.05, 0.40, 0.15],
    "cat": [0.30, 0.50, -0.10, 0.20, 0.00],
    "sat": [-0.40, 0.10, 0.60, -0.30, 0.20],
}
CAT_SAT_W_Q = [[1.0, 0.0, 0.0, 0.5, 0.0],
               [0.0, 1.0, 0.0, 0.0, 0.5],
               [0.0, 0.0, 1.0, 0.0, 0.0],
               [0.5, 0.0, 0.0, 1.0, 0.0],
               [0.0, 0.5, 0.0, 0.0, 1.0]]
CAT_SAT_W_K = [[0.8, 0.2, 0.0, 0.0, 0.0],
               [0.2, 0.8, 0.0, 0.0, 0.0],
               [0.0, 0.0, 0.9, 0.1, 0.0],
               [0.0, 0.0, 0.1, 0.9, 0.0],
               [0.0, 0.0, 0.0, 0.0, 1.0]]
CAT_SAT_W_V = [[0.5, 0.5, 0.0, 0.0, 0.0],
               [0.5, -0.5, 0.0, 0.0, 0.0],
               [0.0, 0.0, 1.0, 0.0, 0.0],
               [0.0, 0.0, 0.0, 1.0, 0.0],
               [0.0, 0.0, 0.0, 0.0, 1.0]]
CAT_SAT_W_O = np.eye(5).tolist()

# What note 1 prints for the same steps, rounded by hand; the chapter compares them with the
# computation and says where they differ.
NOTE_CAT_SAT = {
    "Q": [[0.30, -0.10, 0.05, 0.45, 0.05], [0.40, 0.50, -0.10, 0.35, 0.25], [-0.25, 0.20, 0.60, -0.50, 0.25]],
    "K": [[0.04, -0.14, 0.04, 0.41, 0.15], [0.34, 0.46, -0.10, 0.17, 0.00], [-0.30, -0.00, 0.51, -0.21, 0.20]],
    "V": [[-0.05, 0.15, 0.05, 0.40, 0.15], [0.40, -0.10, -0.10, 0.20, 0.00], [-0.15, -0.25, 0.60, -0.30, 0.20]],
    "QK": [[0.20, 0.07, -0.21], [-0.01, 0.40, -0.23], [-0.16, 0.06, 0.59]],
    "scaled": [[0.089, 0.031, -0.094], [-0.004, 0.179, -0.103], [-0.071, 0.027, 0.264]],
    "pattern": [[1.000, 0.000, 0.000], [0.454, 0.546, 0.000], [0.250, 0.276, 0.474]],
    "z": [[-0.050, 0.150, 0.050, 0.400, 0.150], [0.196, 0.014, -0.027, 0.291, 0.068],
          [-0.022, -0.094, 0.262, -0.061, 0.132]],
    "h_last": [-0.351, 0.030, 0.802, -0.398, 0.247],
}

TWO_HEADS_H0 = [[0.10, -0.10, 0.05, 0.30, 0.15, -0.05],
                [0.40, 0.50, -0.20, 0.20, 0.10, 0.25],
                [-0.50, 0.15, 0.65, -0.20, 0.15, 0.05]]
TWO_HEADS_SEED = 6
TWO_HEADS_STD = 0.4


@dataclass
class WorkedExample:
    model: Transformer
    vocab: Vocabulary
    tokens: list[int]


def _set(param: torch.nn.Parameter, value) -> None:
    with torch.no_grad():
        param.copy_(torch.as_tensor(np.asarray(value, dtype=np.float32)))


def _freeze(model: Transformer) -> None:
    """Fixed weights, like a loaded model's: nothing computed from them carries a gradient, so a
    reader's arithmetic on them (a float, a .numpy()) runs without a requires_grad warning."""
    model.eval()
    model.requires_grad_(False)


def cat_sat() -> WorkedExample:
    cfg = ModelConfig(vocab_size=len(TOY_VOCAB), n_ctx=3, d_model=5, n_heads=1, d_head=5, n_layers=1,
                      d_mlp=0, layer_norm=False, tied=True)
    torch.manual_seed(5)
    model = Transformer(cfg)
    vocab = Vocabulary(TOY_VOCAB)
    rng = np.random.default_rng(5)
    E = rng.normal(0, 0.4, size=(len(TOY_VOCAB), 5)).round(2)
    for word, row in CAT_SAT_EMBED.items():
        E[vocab.id(word)] = row
    _set(model.W_E, E)
    _set(model.W_pos, np.zeros((3, 5)))
    attn = model.blocks[0].attn
    _set(attn.W_Q, [CAT_SAT_W_Q])
    _set(attn.W_K, [CAT_SAT_W_K])
    _set(attn.W_V, [CAT_SAT_W_V])
    _set(attn.W_O, [CAT_SAT_W_O])
    _set(model.b_U, np.zeros(len(TOY_VOCAB)))
    _freeze(model)
    return WorkedExample(model, vocab, vocab.encode(SENTENCE))


def two_heads() -> WorkedExample:
    cfg = ModelConfig(vocab_size=len(TOY_VOCAB), n_ctx=3, d_model=6, n_heads=2, d_head=3, n_layers=2,
                      d_mlp=8, layer_norm=False, tied=False)
    model = Transformer(cfg)
    vocab = Vocabulary(TOY_VOCAB)
    rng = np.random.default_rng(TWO_HEADS_SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.split(".")[-1].startswith("b"):
                p.zero_()  # the note's example has no biases
            else:
                p.copy_(torch.as_tensor(rng.normal(0, TWO_HEADS_STD, size=tuple(p.shape)), dtype=torch.float32))
    E = model.W_E.detach().numpy().copy()
    for word, row in zip(SENTENCE, TWO_HEADS_H0):
        E[vocab.id(word)] = row
    _set(model.W_E, E)
    _set(model.W_pos, np.zeros((3, 6)))
    _freeze(model)
    return WorkedExample(model, vocab, vocab.encode(SENTENCE))


def echo_count(ex: WorkedExample, prefix: tuple[str, ...] = ("the", "cat")) -> tuple[int, int]:
    """(words that are their own first choice, words tried): each word of the vocabulary is put
    after `prefix`, and the model's top prediction compared with it. With tied weights the residual
    stream, still mostly the last word's embedding, scores that word by its own squared length."""
    hits = 0
    with torch.no_grad():
        for word in range(len(ex.vocab)):
            logits = ex.model(ex.vocab.encode(list(prefix)) + [word])[-1]
            hits += int(torch.argmax(logits)) == word
    return hits, len(ex.vocab)


def concat_heads(W: torch.Tensor) -> torch.Tensor:
    """Per-head W_Q, W_K or W_V [head, d_model, d_head] as the textbook's one matrix
    [d_model, head*d_head]: the heads' columns side by side."""
    H, d, dh = W.shape
    return W.permute(1, 0, 2).reshape(d, H * dh)


def concat_W_O(W_O: torch.Tensor) -> torch.Tensor:
    """Per-head W_O [head, d_head, d_model] as one matrix [head*d_head, d_model]: heads stacked."""
    H, dh, d = W_O.shape
    return W_O.reshape(H * dh, d)


def stroke_image() -> np.ndarray:
    """The 5x5 image of appendix B: ink (1) down the middle column."""
    img = np.zeros((5, 5))
    img[:, 2] = 1
    return img


FILTERS = {
    "vertical": np.array([[-1, 2, -1], [-1, 2, -1], [-1, 2, -1]], dtype=float),
    "horizontal": np.array([[-1, -1, -1], [2, 2, 2], [-1, -1, -1]], dtype=float),
}


# Note 3, appendix A: the search by hand. A finished query vector and a three-word dictionary.
SEARCH_QUERY = (1.0, 0.5, -0.2)
SEARCH_DICTIONARY = {
    "Tarso": (1.2, 0.4, -0.1),
    "Cefa": (0.3, 1.0, 0.2),
    "Paolo": (-0.5, 0.2, 0.9),
}
# What the note prints for the same search, rounded by hand.
NOTE_SEARCH = {
    "logits": (1.42, 0.76, -0.58),
    "probs": (0.61, 0.31, 0.08),
    "logits_x3": (4.26, 2.28, -1.74),
    "probs_x3": (0.87, 0.12, 0.01),
}


# The A/B/C example of "why attention": one query (token C's) against three keys, d_k = 2. The
# source's table of vectors did not survive; these reproduce its dot products (1, 1, 2).
ABC_D_K = 2
ABC_QUERY = (1.0, 1.0)
ABC_KEYS = {"A": (1.0, 0.0), "B": (0.0, 1.0), "C": (1.0, 1.0)}
ABC_VALUES = {"A": (1.0, 0.0), "B": (0.0, 1.0), "C": (1.0, 1.0)}
NOTE_ABC_WEIGHTS = (0.25, 0.25, 0.50)


def attend_one(query, keys: dict, values: dict, d_k: int) -> dict:
    """One query's attention, step by step: dot products, scaling, softmax, weighted sum of values."""
    names = list(keys)
    dots = np.array([np.dot(query, keys[n]) for n in names], dtype=float)
    scaled = dots / np.sqrt(d_k)
    weights = softmax(scaled).numpy()
    out = sum(w * np.asarray(values[n], dtype=float) for w, n in zip(weights, names))
    return {"names": names, "dots": dots, "scaled": scaled, "weights": weights, "output": out}


# Note 2, appendix A: a Gram-Schmidt plane you can check by hand, four words in three dimensions.
GS_WORDS = {"king": (2.0, 1.0, 0.0), "queen": (2.0, -1.0, 0.0), "man": (1.0, 1.0, 1.0), "woman": (1.0, -1.0, 1.0)}
