"""Self-checks for the chapter "Real language"."""
from __future__ import annotations

from functools import partial
import functools

import numpy as np

from lib.analysis import maps
from lib.analysis.maps import pca
from lib.content import real_words
from lib.exercises import Feedback, check_choice, check_number, same_option
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck
from lib.errors import require
from lib.messages import say


@functools.cache
def _shares() -> tuple[float, float, float]:
    """(top-4 share among the content words, top-4 share over all 84 words, top-2 share among the
    content words): the answer and two numbers a learner may give instead."""
    rows = real_words.load()
    x = rows.vectors.astype(float)
    content = np.array([g != "function words" for g in rows.groups])
    p_content = pca(x[content])
    return p_content.cumulative(4), pca(x).cumulative(4), p_content.cumulative(2)


def _top4_values() -> Values:
    expected, all_words, top2 = _shares()
    return Values(expected, hints={"all": all_words, "top2": top2, "percent": expected * 100})


CONTENT_TOP4 = site_check(__name__, "content_top4_share", rule="number", compute="pcaShare", values=_top4_values,
                          what="The share", tol=5e-4, args={"points": "real-language", "leave_out": "function words"},
                          texts={"all": "that is over all 84 words; leave the function words out first.",
                                 "top2": "that is the top two; add the third and fourth components.",
                                 "percent": "that is a percentage; give the share between 0 and 1."})


def content_top4_share(answer) -> Feedback:
    """Investigate: the top-4 PCA share of the rows of the content words (every group but the
    function words); the page gives the top four over all 84 words and the top two of these."""
    return CONTENT_TOP4.judge(answer)


def _father_words() -> tuple[str, str]:
    """(father - man + woman by the offset method, father's nearest row with man and woman set
    aside: the baseline), inputs excluded, on the 84 rows."""
    rows = real_words.load()
    x = rows.vectors.astype(float)
    vecs = {w: x[i] for i, w in enumerate(rows.words)}
    baseline = next(w for w, _ in maps.nearest(x, rows.words, "father", 3) if w not in ("man", "woman"))
    return maps.analogy(vecs, "father", "man", "woman").best, baseline


def _agrees_values() -> Values:
    offset, baseline = _father_words()
    same = offset == baseline
    return Values("same" if same else "different", options=("same", "different"),
                  fields={"outcome": "the same word" if same else "different words"})


BASELINE_AGREES = site_check(__name__, "baseline_agrees", rule="choice", compute="analogyAgrees",
                             values=_agrees_values, args={"points": "real-language", "inputs": ("father", "man", "woman")},
                             texts={"right": "the two methods give {outcome} here.",
                                    "wrong": "not so. Look at the gender rows of the table: how often was the nearest "
                                             "row of the first word already the expected answer?"})


def baseline_agrees(answer) -> Feedback:
    """Predict: whether the baseline (father's nearest row, man and woman set aside) gives the same
    word as father - man + woman: "same" or "different"."""
    return BASELINE_AGREES.judge(answer)


# ------------------------------------------------------------------ investigate: an analogy of no kind in the table
# Not a relation the table tests, and not the predict's father - man + woman: the offset from man to
# woman added to a word with no female form among the rows.
TEACHER = ("teacher", "man", "woman")


def _teacher_values() -> Values:
    rows = real_words.load()
    x = rows.vectors.astype(float)
    vecs = {w: x[i] for i, w in enumerate(rows.words)}
    a, b, c = TEACHER
    baseline = next(w for w, _ in maps.nearest(x, rows.words, a, 4) if w not in (b, c))
    return Values(maps.analogy(vecs, a, b, c).best, options=tuple(rows.words),
                  hints={"input_a": a, "input_b": b, "input_c": c, "baseline": baseline})


_INPUT = "{answer} is one of the inputs; leave teacher, man and woman out of the ranking."
TEACHER_ANALOGY = site_check(__name__, "teacher_analogy", rule="choice", compute="offsetAnalogy",
                             values=_teacher_values, args={"points": "real-language", "inputs": TEACHER}, texts={
    "right": "teacher - man + woman lands on {answer}.",
    "wrong": "{answer} is not the closest to teacher - man + woman: rank every other row by its cosine with the target.",
    "input_a": _INPUT, "input_b": _INPUT, "input_c": _INPUT,
    "baseline": "{answer} is teacher's nearest row once man and woman are set aside, the baseline; the offset "
                "moves the target away from it."})


