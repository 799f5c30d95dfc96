"""Self-checks for the chapter "The search, by hand"."""
from __future__ import annotations

import numpy as np

from lib.analysis.search import model_dictionary, model_query, model_search, search
from lib.content.worked_examples import SEARCH_DICTIONARY, SEARCH_QUERY
from lib.exercises import Feedback, NOT_ANSWERED, as_number, check_choice, check_number, shown, unanswered
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck, rows_sum_to_one
from lib.content.prompts import UNCERTAIN
from lib.model.readout import MIN_TEMPERATURE
from lib.model.store import load

# The predict exercises use a new query against the chapter's dictionary.
EXERCISE_QUERY = (0.2, 1.0, 0.4)


_SEARCH_ARGS = {"query": EXERCISE_QUERY, "chapter_query": tuple(SEARCH_QUERY),
                "dictionary": {w: tuple(map(float, v)) for w, v in SEARCH_DICTIONARY.items()}}


def _cefa_values() -> Values:
    # Known slip: using the chapter's query.
    return Values(float(np.dot(EXERCISE_QUERY, SEARCH_DICTIONARY["Cefa"])),
                  hints={"chapter": float(np.dot(SEARCH_QUERY, SEARCH_DICTIONARY["Cefa"]))})


LOGIT_OF_CEFA = site_check(__name__, "logit_of_cefa", rule="number", compute="searchScore", values=_cefa_values,
                           what="The score", tol=5e-3, args={**_SEARCH_ARGS, "word": "Cefa"}, texts={
                               "chapter": "that is Cefa's score for the chapter's query, not for the new one."})


def logit_of_cefa(answer) -> Feedback:
    """Predict: the score of Cefa for EXERCISE_QUERY, worked out by hand."""
    return LOGIT_OF_CEFA.judge(answer)


def _winner_values() -> Values:
    best = search(EXERCISE_QUERY, SEARCH_DICTIONARY).ranked()[0][0]
    before = search(SEARCH_QUERY, SEARCH_DICTIONARY).ranked()[0][0]
    return Values(best, options=tuple(SEARCH_DICTIONARY), hints={"before": before} if before != best else {})


WINNER_FOR_QUERY = site_check(__name__, "winner_for_query", rule="choice", compute="searchWinner",
                              values=_winner_values, args=_SEARCH_ARGS, texts={
    "right": "{answer} has the largest dot product with the new query.",
    "wrong": "{answer} is not the largest score: compute all three dot products and compare.",
    "before": "{answer} wins for the chapter's query; the new query points elsewhere: compute the three new scores "
              "and compare."})


def winner_for_query(answer) -> Feedback:
    """Predict: which word wins the search for EXERCISE_QUERY."""
    return WINNER_FOR_QUERY.judge(answer)


SCALE_TARGET, SCALE_WORD = 0.95, "Tarso"


def _p_at_scale(scale) -> float:
    return dict((w, p) for w, _, p in search(np.multiply(SEARCH_QUERY, scale), SEARCH_DICTIONARY).ranked())[SCALE_WORD]


def _smallest_scale() -> int:
    k = 1
    while _p_at_scale(k) < SCALE_TARGET:
        k += 1
    return k


def _scale_examples() -> Values:
    """Answers the tests type (an open check ships no values): the right one, and one per text."""
    k = _smallest_scale()
    return Values(k, hints={"invalid": 0, "high": k + 1} | ({"low": k - 1} if k > 1 else {}))


SMALLEST_SCALE = site_check(__name__, "smallest_scale", rule="open", reads="number", compute="smallestScale",
                            values=_scale_examples, args={**_SEARCH_ARGS, "target": SCALE_TARGET, "word": SCALE_WORD},
                            texts={
    "invalid": "the scale should be a whole number of at least 1; got {shown}.",
    "low": "at scale {k}, {word}'s probability is still below {target}: lengthen the query more.",
    "high": "scale {k} works, but a smaller whole scale already does.",
    "right": "scale {k} is the smallest whole multiple that lifts {word} to {target} or more."})


