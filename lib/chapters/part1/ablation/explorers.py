"""The ablation chapter's explorers: heads and MLPs switched off, activation patching, and the real
model's attention (all-MiniLM-L6-v2: every layer and head, any token as the query).

The page twins are `ablation`, `patching` and `real_attention` in this unit's page.js (the last reads
the stored patterns through lib/explorers/js/real.js); their pictures, in this unit's pictures.js, are drawn
with the renderer's kit (lib/explorers/js/render.js).

The real model's attention. In a kernel the explorer runs the model (`lib.model.minilm`) on any
sentence the reader types. The website cannot run a 90 MB encoder in the page, so the site's build
computes, once, every head's pattern on the sentences the page offers (`SENTENCES`: the chapters'
own, then the labelled pronoun set of `lib.chapters.part1.ablation.pronouns`), and `export_patterns` writes them
where the whole site shares them (`_static/explorers/real/`, beside the shipped models; an index and
one file per sentence, so a page loads the sentences it shows; the explorer's registration names it
as its `site_files`, which `lib.explorers.page.export_site` writes): each attention weight p stored as
the byte round(255 p), so a stored weight is off by at most 1/510 (`TOLERANCE`, held to the library
by tests/chapters/part1/ablation/test_explorers.py). The page's twin reads those bytes; a sentence it does not hold gets
a sentence saying so.

The view, in both: the sentence's WordPiece tokens (with `[CLS]` and `[SEP]`), which of them are
`[CLS]`, `[SEP]` or punctuation (where many heads park their attention, Clark et al. 2019), the
chosen head's whole pattern [query, key], and the chosen query's row in every head [layer, head,
key], from which the picture draws each head's strongest word for that query.
"""
from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from lib.analysis.ablation import KINDS, MATCHES, ablation_view, all_heads, head_name, reference_set
from lib.analysis.patching import double_model, patch, patch_one, swap_players
from lib.content.corpora.calling_game import read_round
from lib.chapters.part1.ablation.pronoun_heads import is_eligible_key
from lib.chapters.part1.ablation.pronouns import ITEMS
from lib.errors import CourseError
from lib.explorers.boxes import parse_position
from lib.explorers.definition import (FOLLOW, Control, Explorer, head_toggles, prompt_control, registered, switched_off,
                                      token_control)
from lib.explorers.shared import example_model, example_prompts, pairs
from lib.messages import say
from lib.model import minilm
from lib.model.readout import softmax

ABLATION_KINDS = {"zero": "zero: write nothing", "mean": "mean: write the average over the reference rounds",
                  "resample": "resample: write what another round wrote"}
MATCH_SHOWN = {"role": "the same role in its turn", "position": "the same position"}


@registered("ablation", lambda: [ablation_explorer(example_model(), [example_prompts()["confident"]]),
                                 ablation_explorer(example_model(), [example_prompts()["confident"]], kind="mean")],
            where="every head and MLP of both blocks, switched off as the map's switches do, with a choice of what "
                  "they write instead.")
