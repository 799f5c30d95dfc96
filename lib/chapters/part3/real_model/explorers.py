"""The real-model chapter's explorers: SmolLM2's results page (temperature, top-k, top-p, a seeded roll),
its logit lens, its attention by layer and head, and its open prompts continued five ways (`decoding`).

In a kernel each runs SmolLM2 (`lib.model.smollm2`) on any text (a prompt of the menu is read from the
build's runs, `stored.menu_runs()`: the same numbers). The website cannot run the model, so its build
writes what each view needs for the prompts of the menu (`stored.export`, this chapter's `site_files`),
and the page twins (this unit's page.js) compute the same views from those files: the results page
from the stored summary (the same function as here, `stored.page_view`), the lens and the patterns as
stored. Any other prompt gets a sentence saying the notebook runs it.
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from lib.chapters.part3.real_model import decoding, stored
from lib.chapters.part3.real_model.prompts import MENU
from lib.errors import CourseError
from lib.explorers.boxes import parse_seed, parse_top_k, parse_top_p
from lib.explorers.definition import Control, Explorer, registered, temperature_control
from lib.messages import say
from lib.model.readout import check_temperature

DATA = f"{stored.FOLDER}/{stored.NAME}"
# How far the page's view may lie from the kernel's: both compute from the same summary (to float
# rounding); patterns are stored as bytes (1/510).
PAGE_TOLERANCE = 1e-6

NOTE = (f"On the website this explorer offers the {len(MENU)} prompts of its menu, run through SmolLM2 when the "
        "site was built; in a kernel (this page's notebook, from the download icon at the top) it runs the model on any text you type.")


def prompt_menu(default: str = MENU[0], options: Sequence[str] = MENU) -> Control:
    offered = tuple(options) if default in options else (default, *options)
    return Control("prompt", "prompt", "the text the model reads; in a kernel type any, on the website choose one "
                   "of those run when the site was built", "prompt", default, options=offered, precomputed=True)


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
                       seed: str = "0") -> Explorer:
    """SmolLM2's results page for a prompt: temperature, top-k, top-p and a seeded roll, computed from
    its best 100 logits and a histogram of the rest (`stored`), in a kernel and in the page alike."""
    rows = [[prompt_menu(prompt)], [temperature_control(temperature)],
            [Control("top_k", "top-k", "keep only the k most probable tokens; blank keeps all", "text", top_k,
                     placeholder="all", width=6),
             Control("top_p", "top-p", "keep the fewest best tokens whose probability reaches p; blank keeps all",
                     "text", top_p, placeholder="1 (off)", width=7),
             Control("seed", "seed", "which roll of the die: the same seed always picks the same token", "text",
                     seed, width=8)]]

    def compute(v):
        top_k, top_p, seed = parse_top_k(v["top_k"]), parse_top_p(v["top_p"]), parse_seed(v["seed"])
        t = check_temperature(v["temperature"])
        r = runs_of(v["prompt"])
        return stored.page_view(r.summary, r.tokens, t, top_k, top_p, seed)

    return Explorer("real_page", rows, compute, None, {"data": DATA, "tolerance": PAGE_TOLERANCE}, NOTE)


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
                    {"data": DATA, "tolerance": PAGE_TOLERANCE}, NOTE)


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
                    {"data": DATA, "tolerance": stored.PATTERN_TOLERANCE}, NOTE)


@functools.lru_cache(maxsize=16)
def _live_decoded(text: str, method: str) -> dict:
    """A text continued now by one method (a kernel), as `decoding.run` continues the menu's."""
    from lib.model import smollm2  # deferred: as in _live

    lm = smollm2.load()
    row = decoding.run(lm, [text], [method])[method][0]
    return decoding.view(row, lm.vocab.decode(lm.encode(text)), method)


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
               "continued five ways when the site was built; in a kernel (this page's notebook, from the download icon at the top) it "
               "continues any text you type (about 5 s for greedy, longer for beam search).")


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
    return Explorer("real_decode", rows, lambda v: decoded_view(v["prompt"], v["method"]), None,
                    {"data": f"{stored.FOLDER}/{decoding.FILE}", "tolerance": PAGE_TOLERANCE}, DECODE_NOTE)
