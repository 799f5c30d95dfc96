"""The real-model chapter's explorers: SmolLM2's results page (temperature, top-k, top-p, min-p, a seeded roll),
its logit lens, its attention by layer and head, its continuation of a text five ways (`decoding`), and activation
patching of its residual stream between two texts.

In a kernel each runs SmolLM2 (`lib.model.smollm2`) on any text (a prompt of the menu is read from the
build's runs, `stored.menu_runs()`: the same numbers). On the website each opens on a menu: the build writes
what each view needs for the prompts of the menu (`stored.export`, this chapter's `site_files`), and the page
twins (this unit's page.js) compute the same views from those files. A reader who loads the real model into the
page (`lib.explorers.smollm2`: about 98 MB, kept by the browser) types any text instead: the page runs SmolLM2
itself, in a Web Worker, and the same twins compute the views from its run (`stored.run`'s twin, `runText` in
lib/explorers/js/smollm2/ops.js).
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from lib.chapters.part3.real_model import decoding, stored
from lib.chapters.part3.real_model.prompts import MENU
from lib.errors import CourseError
from lib.explorers import smollm2 as live
from lib.explorers.boxes import parse_min_p, parse_seed, parse_top_k, parse_top_p
from lib.explorers.definition import Control, Explorer, registered, temperature_control, text_menu
from lib.messages import say
from lib.model.readout import check_temperature

DATA = f"{stored.FOLDER}/{stored.NAME}"
# How far the page's view may lie from the kernel's: both compute from the same summary (to float
# rounding); patterns are stored as bytes (1/510).
PAGE_TOLERANCE = 1e-6

NOTE = (f"On the website this explorer offers the {len(MENU)} prompts of its menu, run through SmolLM2 when the "
        "site was built, until you load the real model into the page: then it runs SmolLM2 on any text you type, as a "
        "kernel does.")


def prompt_menu(default: str = MENU[0], options: Sequence[str] = MENU, name: str = "prompt",
                label: str = "prompt") -> Control:
    return text_menu(default, options, name, label)


def page_args(data: str, tolerance: float, texts=("prompt",), labels=("Your text",), opening: bool = False) -> dict:
    """The page twin's fixed settings: the stored files it reads, and the real model it can run instead."""
    return {"data": data, "tolerance": tolerance, **live.live_args(texts, labels, opening)}


@functools.lru_cache(maxsize=8)
def _live(text: str) -> stored.Stored:
    """A text not on the menu, run now (a kernel)."""
    from lib.model import smollm2  # deferred: loading the model reads a 93 MB file, only when a text needs it

    return stored.run(smollm2.load(), text)


def runs_of(text: str) -> stored.Stored:
    """SmolLM2's run on `text`: the build's, for a prompt of the menu; otherwise run now."""
    text = str(text)
    if text in MENU and stored.on_disk():
        return stored.by_text()[text]
    return _live(text)                 # a kernel without the build's runs pays for this prompt only


def _examples_page():
    return [real_page_explorer(), real_page_explorer(prompt="Once upon a time, there was a little", temperature=0.7)]


@registered("real_page", _examples_page, site_files=stored.export,
            where="not on this map: a real pretrained model's last step (SmolLM2-135M, 49,152 tokens), the same "
                  "read-out as the map's.")
def real_page_explorer(prompt: str = MENU[0], temperature: float = 1.0, top_k: str = "", top_p: str = "",
                       seed: str = "0", min_p: str = "") -> Explorer:
    """SmolLM2's results page for a prompt: temperature, top-k, top-p, min-p and a seeded roll, computed from
    its best 100 logits and a histogram of the rest (`stored`), in a kernel and in the page alike."""
    rows = [[prompt_menu(prompt)], [temperature_control(temperature)],
            [Control("top_k", "top-k", "keep only the k most probable tokens; blank keeps all", "text", top_k,
                     placeholder="all", width=6),
             Control("top_p", "top-p", "keep the fewest best tokens whose probability reaches p; blank keeps all",
                     "text", top_p, placeholder="1 (off)", width=7),
             Control("min_p", "min-p", "keep the tokens whose probability is at least this share of the best one's "
                     "(judged at the temperature); blank keeps all", "text", min_p, placeholder="off", width=6),
             Control("seed", "seed", "which roll of the die: the same seed always picks the same token", "text",
                     seed, width=8)]]

    def compute(v):
        top_k, top_p, seed = parse_top_k(v["top_k"]), parse_top_p(v["top_p"]), parse_seed(v["seed"])
        min_p = parse_min_p(v["min_p"])
        t = check_temperature(v["temperature"])
        r = runs_of(v["prompt"])
        return stored.page_view(r.summary, r.tokens, t, top_k, top_p, seed, min_p=min_p)

    return Explorer("real_page", rows, compute, None, page_args(DATA, PAGE_TOLERANCE), NOTE)


