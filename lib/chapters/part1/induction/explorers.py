"""The induction chapter's explorer: one slider over the training run's checkpoints.

The slider picks a checkpoint; the view is that checkpoint's every head's pattern on a repeated
sequence (typed, or drawn from a seed), each head's previous-token and prefix-matching score on it,
its copying score (from the weights: computed by the library, for every checkpoint, when the
explorer is made, and given to the page with the loss curves), and the model's loss on the sequence's
two copies; the loss curves over training (first and second copy apart, from the trainer's held-out
measurements) are drawn with the checkpoint marked. Its page twin is `training` in this unit's page.js
(the checkpoints run in the page: `checkpoints.safetensors`, fetched after the page is ready).
"""
from __future__ import annotations

import functools
import random
import shutil
from pathlib import Path

import numpy as np
import torch

from lib.analysis import induction
from lib.content.corpora import repeats
from lib.errors import CourseError, require
from lib.explorers import smollm2 as live
from lib.explorers.definition import Control, Explorer, registered, text_menu
from lib.chapters.part1.induction import smol
from lib.model.store import CHECKPOINTS, load, load_checkpoints, model_folder
from lib.model.vocab import BOS

MODEL = "induction"
MAX_LETTERS = repeats.MAX_FILLER + 2 * repeats.MAX_PERIOD      # the context holds <BOS> and this many letters
SEED_LIMIT = 10 ** 6


@functools.lru_cache(maxsize=2)
def _checkpoints(name: str):
    return load_checkpoints(load(name))


@functools.lru_cache(maxsize=2)
def _copying(name: str) -> list[list[list[float]]]:
    """Every checkpoint's copying scores [checkpoint][layer][head], rounded as the page gets them."""
    return [np.round(induction.copying_scores(m), 4).tolist() for _, m in _checkpoints(name)]


def mulberry32(seed: int):
    """A small seeded generator the page writes out the same way (page.js `mulberry32`): floats in [0, 1)."""
    state = seed & 0xFFFFFFFF

    def next_float() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & 0xFFFFFFFF
        t = state
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296
    return next_float


def drawn_sequence(seed: int) -> list[str]:
    """A sequence as the model was trained on, drawn from `seed`: 0 to 6 letters of filler, then a segment of
    4 to 12 letters twice, every letter before the repeat distinct."""
    rand = mulberry32(seed)
    period = repeats.MIN_PERIOD + int(rand() * (repeats.MAX_PERIOD - repeats.MIN_PERIOD + 1))
    filler = int(rand() * (repeats.MAX_FILLER + 1))
    letters = list(repeats.LETTERS)
    for i in range(len(letters) - 1, 0, -1):         # Fisher-Yates, the page's too
        j = int(rand() * (i + 1))
        letters[i], letters[j] = letters[j], letters[i]
    segment = letters[filler:filler + period]
    return letters[:filler] + segment * 2


