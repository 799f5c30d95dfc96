"""Self-checks for the chapter "What an embedding is"."""
from __future__ import annotations

from functools import partial
import numpy as np

from lib.analysis.maps import cosine_matrix, nearest
from lib.exercises import Feedback, check_number
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck
from lib.model.store import load


# ------------------------------------------------------------------ investigate: a pair the page did not print
def _rows(lm) -> np.ndarray:
    return lm.model.W_E.detach().double().numpy()


PAIR = ("Pietro", "Paolo")


def _cosine_values(lm) -> Values:
    E, t = _rows(lm), lm.vocab.tokens
    i, j = t.index(PAIR[0]), t.index(PAIR[1])
    return Values(float(cosine_matrix(E)[i, j]), hints={"dot": float(E[i] @ E[j]),
                                                         "distance": float(np.linalg.norm(E[i] - E[j]))})


ROW_COSINE = site_check(__name__, "row_cosine", rule="number", compute="rowCosine", values=_cosine_values,
                        what=f"The cosine between {PAIR[0]} and {PAIR[1]}", tol=1e-3, model="calling-game",
                        args={"pair": PAIR}, texts={
    "dot": "that is the dot product; divide it by both rows' lengths.",
    "distance": "that is the distance between the rows; the cosine compares their directions."})


def row_cosine(lm, answer) -> Feedback:
    """The cosine between the embedding rows of Pietro and Paolo (the page prints neither pair's cosine)."""
    return ROW_COSINE.judge(answer, lm)


# ------------------------------------------------------------------ investigate: a neighbour in the other model
NEIGHBOUR_WORD = "Cefa"


def _neighbour_values(lm, zl) -> Values:
    best = nearest(_rows(zl), zl.vocab.tokens, NEIGHBOUR_WORD, k=1)[0][0]
    in_calling_game = nearest(_rows(lm), lm.vocab.tokens, NEIGHBOUR_WORD, k=1)[0][0]
    hints = {"self": NEIGHBOUR_WORD} | ({"other_model": in_calling_game} if in_calling_game != best else {})
    return Values(best, options=tuple(zl.vocab.tokens), hints=hints, fields={"word": NEIGHBOUR_WORD})


ZERO_LAYER_NEIGHBOUR = site_check(
    __name__, "zero_layer_neighbour", rule="choice", compute="nearestRow", values=_neighbour_values,
    model=("calling-game", "zero-layer"), args={"word": NEIGHBOUR_WORD}, texts={
        "right": "in the zero-layer model, {word}'s nearest row is {answer}.",
        "wrong": "{shown} is not the nearest; rank every other row by cosine.",
        "self": "a row is always nearest to itself: leave {word} out of the ranking.",
        "other_model": "{answer} is {word}'s nearest row in the calling-game model; ask the zero-layer model's "
                       "embedding."})


def zero_layer_neighbour(lm, zl, answer) -> Feedback:
    """NEIGHBOUR_WORD's nearest row by cosine in the zero-layer model's embedding (the page prints the
    neighbours of four other words)."""
    return ZERO_LAYER_NEIGHBOUR.judge(answer, lm, zl)


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


# ------------------------------------------------------------------ predict: nearest by dot product
DOT_RANGES = ("none", "a few (1 to 9)", "about half (10 to 18)", "most (19 or more)")
DOT_UPPER = (0, 9, 18)   # the largest count each range but the last holds


def dot_disagreements(lm) -> int:
    """For how many tokens the nearest other row by dot product is not the nearest by cosine."""
    E = _rows(lm)
    cos, dot = cosine_matrix(E), E @ E.T
    np.fill_diagonal(cos, -np.inf)
    np.fill_diagonal(dot, -np.inf)
    return int((cos.argmax(axis=1) != dot.argmax(axis=1)).sum())


def dot_range(n: int) -> str:
    return next((r for r, top in zip(DOT_RANGES, DOT_UPPER) if n <= top), DOT_RANGES[-1])


def _dot_values(lm) -> Values:
    n = dot_disagreements(lm)
    return Values(dot_range(n), options=DOT_RANGES, hints={"none": DOT_RANGES[0]},
                  fields={"n": n, "tokens": len(lm.vocab.tokens)})


DOT_VS_COSINE = site_check(__name__, "dot_vs_cosine", rule="choice", compute="dotDisagreements", values=_dot_values,
                           model="calling-game", args={"ranges": DOT_RANGES, "upper": DOT_UPPER}, texts={
    "right": "{answer}: {n} of the {tokens} tokens get another nearest row by dot product; the others keep theirs.",
    "wrong": "{answer} is not it. The two rankings differ only where the rows' lengths differ enough to beat a "
             "difference in direction: how often is that?",
    "none": "the dot product is the cosine times both lengths: a long row gains on every other row, so it can take a "
            "place the cosine gives to a closer direction."})


def dot_vs_cosine(lm, answer) -> Feedback:
    """Predict: on how many of the rows ranking by dot product changes the nearest neighbour."""
    return DOT_VS_COSINE.judge(answer, lm)
