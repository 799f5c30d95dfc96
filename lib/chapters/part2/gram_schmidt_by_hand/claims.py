"""The claims of the chapter `chapters/part2/gram-schmidt-by-hand.md`, each with its measurement."""
from __future__ import annotations

import numpy as np

import lib
from lib.analysis.maps.analogy import methods_right
from lib.claims.registry import THIS_RUN, claim
from lib.claims.words import Max, Q
from lib.content.corpora import hand_wired as hw
from lib.shipped.behaviour import axes_read_back, embedding_vectors


@claim("gram-schmidt-by-hand.hand-wired-analogies", "gram-schmidt-by-hand",
       "The hand-wired model, trained on sentences made from a table in which {n:.0f} such analogies hold "
       "exactly, lands {offset:.0f} of them on their word with the offset method (inputs excluded); but leaving "
       "part of the arithmetic out lands nearly as many or as many: {near_a:.0f} (the nearest word to a), "
       "{near_c:.0f} (nearest to c) and {a_plus_c:.0f} (a + c, nothing subtracted), and even the offset turned "
       "round (a + b − c, ADD-OPPOSITE) lands {opposite:.0f}. And a probe reads gender across all {n_words:.0f} words "
       "with held-out R² of only {gender_all:.2f}, against {gender_named:.2f} among the {n_named:.0f} words the "
       "corpus calls male or female",
       words={"lands nearly as many or as many": Max("near_a", "near_c", "a_plus_c") >= Q("offset") - 1,
              "a probe reads gender across all {n_words:.0f} words with held-out R² of only {gender_all:.2f}, against "
              "{gender_named:.2f}": (Q("gender_all") < 0.5, Q("gender_named") > 0.5)}, seeded=False,
       setup=("such analogies hold exactly",),
       note="hand-wired analogies: a baseline of Linzen's comes within one of the offset method, and gender is a "
            "direction only among the named words",
       scope=THIS_RUN, models=('hand-wired',))
def _(seed):
    vecs = embedding_vectors(lib.load("hand-wired"))
    vectors = {w: np.asarray(vecs[w], float) for w in hw.WORDS}
    right = methods_right(vectors, hw.ANALOGIES)
    axes = axes_read_back(0)
    return {"n": len(hw.ANALOGIES), "offset": right["offset"], "near_a": right["nearest to a"],
            "near_b": right["nearest to b"], "near_c": right["nearest to c"], "a_plus_c": right["a + c"], "opposite": right["add-opposite"],
            "gender_all": axes["gender_all"], "gender_named": axes["gender_named"], "n_named": axes["n_named"],
            "n_words": axes["n_words"]}
