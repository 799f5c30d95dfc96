"""Self-checks for the chapter "What an embedding is"."""
from __future__ import annotations

from functools import partial
import numpy as np

from lib.analysis.maps import cosine_matrix, nearest
from lib.exercises import Feedback, check_choice, check_number
from lib.exercises.writing import Case, Mistake, WriteCheck


def tarso_cefa_cosine(lm, answer) -> Feedback:
    """Exercise 1: the cosine between Tarso's and Cefa's embedding rows."""
    E = lm.model.W_E.detach().double().numpy()
    t = lm.vocab.tokens
    expected = float(cosine_matrix(E)[t.index("Tarso"), t.index("Cefa")])
    dot = float(E[t.index("Tarso")] @ E[t.index("Cefa")])
    return check_number(answer, expected, tol=1e-3, what="The cosine",
                        hints={dot: "that is the dot product; divide it by both rows' lengths."})


def paolo_neighbour(lm, zl, answer) -> Feedback:
    """Exercise 2: Paolo's nearest neighbour in the zero-layer model's embedding."""
    E = zl.model.W_E.detach().double().numpy()
    best = nearest(E, zl.vocab.tokens, "Paolo", k=1)[0][0]
    return check_choice(answer, zl.vocab.tokens, best, right=f"in the zero-layer model, Paolo's nearest row is {answer}.",
                        wrong=f"{answer} is not the nearest; rank every other row by cosine.")


# ------------------------------------------------------------------ write: nearest neighbours by cosine
def library_neighbours(rows, names, word, k) -> list[str]:
    """The k rows closest to `word`'s row by cosine, best first, the word itself left out."""
    return [w for w, _ in nearest(rows, names, word, k)]


def _ranked(rows, names, word, k, *, score="cos", keep_self=False, farthest=False):
    """Neighbours with switches, each switch one typical mistake (the defaults are right)."""
    x = np.asarray(rows, dtype=float)
    names = list(names)
    q = x[names.index(word)]
    scores = {"cos": cosine_matrix(x)[names.index(word)], "dot": x @ q,
              "dist": -np.linalg.norm(x - q, axis=1)}[score]
    order = np.argsort(scores if farthest else -scores, kind="stable")
    picked = [names[j] for j in order if keep_self or names[j] != word]
    return picked[:k]



def _neighbour_cases() -> list[Case]:
    from lib.model.store import load

    lm = load("calling-game")
    E = lm.model.W_E.detach().double().numpy()
    rng = np.random.default_rng(0)   # a draw where cosine, dot product and distance rank differently
    rows = rng.normal(size=(10, 3)) * rng.uniform(0.2, 4.0, size=(10, 1))   # very different lengths
    names = [f"w{i}" for i in range(10)]
    return [Case((E, lm.vocab.tokens, "Tarso", 3), "Tarso's 3 nearest rows in the shipped model's embedding"),
            Case((rows, names, "w0", 4), "w0's 4 nearest among 10 random rows of very different lengths"),
            Case((rows, names, "w7", 1), "w7's single nearest row"),
            Case((E, lm.vocab.tokens, "Paolo", len(E) - 1), "every other row, ranked, for Paolo")]


cosine_neighbours = WriteCheck(
    name="cosine_neighbours",
    cases=_neighbour_cases,
    reference=library_neighbours,
    mistakes=(
        Mistake(partial(_ranked, keep_self=True),
                lambda case, got: f"the list starts with {case.args[2]} itself: a row is always its own nearest "
                                  f"neighbour, so leave it out."),
        Mistake(partial(_ranked, farthest=True),
                "these are the farthest rows: rank from the largest cosine down."),
        Mistake(partial(_ranked, score="dot"),
                "the rows were ranked by dot product, so long rows win: a cosine divides by both lengths."),
        Mistake(partial(_ranked, score="dist"),
                "the rows were ranked by straight-line distance; the cosine compares directions only."),
    ),
    invariants=(lambda case, got: None if len(got) == case.args[3] else
                f"your list has {len(got)} words; k is {case.args[3]}.",),
)