def ablation_explorer(lm, prompts: Sequence[str], track: str = "", kind: str = "zero", match: str = "role") -> Explorer:
    """A switch for every head and MLP, and how a switched-off component is replaced (zero, mean or
    resample ablation): switch any off and watch the results page and the patterns."""
    cfg = lm.model.cfg
    rows = [[prompt_control(prompts),
             token_control("track", "follow the token", FOLLOW, track, placeholder="the intact model's answer")],
            [Control("kind", "switched off means", "zero: the component writes nothing; mean: its average write "
                     "over the reference positions; resample: its write at one of them", "choice",
                     kind, options=KINDS, shown=tuple(ABLATION_KINDS[k] for k in KINDS)),
             Control("match", "reference positions", "role: the positions where a token plays the same role in its "
                     "turn (the course's default); position: the same position, whatever stands there", "choice",
                     match, options=MATCHES, shown=tuple(MATCH_SHOWN[m] for m in MATCHES))],
            *head_toggles(cfg.n_layers, cfg.n_heads),
            [Control(f"MLP{layer}", f"MLP {layer}", f"switch block {layer}'s MLP off", "toggle", False)
             for layer in range(cfg.n_layers) if cfg.has_mlp]]
    rows = [r for r in rows if r]

    def compute(v):
        mlps = [layer for layer in range(cfg.n_layers) if v.get(f"MLP{layer}")]
        view = ablation_view(lm, v["prompt"], switched_off(v, cfg.n_layers, cfg.n_heads), v["track"].strip() or None,
                             mlps=mlps, kind=v["kind"], match=v["match"])
        heads = all_heads(lm.model)
        return {"tokens": view.tokens, "off": [head_name(h) for h in view.off] + [f"MLP {m}" for m in view.mlps_off],
                "kind": view.kind, "match": v["match"], "page": pairs(view.page),
                "heads": [head_name(h) for h in heads], "patterns": [view.patterns[h] for h in heads],
                "track": view.track, "track_prob": view.track_prob, "track_prob_intact": view.track_prob_intact}

    note = (f"Mean and resample ablation read the reference set: {reference_set(lm).label}. Matched by role (the "
            "default), mean ablation writes a component's average write over the reference positions where a token "
            "plays the same role in its turn (a later call's callee, <SEP>, an epithet...), and resample ablation "
            "its write at one of them, drawn position by position with seed 0. Matched by position, they take "
            "whatever stands at the same position of the reference rounds: the average there, or one whole round "
            "at least as long as the prompt."
            if cfg.n_layers and lm.meta.get("corpus") else "")
    return Explorer("ablation", rows, compute, lm.name, note=note)


def random_corrupted(rng: random.Random, name: str, values: dict, tokens) -> str | None:
    """The corrupted prompt (for the tests): the clean one with two of its words swapped (as long as the
    clean one), now and then another prompt (None: a random one, most likely of another length)."""
    words = values.get("clean", "").split()
    if len(words) >= 2 and rng.random() < 0.8:
        i, j = rng.sample(range(len(words)), 2)
        words[i], words[j] = words[j], words[i]
        return " ".join(words)
    return None


# The explorer's default pair: a later call whose answer is Tarso, and a legal round of the same length
# (lib.content.corruptions.legal_corruptions) in which a numbered player calls Paolo, so the rules want vice.
PATCH_CLEAN = "<BOS> Pietro chiama 2 <SEP> 2 chiama 3 <SEP> 3 chiama Pietro capo <SEP> Pietro chiama Paolo"
PATCH_CORRUPTED = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama 3 <SEP> 3 chiama 6 <SEP> 6 chiama Paolo"


def is_legal(lm, tokens) -> bool | None:
    """Whether a prompt is a legal prefix of a round of the game (the rules checker finds nothing broken),
    for a model of the calling game; None for a model of another corpus."""
    if not (getattr(lm, "meta", None) and lm.meta.get("corpus") == "calling-game"):
        return None
    return read_round(list(tokens)).status != "broken"


@registered("patching", lambda: [patching_explorer(example_model())], random_text=random_corrupted,
            where="one head's or MLP's write at one position, taken from another prompt's run.")