def smallest_scale(answer) -> Feedback:
    """Investigate: the smallest whole multiple of the chapter's query that gives SCALE_WORD >= SCALE_TARGET."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    answer = SMALLEST_SCALE.read(answer)         # a number as a learner writes it (lib.exercises.reading)
    value = as_number(answer)
    if value is None or value != int(value) or value < 1:
        return SMALLEST_SCALE.say("invalid", shown=shown(answer))
    k, said = int(value), {"word": SCALE_WORD, "target": SCALE_TARGET}
    if _p_at_scale(k) < SCALE_TARGET:
        return SMALLEST_SCALE.say("low", k=k, **said)
    if k > 1 and _p_at_scale(k - 1) >= SCALE_TARGET:
        return SMALLEST_SCALE.say("high", k=k, **said)
    return SMALLEST_SCALE.say("right", True, k=k, **said)


HALF_PROMPT, HALF_TOL = "<BOS> Pietro chiama Paolo", 0.02


def _top_at(lm, temperature) -> float:
    return float(model_search(lm, HALF_PROMPT, temperature).probs.max())


def _half_examples(lm) -> Values:
    """Answers the tests type (an open check ships no values): a temperature found by bisection, and
    one per text."""
    low, high = 1.0, 1.0
    while _top_at(lm, high) > 0.5:
        high *= 2
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if _top_at(lm, mid) > 0.5 else (low, mid)
    return Values(high, hints={"invalid": -1, "wrong": 1.0, "wrong/lower": 100 * high})


TEMPERATURE_FOR_HALF = site_check(
    __name__, "temperature_for_half", rule="open", reads="number", compute="temperatureForHalf", values=_half_examples,
    model="calling-game", args={"prompt": HALF_PROMPT, "tol": HALF_TOL}, texts={
        "invalid": "a temperature is a positive number, at least {minimum}; got {shown}.",
        "right": "at temperature {value:.3g} the top candidate holds {top:.3f}.",
        "wrong": "at temperature {value:.3g} the top candidate still holds {top:.3f}: {direction} the temperature."})


def temperature_for_half(lm, answer) -> Feedback:
    """Investigate: the temperature at which the top candidate's probability after HALF_PROMPT falls to
    one half (within HALF_TOL)."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    answer = TEMPERATURE_FOR_HALF.read(answer)   # a number as a learner writes it (lib.exercises.reading)
    value = as_number(answer)
    if value is None or value < MIN_TEMPERATURE:
        return TEMPERATURE_FOR_HALF.say("invalid", minimum=f"{MIN_TEMPERATURE:g}", shown=shown(answer))
    top = _top_at(lm, value)
    if abs(top - 0.5) <= HALF_TOL:
        return TEMPERATURE_FOR_HALF.say("right", True, value=value, top=top)
    return TEMPERATURE_FOR_HALF.say("wrong", value=value, top=top, direction="raise" if top > 0.5 else "lower")


# ------------------------------------------------------------------ write: the search, by hand
def library_search(query, dictionary) -> np.ndarray:
    """The page of the search: one probability per row of `dictionary` [word, d], in its order."""
    rows = np.asarray(dictionary, dtype=float)
    return search(query, {i: row for i, row in enumerate(rows)}).probs


def _page(scores):
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - s.max())
    return e / e.sum()


def _scores(query, dictionary):
    return np.asarray(dictionary, dtype=float) @ np.asarray(query, dtype=float)


def _cosines(query, dictionary):
    d, q = np.asarray(dictionary, dtype=float), np.asarray(query, dtype=float)
    return d @ q / (np.linalg.norm(d, axis=1) * np.linalg.norm(q))


def _search_cases() -> list[Case]:
    lm = load("calling-game")
    words = list(SEARCH_DICTIONARY)
    rng = np.random.default_rng(4)
    scaled = rng.normal(size=(8, 5)) * rng.uniform(0.2, 3.0, size=(8, 1))   # rows of very different lengths
    return [Case((np.array(EXERCISE_QUERY), np.array([SEARCH_DICTIONARY[w] for w in words])),
                 f"the query {EXERCISE_QUERY} against the chapter's dictionary ({', '.join(words)})"),
            Case((model_query(lm, UNCERTAIN), np.array(list(model_dictionary(lm).values()))),
                 f"the shipped model's query after {UNCERTAIN!r} against its {len(lm.vocab)} words"),
            Case((rng.normal(size=5), scaled), "a random query against 8 rows of very different lengths"),
            Case((np.array([0.5, -1.0]), np.array([[2.0, 1.0]])), "a dictionary of one word"),
            Case((np.array(SEARCH_QUERY) * 2000, np.array([SEARCH_DICTIONARY[w] for w in words])),
                 "the chapter's query made 2000 times longer")]


search_page = WriteCheck(
    name="search_page",
    cases=_search_cases,
    reference=library_search,
    mistakes=(
        Mistake(lambda q, d: _page(_cosines(q, d)),
                "the scores were divided by the lengths (cosines): the search scores with plain dot products, "
                "so a longer query or a longer word row gives a sharper page."),
        Mistake(_scores, "these are the scores (logits); the page holds probabilities: a softmax turns one into "
                         "the other."),
        Mistake(lambda q, d: np.sort(_page(_scores(q, d)))[::-1],
                "the probabilities come back sorted; the page keeps the dictionary's order, one per row."),
        Mistake(lambda q, d: _page(-np.linalg.norm(np.asarray(d, float) - np.asarray(q, float), axis=1)),
                "the words were scored by their distance to the query; the search scores by dot product."),
        Mistake(lambda q, d: np.exp(_scores(q, d)) / np.exp(_scores(q, d)).sum(),
                "with a long query exp overflows to infinity and the page turns into NaN: subtract the largest "
                "score before exp (the softmax does not change)."),
    ),
    invariants=(rows_sum_to_one("probabilities"),),
)