def repeat_split(letters: list[str]) -> tuple[int, int] | None:
    """(filler, period) of a sequence that ends in a segment of two letters or more typed twice (the longest
    such segment), or None."""
    for period in range(len(letters) // 2, 1, -1):
        if letters[-2 * period:-period] == letters[-period:]:
            return len(letters) - 2 * period, period
    return None


def parse_seed(text) -> int:
    t = str(text).strip()
    require(t.isdigit() and int(t) < SEED_LIMIT,
            f"the seed is a whole number from 0 to {SEED_LIMIT - 1}, got {t!r}")
    return int(t)


def parse_letters(text) -> list[str]:
    """Letters typed in a box, separated by spaces; blank: none."""
    letters = str(text).split()
    bad = [x for x in letters if x not in repeats.LETTERS]
    if bad:
        raise CourseError(f"the sequence is lower-case letters a to z separated by spaces; {bad[0]!r} is not one")
    require(len(letters) <= MAX_LETTERS, f"the model reads at most {MAX_LETTERS} letters, got {len(letters)}")
    return letters


def sequence_of(v) -> list[str]:
    typed = parse_letters(v["sequence"])
    return typed if typed else drawn_sequence(parse_seed(v["seed"]))


def previous_token_score(pattern) -> float:
    a = np.asarray(pattern, dtype=float)
    return float(np.mean([a[i, i - 1] for i in range(1, len(a))])) if len(a) > 1 else 0.0


def random_text(rng: random.Random, name: str, values: dict, tokens) -> str | None:
    """What a reader types (for the tests): a repeated sequence, a seed, now and then one the box refuses."""
    if name == "seed":
        return rng.choice([str(rng.randint(0, 999)), str(rng.randint(0, 99)), "x", "-1", "1.5", ""])
    if name == "sequence":
        if rng.random() < 0.15:
            return rng.choice(["A b c", "a b <BOS>", " ".join("abcdefghijklmnopqrstuvwxy"), "a,b,c"])
        if rng.random() < 0.2:
            return ""
        seg = rng.sample(repeats.LETTERS, rng.randint(1, 10))
        return " ".join(seg * rng.randint(1, 2))
    return None


def export_checkpoints(folder: Path) -> list[Path]:
    """The site's copy of the checkpoints the page runs (`models/induction.checkpoints.safetensors`)."""
    out = Path(folder) / "models" / f"{MODEL}.{CHECKPOINTS}"
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(model_folder(MODEL) / CHECKPOINTS, out)
    return [out]


@registered("training", lambda: [training_explorer()], site_files=export_checkpoints, random_text=random_text,
            where="not on this map: a two-layer model without MLPs, trained on repeated letters, over its training.")
def training_explorer(name: str = MODEL, step: int | None = None, sequence: str = "") -> Explorer:
    """One slider over a training run's checkpoints: the loss curves, every head's pattern on a repeated
    sequence (typed, or drawn from a seed) and the heads' three scores at that checkpoint."""
    lm = load(name)
    steps = [s for s, _ in _checkpoints(name)]
    step = steps[-1] if step is None else step
    require(step in steps, f"step must be one of the checkpoints' steps: {', '.join(map(str, steps))}")
    mon = lm.meta["monitored"]
    args = {"steps": steps, "curve": {"steps": mon["steps"], "first": mon["first_copy_loss"],
                                      "second": mon["second_copy_loss"]},
            "copying": _copying(name), "max_letters": MAX_LETTERS, "seed_limit": SEED_LIMIT,
            "floor": lm.meta["train"]["stop_below"]}
    rows = [[Control("step", "training step", "which checkpoint of the training run the model is taken from",
                     "choice", step, options=tuple(steps), shown=tuple(f"step {s}" for s in steps), slider=True)],
            [Control("sequence", "sequence", "letters separated by spaces, the model reads them after <BOS>; blank: a "
                     "repeated segment drawn from the seed", "text", sequence, placeholder="drawn from the seed",
                     width=40),
             Control("seed", "seed", "the seed a blank sequence is drawn from (0 to 6 letters of filler, then a "
                     "period of 4 to 12 letters, twice)",
                     "text", "0", width=6)]]

    def compute(v):
        index = steps.index(v["step"]) if v["step"] in steps else None
        if index is None:
            raise CourseError(f"step must be one of the checkpoints' steps: {', '.join(map(str, steps))}")
        letters = sequence_of(v)
        words = [BOS, *letters]
        ids = lm.vocab.encode(words)
        model = _checkpoints(name)[index][1]
        with torch.no_grad():
            logits, cache = model.run_with_cache(ids)
        pats = [cache[f"blocks.{layer}.attn.pattern"].double() for layer in range(model.cfg.n_layers)]
        logp = torch.log_softmax(logits.double(), -1)
        nll = [float(-logp[i, ids[i + 1]]) for i in range(len(ids) - 1)]
        # the two copies' losses, where the sequence ends in a segment typed twice (each copy's first token left out)
        split = repeat_split(letters)
        f, p = split if split is not None else (0, 0)
        return {"step": v["step"], "index": index, "tokens": words, "curve": args["curve"], "floor": args["floor"],
                "patterns": [[p[h].tolist() for h in range(model.cfg.n_heads)] for p in pats],
                "previous": [[previous_token_score(p[h]) for h in range(model.cfg.n_heads)] for p in pats],
                "prefix": [[induction.prefix_matching_score(p[h], words) for h in range(model.cfg.n_heads)]
                           for p in pats],
                "copying": args["copying"][index],
                "loss": {"first": float(np.mean(nll[f + 1:f + p])) if split else None,
                         "second": float(np.mean(nll[f + p + 1:f + 2 * p])) if split else None}}

    return Explorer("training", rows, compute, name, args=args,
                    note="Each checkpoint is the model after that many training steps; the page runs it on the "
                         "sequence. The copying score is the weights' own, the same on any sequence.")


# ----------------------------------------------------------------------------- the real model (SmolLM2), on any text
SMOL_TEXT = "The quick brown fox jumps over the lazy dog."
SMOL_NOTE = live.opening_note("text", "run")


@registered("smol_induction", lambda: [smol_induction_explorer()],
            where="not on this map: a real pretrained model's induction heads (SmolLM2-135M, 30 layers of 9 heads), "
                  "found on a text read twice.")
def smol_induction_explorer(text: str = SMOL_TEXT, repeat: bool = True, group: str = "induction", kind: str = "zero",
                            layer: int = 4, head: int = 0) -> Explorer:
    """SmolLM2 on a text read twice: every head's previous-token and induction score, the chosen head's pattern, and
    how much of the second copy the model predicts with a group of heads (found by role) switched off."""
    rows = [[text_menu(text, (text,), "text", "text")],
            [Control("repeat", "read it twice", "the model reads the text, then the same tokens again: the second copy "
                     "can be predicted only by copying", "toggle", repeat),
             Control("group", "switch off", "which heads to switch off, found by their role on this text (or, for "
                     "comparison, as many drawn at random)", "choice", group, options=smol.GROUPS,
                     shown=smol.GROUP_SHOWN),
             Control("kind", "by", "zero: the head writes nothing; mean: its mean write over this text's positions",
                     "choice", kind, options=smol.KINDS)],
            [Control("layer", "layer", "the head whose pattern to show (and to switch off alone)", "choice", layer,
                     options=tuple(range(30))),
             Control("head", "head", "which of the layer's 9 query heads", "choice", head, options=tuple(range(9)))]]

    opening = {"text": text, "repeat": repeat, "group": group, "kind": kind, "layer": layer, "head": head}

    def compute(v):
        def view():
            from lib.model import smollm2  # deferred: loading the model reads a 98 MB file, only when a text needs it

            return smol.run(smollm2.load(), v["text"], v["repeat"], v["group"], v["kind"], v["layer"], v["head"])
        return live.opening_view("smol_induction", opening, view) if v == opening else view()

    args = {**live.live_args(("text",), opening=True, max_tokens=smol.MAX_TEXT), "most": smol.MAX_TEXT, "formed": induction.FORMED,
            "formed_previous": induction.FORMED_PREVIOUS}
    return Explorer("smol_induction", rows, compute, None, args, SMOL_NOTE)