def teacher_analogy(answer) -> Feedback:
    """Investigate: teacher - man + woman on the 84 rows, inputs excluded (no analogy of the page's)."""
    return TEACHER_ANALOGY.judge(answer)


# ------------------------------------------------------------------ write: an analogy, inputs excluded
def _best(vectors, target, pool, score) -> str:
    """The word of `pool` whose vector scores highest against `target`; ties go to the earlier word."""
    best, best_score = None, -np.inf
    for w in pool:
        s = score(np.asarray(target, float), np.asarray(vectors[w], float))
        if s > best_score:
            best, best_score = w, s
    return best


def _cos(t, v):
    return float(t @ v / (np.linalg.norm(t) * np.linalg.norm(v)))


def _analogy_by_hand(vectors, a, b, c, *, exclude=True, target="a-b+c", score=_cos, unit=False):
    """The analogy with switches, each switch one typical mistake (the defaults are right)."""
    vecs = {w: np.asarray(v, float) / (np.linalg.norm(v) if unit else 1.0) for w, v in vectors.items()}
    t = {"a-b+c": vecs[a] - vecs[b] + vecs[c], "a+b-c": vecs[a] + vecs[b] - vecs[c],
         "b-a+c": vecs[b] - vecs[a] + vecs[c]}[target]
    pool = [w for w in vecs if not (exclude and w in (a, b, c))]
    return _best(vecs, t, pool, score)



def _analogy_cases() -> list[Case]:
    rows = real_words.load()
    words = {w: rows.vectors[i].astype(float) for i, w in enumerate(rows.words)}
    # Twelve made-up words whose vectors have very different lengths (drawn with the seed that makes
    # ranking by dot product, by distance and by cosine of unit rows each land on a different word).
    rng = np.random.default_rng(32)
    names = ["ant", "bee", "cod", "doe", "eel", "fox", "gnu", "hen", "ibis", "jay", "kid", "lynx"]
    made_up = {w: rng.normal(size=4) * rng.uniform(0.3, 3.0) for w in names}
    return [Case((words, "king", "man", "woman"), "king - man + woman on the 84 real-language rows"),
            Case((words, "father", "man", "woman"), "father - man + woman on the 84 real-language rows"),
            Case((made_up, "ant", "bee", "cod"), "ant - bee + cod among 12 made-up words of very different lengths"),
            Case((words, "hot", "cold", "old"), "hot - cold + old on the 84 real-language rows")]


def _kept_an_input(case: Case, got: str) -> str:
    _, a, b, c = case.args
    return f"{got} is one of the inputs: leave {a}, {b} and {c} out of the candidates."


analogy = WriteCheck(
    name="analogy",
    cases=_analogy_cases,
    reference=lambda vectors, a, b, c: maps.analogy(vectors, a, b, c).best,
    mistakes=(
        Mistake(partial(_analogy_by_hand, exclude=False), _kept_an_input),
        Mistake(partial(_analogy_by_hand, target="a+b-c"),
                "the offset goes the wrong way: the target is a - b + c (king - man + woman), not a + b - c."),
        Mistake(partial(_analogy_by_hand, target="b-a+c"),
                "the target starts from the wrong word: it is a - b + c (king - man + woman), not b - a + c."),
        Mistake(partial(_analogy_by_hand, score=lambda t, v: float(t @ v)),
                "the candidates were ranked by dot product, so long rows win: rank them by cosine."),
        Mistake(partial(_analogy_by_hand, score=lambda t, v: -float(np.linalg.norm(t - v))),
                "the candidates were ranked by their distance to the target; rank them by cosine (the angle "
                "alone)."),
        Mistake(partial(_analogy_by_hand, unit=True),
                "the rows were made length 1 before the arithmetic; here a - b + c takes the rows as they are, "
                "and only the ranking uses cosines."),
    ),
    invariants=(lambda case, got: _kept_an_input(case, got) if got in case.args[1:] else None,
                lambda case, got: None if got in case.args[0] else f"{got!r} is not one of the words."),
)


# ------------------------------------------------------------------ SmolLM2's table (the section on a next-token model)
# Neither check can be computed in the page (SmolLM2's weights do not ship with the site): the default site
# ships their values, the class site marks them live, as for the t-SNE checks of "Three ways to look".
PARIS_CANDIDATES = {"Paris": "Paris", "London": " London", "France": " France"}   # option -> token


