"""The real model's attention, explored: every layer and head of all-MiniLM-L6-v2, any token as the query.

In a kernel the explorer runs the model (`lib.model.minilm`) on any sentence the reader types. The
website cannot run a 90 MB encoder in the page, so the site's build computes, once, every head's
pattern on the sentences the page offers (`SENTENCES`: the chapters' own, then the labelled pronoun
set of `lib.content.pronouns`), and `export_patterns` writes them where the whole site shares them
(`_static/explorers/real/`, beside the shipped models; an index and one file per sentence, so a page
loads the sentences it shows): each attention weight p stored as the byte round(255 p), so a stored weight is off by at most 1/510 (`TOLERANCE`, held to the library by
tests/test_real_attention.py). The page's twin (`lib/explorers/js/real.js`) reads those bytes;
a sentence it does not hold gets a sentence saying so.

The view, in both: the sentence's WordPiece tokens (with `[CLS]` and `[SEP]`), which of them are
`[CLS]`, `[SEP]` or punctuation (where many heads park their attention, Clark et al. 2019), the
chosen head's whole pattern [query, key], and the chosen query's row in every head [layer, head,
key], from which the picture draws each head's strongest word for that query.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from lib.errors import CourseError
from lib.explorers.definition import Control, Explorer, registered
from lib.messages import say

NAME = "minilm-attention"
FOLDER = "real"                       # under the site's _static/explorers/
SCALE = 255                           # a weight p is stored as the byte round(SCALE * p)
TOLERANCE = 0.5 / SCALE + 1e-6        # a stored weight's largest error (plus float32 rounding)
PRONOUNS = ("it", "he", "she", "they", "him", "her", "them", "its", "his", "their")

# The chapters' sentences (Part 1's ablation chapter reads the first two; why-attention opens with
# the third), then the labelled set.
CHAPTER_SENTENCES = ("The parcel would not go through the door because it was too wide.",
                     "The parcel would not go through the door because it was too narrow.",
                     "The cat sat on the mat because it was tired.")


def sentences() -> tuple[str, ...]:
    """Every sentence the website holds the patterns of, each once, in order."""
    from lib.content.pronouns import ITEMS

    out = []
    for s in (*CHAPTER_SENTENCES, *(it.sentence for it in ITEMS)):
        if s not in out:
            out.append(s)
    return tuple(out)


def is_special(token: str) -> bool:
    """[CLS], [SEP], [PAD] or punctuation: the keys the picture's strongest word leaves out."""
    from lib.analysis.pronoun_heads import is_eligible_key

    return not is_eligible_key(token)


def parse_query(text, tokens: Sequence[str]) -> int:
    """The query typed in its box: a position counted from 0, or one of the sentence's tokens (its
    first occurrence, as the tokenizer writes it: lower case); blank means the sentence's first
    pronoun, or its first word if it has none."""
    text = str(text).strip()
    if text == "":
        found = [i for i, t in enumerate(tokens) if t in PRONOUNS]
        return found[0] if found else min(1, len(tokens) - 1)
    if re.fullmatch(r"[0-9]+", text) and int(text) < len(tokens):
        return int(text)
    if text.lower() in tokens:
        return list(tokens).index(text.lower())
    raise CourseError(say("query", last=len(tokens) - 1, tokens=" ".join(tokens), got=repr(text)))


def view(tokens: list[str], patterns, text: str, layer: int, head: int, query_text) -> dict:
    """The view from a sentence's patterns [layer, head, query, key] (the library's, or the page's bytes)."""
    q = parse_query(query_text, tokens)
    p = np.asarray(patterns, dtype=np.float64)
    return {"sentence": text, "tokens": list(tokens), "special": [is_special(t) for t in tokens], "layer": layer,
            "head": head, "query": q, "pattern": p[layer, head].tolist(), "rows": p[:, :, q, :].tolist()}


def _examples():
    return [real_attention_explorer()]


