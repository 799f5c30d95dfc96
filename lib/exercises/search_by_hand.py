"""Self-checks for the chapter "The search, by hand"."""
from __future__ import annotations

import numpy as np

from lib.analysis.search import model_search, search
from lib.content.worked_examples import SEARCH_DICTIONARY, SEARCH_QUERY
from lib.exercises import Feedback, NOT_ANSWERED, as_number, check_choice, check_number, unanswered

# Exercise 1 uses a new query against the chapter's dictionary.
EXERCISE_QUERY = (0.2, 1.0, 0.4)


def logit_of_cefa(answer) -> Feedback:
    """Exercise 1: the score of Cefa for EXERCISE_QUERY."""
    expected = float(np.dot(EXERCISE_QUERY, SEARCH_DICTIONARY["Cefa"]))
    # Known slip: dropping the sign of a negative product, or using the chapter's query.
    chapter = float(np.dot(SEARCH_QUERY, SEARCH_DICTIONARY["Cefa"]))
    return check_number(answer, expected, tol=5e-3, what="The score",
                        hints={chapter: "that is Cefa's score for the chapter's query, not for the new one."})


def winner_for_query(answer) -> Feedback:
    """Exercise 1, second part: which word wins the search for EXERCISE_QUERY."""
    best = search(EXERCISE_QUERY, SEARCH_DICTIONARY).ranked()[0][0]
    return check_choice(answer, SEARCH_DICTIONARY, best,
                        right=f"{answer} has the largest dot product with the new query.",
                        wrong=f"{answer} is not the largest score: compute all three dot products and compare.")


def smallest_scale(answer, target: float = 0.95) -> Feedback:
    """Exercise 2: the smallest whole multiple of the chapter's query that gives Tarso >= target."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    value = as_number(answer)
    if value is None or value != int(value) or value < 1:
        return Feedback(False, f"the scale should be a whole number of at least 1; got {answer!r}.")
    k = int(value)

    def p_tarso(scale):
        return dict((w, p) for w, _, p in search(np.multiply(SEARCH_QUERY, scale), SEARCH_DICTIONARY).ranked())["Tarso"]

    if p_tarso(k) < target:
        return Feedback(False, f"at scale {k}, Tarso's probability is still below {target}: lengthen the query more.")
    if k > 1 and p_tarso(k - 1) >= target:
        return Feedback(False, f"scale {k} works, but a smaller whole scale already does.")
    return Feedback(True, f"scale {k} is the smallest whole multiple that lifts Tarso to {target} or more.")


def temperature_for_half(lm, answer, prompt: str = "<BOS> Pietro chiama Paolo", tol: float = 0.02) -> Feedback:
    """Exercise 3: the temperature at which the top candidate's probability falls to one half."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    value = as_number(answer)
    if value is None or value <= 0:
        return Feedback(False, f"a temperature is a positive number; got {answer!r}.")
    top = model_search(lm, prompt, value).probs.max()
    if abs(top - 0.5) <= tol:
        return Feedback(True, f"at temperature {value:.3g} the top candidate holds {top:.3f}.")
    direction = "raise" if top > 0.5 else "lower"
    return Feedback(False, f"at temperature {value:.3g} the top candidate still holds {top:.3f}: {direction} the temperature.")