def lens_view(r: stored.Stored) -> dict:
    """The lens's view: each stage's best tokens and the final answer's probability there, and the first
    stage from which the answer stays on top to the end (None if it never leads before the end)."""
    answer = r.lens[-1]["top"][0][0]
    on_top = [s["top"][0][0] == answer for s in r.lens]
    first = next(i for i in range(len(on_top)) if all(on_top[i:]))
    return {"tokens": list(r.tokens), "answer": answer, "first": first,
            "stages": [{"name": s["name"], "top": s["top"], "answer": s["answer"]} for s in r.lens]}


@registered("real_lens", lambda: [real_lens_explorer()],
            where="not on this map: the logit lens of a real pretrained model (SmolLM2-135M, 30 blocks), read as "
                  "the map's lens is.")
def real_lens_explorer(prompt: str = MENU[0]) -> Explorer:
    """SmolLM2's logit lens: its own final step applied to the stream after the embedding and after each
    of its 30 blocks, at the last position: the best tokens there, and the final answer's probability."""
    return Explorer("real_lens", [[prompt_menu(prompt)]], lambda v: lens_view(runs_of(v["prompt"])), None,
                    page_args(DATA, PAGE_TOLERANCE), NOTE)


def heads_view(r: stored.Stored, layer: int) -> dict:
    p = np.asarray(r.patterns, dtype=np.float64) / stored.SCALE
    return {"tokens": list(r.tokens), "layer": layer, "patterns": p[layer].tolist()}


@registered("real_heads", lambda: [real_heads_explorer()],
            where="not on this map: a real pretrained model's heads (SmolLM2-135M, 30 layers of 9 query heads "
                  "sharing 3 key/value heads), read as the map's patterns are.")
def real_heads_explorer(prompt: str = "Mary and John went to the shop. John gave a bag to", layer: int = 17) -> Explorer:
    """SmolLM2's attention on a prompt: the 9 heads of one layer, each weight kept to within 1/510."""
    rows = [[prompt_menu(prompt)],
            [Control("layer", "layer", "which layer's 9 heads to show", "choice", layer, options=tuple(range(30)))]]
    return Explorer("real_heads", rows, lambda v: heads_view(runs_of(v["prompt"]), int(v["layer"])), None,
                    page_args(DATA, stored.PATTERN_TOLERANCE), NOTE)


@functools.lru_cache(maxsize=16)
def _live_decoded(text: str, method: str) -> dict:
    """A text continued now by one method (a kernel), as `decoding.run` continues the menu's."""
    from lib.model import smollm2  # deferred: as in _live

    lm = smollm2.load()
    row = decoding.run(lm, [text], [method])[method][0]
    return decoding.view(row, lm.vocab.decode(live.page_ids(lm, text)), method)


def decoded_view(text: str, method: str) -> dict:
    """The build's continuation of an open prompt of the menu by `method`; any other text continued now."""
    text, method = str(text), str(method)
    if method not in decoding.METHODS:
        raise CourseError(say("decoding_method", methods=", ".join(decoding.METHODS), got=method))
    if text in decoding.PROMPTS and decoding.on_disk() and stored.on_disk():
        i = decoding.PROMPTS.index(text)
        return decoding.view(decoding.runs()[method][i], stored.by_text()[text].tokens, method)
    return _live_decoded(text, method)


DECODE_NOTE = (f"On the website this explorer offers the {len(decoding.PROMPTS)} open prompts of the menu, each "
               "continued five ways when the site was built, until you load the real model into the page: then it "
               "continues any text you type, as a kernel does (a few seconds for greedy, longer for beam search).")


@registered("real_decode", lambda: [real_decode_explorer(), real_decode_explorer(method="beam")],
            site_files=decoding.export, where="not on this map: many steps of a real pretrained model's read-out (SmolLM2-135M), each "
                  "choice made one of five ways.")
def real_decode_explorer(prompt: str = decoding.PROMPTS[0], method: str = "greedy") -> Explorer:
    """SmolLM2's continuation of an open prompt by greedy decoding, greedy with a repetition penalty, a
    sample at temperature 1, a hot sample cut by min-p, or beam search: the text, each token's probability,
    and the measures of repetition and surprisal the chapter reports."""
    rows = [[prompt_menu(prompt, decoding.PROMPTS)],
            [Control("method", "method", "how each next token is chosen", "choice", method,
                     options=decoding.METHODS, shown=tuple(decoding.SHOWN[m] for m in decoding.METHODS))]]
    args = dict(page_args(f"{stored.FOLDER}/{decoding.FILE}", PAGE_TOLERANCE),
                settings=decoding.SETTINGS, long=decoding.LONG, new=decoding.NEW, beams=decoding.BEAMS,
                shown=decoding.SHOWN, stop=decoding.STOP)
    return Explorer("real_decode", rows, lambda v: decoded_view(v["prompt"], v["method"]), None, args, DECODE_NOTE)