@registered("real_attention", _examples)
def real_attention_explorer(lm=None, sentence: str = CHAPTER_SENTENCES[0], layer: int = 0, head: int = 0,
                            query: str = "") -> Explorer:
    """MiniLM's attention on a sentence: any layer, any head, any token as the query. In a kernel any
    sentence; on the website the sentences whose patterns the site's build computed."""
    from lib.model import minilm

    lm = lm or minilm.load()
    cfg = lm.cfg
    offered = sentences()
    if sentence not in offered:
        offered = (sentence, *offered)
    rows = [[Control("sentence", "sentence", "the sentence the model reads; in a kernel type any, on the website "
                     "choose one of those computed when the site was built", "prompt", sentence, options=offered,
                     precomputed=True)],
            [Control("layer", "layer", "which layer's head to show", "choice", layer,
                     options=tuple(range(cfg.n_layers))),
             Control("head", "head", "which head of that layer", "choice", head, options=tuple(range(cfg.n_heads))),
             Control("query", "query", "the token whose attention to show: a position counted from 0 or a token of "
                     "the sentence; blank: its first pronoun", "text", query, placeholder="pronoun", width=8)]]

    def compute(v):
        text = str(v["sentence"]).strip()
        tokens, patterns = lm.patterns(text)
        return view(tokens, patterns.numpy(), text, int(v["layer"]), int(v["head"]), v["query"])

    note = (f"On the website this explorer offers the {len(sentences())} sentences whose patterns were computed "
            f"when the site was built (each weight stored to within {0.5 / SCALE:.4f}); in a kernel (launch or "
            "download this page) it runs the model on any sentence you type.")
    # `tolerance`: how far the page's view may lie from the library's (its stored bytes), for the tests.
    return Explorer("real_attention", rows, compute, None, {"data": f"{FOLDER}/{NAME}", "tolerance": TOLERANCE}, note)


# ----------------------------------------------------------------------------- the site's shared files
def quantize(patterns) -> np.ndarray:
    """Attention weights in [0, 1] as bytes: round(SCALE * p)."""
    return np.clip(np.rint(np.asarray(patterns, dtype=np.float64) * SCALE), 0, SCALE).astype(np.uint8)


def export_patterns(folder: Path, lm=None) -> list[Path]:
    """Every offered sentence's patterns, computed by the library, as the page reads them:
    `real/minilm-attention.json` (each sentence's text, tokens, which are special, and its file) and,
    per sentence, `real/minilm-attention/N.bin` ([layer, head, query, key] as bytes). One file per
    sentence: a page loads the index and the sentences it shows (about 10 kB each, gzip), not all 73
    (0.66 MB gzip together, a third of a page's budget)."""
    from lib.model import minilm

    start = time.perf_counter()
    lm = lm or minilm.load()
    out = folder / FOLDER
    (out / NAME).mkdir(parents=True, exist_ok=True)
    index, written = [], []
    for i, text in enumerate(sentences()):
        tokens, patterns = lm.patterns(text)
        path = out / NAME / f"{i}.bin"
        path.write_bytes(quantize(patterns.numpy()).tobytes())
        written.append(path)
        index.append({"text": text, "tokens": tokens, "special": [is_special(t) for t in tokens],
                      "file": f"{NAME}/{i}.bin"})
    meta = out / f"{NAME}.json"
    meta.write_text(json.dumps({"model": "all-MiniLM-L6-v2", "layers": lm.cfg.n_layers, "heads": lm.cfg.n_heads,
                                "scale": SCALE, "sentences": index, "seconds": round(time.perf_counter() - start, 2)}))
    return [meta, *written]


def read_patterns(folder: Path) -> dict[str, tuple[list[str], np.ndarray]]:
    """The exported patterns read back as the page reads them: {sentence: (tokens, [layer, head, q, k])}."""
    meta = json.loads((folder / FOLDER / f"{NAME}.json").read_text())
    L, H = meta["layers"], meta["heads"]
    out = {}
    for s in meta["sentences"]:
        T = len(s["tokens"])
        raw = np.frombuffer((folder / FOLDER / s["file"]).read_bytes(), dtype=np.uint8)
        out[s["text"]] = (s["tokens"], raw.reshape(L, H, T, T).astype(np.float64) / meta["scale"])
    return out
