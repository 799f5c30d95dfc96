"""The real-language chapter's explorer: SmolLM2's embedding rows on the reader's own words.

Each word is read as SmolLM2 reads a word inside a sentence, after a space (' dog'); a word its vocabulary cuts
into several tokens is shown with its pieces and has no row of its own. For each word that is one token: its
nearest tokens over the whole vocabulary of 49,152 by cosine, and the cosines between the words
(`smol_map.rows_view`). In a kernel the library reads the embedding table; on the website the page opens with
the words below, computed when the site was built, and a reader who loads the real model
(lib/explorers/smollm2.py) types any words: the page reads the same rows from the model it runs
(lib/explorers/js/smollm2/ops.js `rows`).
"""
from __future__ import annotations

from lib.explorers import smollm2 as live
from lib.explorers.definition import Explorer, registered, text_menu

WORDS = "king, queen, man, woman, Paris, London, banana"
NOTE = live.opening_note("words", "read from the model")


@registered("smol_rows", lambda: [smol_rows_explorer()],
            where="not on this map: a real pretrained model's embedding table (SmolLM2-135M, 49,152 rows of 576), "
                  "read as the map's rows are.")
def smol_rows_explorer(words: str = WORDS) -> Explorer:
    """SmolLM2's rows for words the reader types: each word's nearest tokens, and the cosines between the words."""
    from lib.chapters.part2.real_language import smol_map  # deferred: reads the model's file on first use

    rows = [[text_menu(words, (words,), "words", "words, separated by commas")]]
    args = {**live.live_args(("words",), ("Your text: words, separated by commas",), opening=True), "most": smol_map.MAX_WORDS, "k": smol_map.K}
    def compute(v):
        view = lambda: smol_map.rows_view(v["words"])   # noqa: E731
        return live.opening_view("smol_rows", {"words": words}, view) if v == {"words": words} else view()

    return Explorer("smol_rows", rows, compute, None, args, NOTE)
