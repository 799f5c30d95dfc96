"""Self-checks for the chapter "What an embedding is"."""
from __future__ import annotations

from lib.analysis.maps import cosine_matrix, nearest
from lib.exercises import Feedback, check_choice, check_number


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