def patching_explorer(lm, clean: str = PATCH_CLEAN, corrupted: str = PATCH_CORRUPTED,
                      swap: bool = False, prompts: Sequence[str] = (), target: str = "Tarso",
                      against: str = "vice") -> Explorer:
    """Activation patching: a clean and a corrupted prompt of equal length, the grid of the fraction of the
    logit difference each head's write (and each MLP's output, and the residual stream before each block
    and after the last) at each position brings back into the corrupted run, and the results page of one
    cell (press a cell of the grid to pick it). The view names the corrupted prompt it runs and whether
    it is a legal round of the game."""
    cfg = lm.model.cfg
    # Rows: every head, every MLP, then the residual stream before each block ("resid L"; the last,
    # "resid n_layers", is the stream after the last block).
    components = [head_name(h) for h in all_heads(lm.model)] + [f"MLP{layer}" for layer in range(cfg.n_layers)
                                                                 if cfg.has_mlp]
    n_writes = len(components)
    components += [f"resid {layer}" for layer in range(cfg.n_layers + 1)]
    rows = [[prompt_control([clean, *prompts], "clean", "clean prompt")],
            [Control("corrupted", "corrupted prompt", "as many tokens as the clean one; best a legal round of the "
                     "game after which the rules want another answer", "text", corrupted, width=34),
             Control("swap", "swap players", "run instead the corrupted prompt with the last call's caller swapped, "
                     "everywhere, with a player of the other kind: usually NOT a legal round (a number opens, or "
                     "earns capo), kept for comparison", "toggle", swap)],
            [token_control("target", "target", "the token whose logit leads; blank: the clean run's answer", target,
                           placeholder="clean answer"),
             token_control("against", "against", "the rival; blank: the corrupted run's answer", against,
                           placeholder="corrupted answer")],
            [Control("cell", "show", "which component's patch to show the results page of (or press a cell of "
                     "the grid)", "choice", components[0], options=tuple(components)),
             Control("position", "at position", "which position's patch, counted from 0; blank: the last", "text",
                     "", placeholder="last", width=5)]]

    def compute(v):
        corrupted_text = swap_players(v["corrupted"]) if v["swap"] else v["corrupted"]
        r = patch(lm, v["clean"], corrupted_text, v["target"].strip() or None, v["against"].strip() or None)
        T = len(r.clean)
        position = parse_position(v["position"], T)
        grid = [list(map(float, r.heads[layer, h])) for layer, h in all_heads(lm.model)]
        grid += [list(map(float, r.mlps[layer])) for layer in range(r.mlps.shape[0])]
        grid += [list(map(float, row)) for row in r.resid]
        i = components.index(v["cell"])
        name, head = ((f"blocks.{i // cfg.n_heads}.attn.head_out", i % cfg.n_heads) if i < len(all_heads(lm.model))
                      else (f"blocks.{v['cell'][3:]}.mlp_out", None) if i < n_writes
                      else (r.stages[i - n_writes], None))
        model = double_model(lm.model)
        _, source = model.run_with_cache(lm.encode(r.clean))
        probs = softmax(patch_one(model, lm.encode(r.corrupted), source, name, position, head)[-1])
        order = torch.argsort(probs, descending=True, stable=True)[:8].tolist()
        return {"clean": r.clean, "corrupted": r.corrupted, "target": r.target, "against": r.against,
                "clean_diff": r.clean_diff, "corrupted_diff": r.corrupted_diff, "rows": components, "grid": grid,
                "cell": v["cell"], "position": position, "recovered": grid[i][position],
                "page": [[lm.vocab.tokens[k], float(probs[k])] for k in order], "legal": is_legal(lm, r.corrupted)}

    return Explorer("patching", rows, compute, lm.name)


# ----------------------------------------------------------------------------- the real model's attention
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
    out = []
    for s in (*CHAPTER_SENTENCES, *(it.sentence for it in ITEMS)):
        if s not in out:
            out.append(s)
    return tuple(out)


def is_special(token: str) -> bool:
    """[CLS], [SEP], [PAD] or punctuation: the keys the picture's strongest word leaves out."""
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


def random_query(rng: random.Random, name: str, values: dict, tokens) -> str:
    """A query as a reader types it (for the tests): a position, a word of the sentence, blank, or a mistake."""
    words = re.findall(r"[a-z]+", values.get("sentence", "").lower()) or ["it"]
    return (rng.choice(["zebra", "99", "-1", "1.5", "[cls"]) if rng.random() < 0.15 else
            rng.choice(["", str(rng.randrange(len(words) + 2)), rng.choice(words).upper(), rng.choice(words)]))


def _examples():
    return [real_attention_explorer()]


# The site's shared files it reads (`site_files`) are written below, with the site's build.
@registered("real_attention", _examples, site_files=lambda folder: export_patterns(folder), random_text=random_query,
            where="not on this map: a real pretrained model's heads (MiniLM, six blocks of twelve), read the same "
                  "way as the map's patterns.")
def real_attention_explorer(lm=None, sentence: str = CHAPTER_SENTENCES[0], layer: int = 0, head: int = 0,
                            query: str = "") -> Explorer:
    """MiniLM's attention on a sentence: any layer, any head, any token as the query. In a kernel any
    sentence; on the website the sentences whose patterns the site's build computed."""
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
            f"when the site was built (each weight stored to within {0.5 / SCALE:.4f}); in a kernel (this page's "
            "notebook, from the download icon at the top) it runs the model on any sentence you type.")
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