def _paris_values() -> Values:
    # deferred: reads SmolLM2's table (113 MB) only when this check is first asked
    from lib.chapters.part2.real_language import smol_map
    cos = smol_map.cosines(smol_map.row(" Paris"))[0]
    vocab = smol_map.table().vocab
    scores = {option: float(cos[vocab.id(token)]) for option, token in PARIS_CANDIDATES.items()}
    best = max(scores, key=scores.get)
    return Values(best, options=tuple(PARIS_CANDIDATES), fields={"best": best, "cos": f"{scores[best]:.2f}",
                                                                 "vocab": f"{len(vocab):,}"},
                  hints={o: o for o in PARIS_CANDIDATES if o != best and o in ("London", "France")})


PARIS_NEAREST = site_check(__name__, "paris_nearest", rule="choice", compute=None, values=_paris_values, texts={
    "right": "{best} comes first, at a cosine of {cos}: in a table of {vocab} tokens, the same word spelled "
             "another way is usually the nearest row.",
    "wrong": "not so: look again at what the nearest rows of ' king' and ' dog' were.",
    "London": "another capital is near ' Paris', as the neighbours of ' red' were other colours; but something "
              "is nearer still.",
    "France": "its country is near, as the analogies above expect; but something is nearer still."})


def paris_nearest(answer) -> Feedback:
    """Predict: which of 'Paris' (no space), ' London' and ' France' has the highest cosine with ' Paris' in
    SmolLM2's table: "Paris", "London" or "France"."""
    return PARIS_NEAREST.judge(answer)


def _gap_values() -> Values:
    # deferred: as _paris_values
    from lib.chapters.part2.real_language import smol_map
    tokens, coords = smol_map.pair_points()
    n = len(smol_map.GENDER_PAIRS)
    second = [tokens[2 * i + 1].strip() for i in range(n)]
    across = coords[1:2 * n:2, 0] - coords[0:2 * n:2, 0]
    up = coords[1:2 * n:2, 1] - coords[0:2 * n:2, 1]
    expected = second[int(np.argmin(across))]
    hints = {"widest": second[int(np.argmax(across))], "up": second[int(np.argmin(np.abs(up)))],
             "position": second[int(np.argmin(coords[1:2 * n:2, 0]))]}
    return Values(expected, options=tuple(second), hints={k: w for k, w in hints.items() if w != expected},
                  fields={"best": expected})


GENDER_GAP = site_check(__name__, "smallest_gender_gap", rule="choice", compute=None, values=_gap_values, texts={
    "right": "{best}: its pair moves least along ' woman' − ' man'.",
    "wrong": "not the narrowest: for each gender pair, subtract the first word's across coordinate from the "
             "second word's, and take the pair with the smallest difference.",
    "widest": "that pair has the widest gap, not the narrowest.",
    "up": "that is the smallest difference on the up (plural) axis; the gender axis is the across one.",
    "position": "that word lies furthest to the left, but the question is about the gap within each pair: "
                "subtract its partner's coordinate first."})


def smallest_gender_gap(answer) -> Feedback:
    """Investigate: of the held-out gender pairs on the concept plane, the pair (named by its second word)
    whose second word's across coordinate exceeds the first's by the least."""
    return GENDER_GAP.judge(answer)


# ------------------------------------------------------------------ predict on your own word: its nearest token
def _nearest_values(word: str) -> Values:
    """The learner's word, read as SmolLM2 reads it after a space: is its nearest token over the whole vocabulary the
    same word written another way (another case, or without its space: `smol_map.same_word`)?"""
    from lib.chapters.part2.real_language import smol_map  # deferred: reads the model's file when a learner checks

    [entry] = smol_map.rows_view(word, 1)["words"]
    require(entry["one"], say("rows_not_one", word=repr(entry["word"]), pieces=" + ".join(repr(p) for p in entry["pieces"])))
    token, cos = entry["neighbours"][0]
    expected = "yes" if smol_map.same_word(token, entry["word"]) else "no"
    return Values(expected, options=("yes", "no"), fields={"token": repr(token), "cos": f"{cos:.2f}", "expected": expected})


NEAREST_SAME = site_check(__name__, "nearest_is_same_word", rule="choice", compute="smolNearestSame",
                          values=_nearest_values, own="Your word", own_example="Tokyo", texts={
    "right": "{expected}: its nearest token is {token} (cosine {cos}).",
    "wrong": "not for your word: look up its nearest tokens in the explorer above."})


def nearest_is_same_word(word, answer) -> Feedback:
    """Predict, for a word of your own that SmolLM2 writes as one token after a space: is its nearest token the same
    word written another way (another case, or without its space)? ("yes" or "no")"""
    return NEAREST_SAME.judge_text(word, answer)
