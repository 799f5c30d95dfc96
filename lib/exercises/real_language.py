"""Self-checks for the chapter "Real language"."""
from __future__ import annotations

from lib.analysis.maps import analogy, pca
from lib.content import real_words
from lib.exercises import Feedback, check_choice, check_number


def top4_share(answer) -> Feedback:
    """Exercise 1: the top-4 PCA share of the 84 real-language rows."""
    p = pca(real_words.load().vectors.astype(float))
    return check_number(answer, p.cumulative(4), tol=2e-3, what="The share",
                        hints={p.cumulative(2): "that is the top two; add the third and fourth components.",
                               p.cumulative(4) * 100: "that is a percentage; give the share between 0 and 1."})


def father_analogy(answer) -> Feedback:
    """Exercise 2: father - man + woman, inputs excluded."""
    rows = real_words.load()
    vecs = {w: rows.vectors[i].astype(float) for i, w in enumerate(rows.words)}
    best = analogy(vecs, "father", "man", "woman").best
    wrong = (f"{answer} is one of the inputs; leave father, man and woman out of the ranking."
             if answer in ("father", "man", "woman") else f"{answer} is not the closest to father - man + woman.")
    return check_choice(answer, rows.words, best, right=f"father - man + woman lands on {answer}.", wrong=wrong)