# ----------------------------------------------------------------------------- activation patching, two texts
# A fact recalled from a subject: SmolLM2 says " Italy" after the first (p = 0.82) and " Germany" after the second
# (0.89); the two texts differ in one token, the city.
PATCH_CLEAN = "Paris is in France. Rome is in"
PATCH_CORRUPTED = "Paris is in France. Berlin is in"
DIRECTIONS = ("denoise", "noise")
DIRECTION_SHOWN = ("denoise: the clean stream into the corrupted run", "noise: the corrupted stream into the clean run")
PATCH_NOTE = ("On the website this explorer shows the pair above, patched when the site was built, until you load the "
              "real model into the page: then it patches any two texts of one length in tokens, as a kernel does. The "
              "page fills the grid from the last block back; each cell is one pass of SmolLM2 from that block on.")


@functools.lru_cache(maxsize=8)
def patch_view(clean: str, corrupted: str, direction: str = "denoise") -> dict:
    """The patching explorer's view: the residual stream before each block (and after the last) patched at each
    position (`lib.analysis.patching.patch_stream`), the fraction of logit(target) - logit(rival) each brings
    back (denoise) or takes away (noise); the target is the clean run's answer and the rival the corrupted
    run's. Cells before the first position where the texts differ are 0 (the streams there are the same)."""
    from lib.analysis.patching import patch_stream  # deferred: imports torch
    from lib.model import smollm2                    # deferred: as in _live

    direction = str(direction)
    if direction not in DIRECTIONS:
        raise CourseError(f"the direction must be one of {', '.join(DIRECTIONS)}; got {direction}")
    lm = smollm2.load()
    a, b = live.page_ids(lm, str(clean), "the clean text"), live.page_ids(lm, str(corrupted), "the corrupted text")
    r = patch_stream(lm, str(clean), str(corrupted), direction=direction)
    first = next((p for p in range(len(a)) if a[p] != b[p]), len(a))
    return {"clean": r.clean, "corrupted": r.corrupted, "target": r.target, "against": r.against,
            "clean_diff": r.clean_diff, "corrupted_diff": r.corrupted_diff, "direction": direction, "first": first,
            "stages": [f"before block {i}" for i in range(len(r.stages) - 1)] + [f"after block {len(r.stages) - 2}"],
            "grid": [[float(x) for x in row] for row in r.resid], "warnings": list(r.warnings)}


def handover(view: dict) -> tuple[int, int]:
    """Where the patching view's difference moves from the position where the texts differ to the last: the last
    block before which the first differing position alone brings back more than half, and the first from which
    the last position does (stage indices: stage i is the stream before block i)."""
    g, p, last = view["grid"], view["first"], len(view["clean"]) - 1
    at_token = max(i for i, row in enumerate(g) if row[p] > 0.5)
    at_last = min(i for i, row in enumerate(g) if row[last] > 0.5)
    return at_token, at_last


@registered("real_patch", lambda: [real_patch_explorer()],
            where="not on this map: activation patching in a real pretrained model (SmolLM2-135M): the residual "
                  "stream of one text run into another's.")
def real_patch_explorer(clean: str = PATCH_CLEAN, corrupted: str = PATCH_CORRUPTED, direction: str = "denoise") -> Explorer:
    """Activation patching of SmolLM2's residual stream between two texts of one length in tokens: which position,
    before which block, carries what makes the two answers differ."""
    rows = [[prompt_menu(clean, (clean,), "clean", "clean text")],
            [prompt_menu(corrupted, (corrupted,), "corrupted", "corrupted text")],
            [Control("direction", "direction", "denoise: does the clean stream bring the clean answer back? noise: "
                     "does the corrupted stream take it away?", "choice", direction, options=DIRECTIONS,
                     shown=DIRECTION_SHOWN)]]
    opening = {"clean": clean, "corrupted": corrupted, "direction": direction}

    def compute(v):
        view = lambda: patch_view(str(v["clean"]), str(v["corrupted"]), str(v["direction"]))   # noqa: E731
        return live.opening_view("real_patch", opening, view) if v == opening else view()

    return Explorer("real_patch", rows, compute, None,
                    page_args("", FRACTION_TOLERANCE, ("clean", "corrupted"), ("Your text", "Your corrupted text"), opening=True), PATCH_NOTE)


FRACTION_TOLERANCE = 1e-3
