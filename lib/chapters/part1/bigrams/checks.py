"""Self-checks for the chapter "Bigrams and the zero-layer model"."""
from __future__ import annotations

import random

import numpy as np
import torch

from lib.analysis.bigrams import count_bigrams
from lib.content.corpora import calling_game
from lib.exercises import Feedback, check_choice, check_number
from lib.exercises.site import Values, site_check
from lib.exercises.writing import Case, Mistake, WriteCheck, rows_sum_to_one
from lib.model.readout import prompt_logits, softmax


# Investigate: a token two steps ahead. The chapter's explorer shows one step at a time; the
# learner chains its pages (a product along each way there) and adds the ways.
TWO_STEPS = {"prefix": "<BOS> Pietro chiama Paolo", "target": "<SEP>", "rules": "Tarso"}


def two_step_paths(zl, prefix: str, target: str) -> list[float]:
    """For each token x of the vocabulary, the probability of the way through it: P(x | prefix) times
    P(target | prefix x). Their sum is the model's probability that `target` comes two tokens later."""
    ids = zl.encode(prefix)
    t = zl.vocab.id(target)
    with torch.no_grad():
        first = softmax(zl.model(ids)[-1].double())
        return [float(first[x]) * float(softmax(zl.model(ids + [x])[-1].double())[t])
                for x in range(len(zl.vocab.tokens))]


def _two_steps_values(zl) -> Values:
    paths = two_step_paths(zl, TWO_STEPS["prefix"], TWO_STEPS["target"])
    top = int(np.argmax(paths))
    next_step = float(softmax(prompt_logits(zl, TWO_STEPS["prefix"]))[zl.vocab.id(TWO_STEPS["target"])])
    return Values(float(sum(paths)), fields={"first": zl.vocab.tokens[top]},
                  hints={"next": next_step, "first": paths[top], "rules": paths[zl.vocab.id(TWO_STEPS["rules"])],
                         "certain": 1.0})


TWO_STEPS_AHEAD = site_check(__name__, "two_steps_ahead", rule="number", compute="twoStepsAhead",
                             values=_two_steps_values, what="The probability", tol=0.005, model="zero-layer",
                             args=TWO_STEPS, texts={
    "next": "that is the probability of " + TWO_STEPS["target"] + " right after Paolo; the question asks about the "
            "token after the next one.",
    "first": "that counts only the way through {first}; other tokens can stand in between as well, and the ways "
             "add up.",
    "rules": "that counts only the way through " + TWO_STEPS["rules"] + ", as the rules would after Pietro's call; "
             "the zero-layer model sees only Paolo, not who called him.",
    "certain": "that is what the rules say after Pietro's call (" + TWO_STEPS["rules"] + ", then " + TWO_STEPS["target"]
               + "); the zero-layer model sees only Paolo, not who called him."})


def two_steps_ahead(zl, answer) -> Feedback:
    """The zero-layer model's probability that <SEP> comes two tokens after <BOS> Pietro chiama Paolo."""
    return TWO_STEPS_AHEAD.judge(answer, zl)


# ------------------------------------------------------------------ write: the bigram table
def _bigram_cases() -> list[Case]:
    rng = random.Random(7)
    game = [calling_game.sample_round(rng) for _ in range(40)]
    tokens = list(calling_game.TOKENS)
    return [Case((game, tokens), "40 rounds of the game"),
            Case(([["a", "b", "a", "c"], ["c", "a", "b"]], ["a", "b", "c", "d"]),
                 "the rounds a b a c and c a b, over the tokens a b c d"),
            Case(([["x", "y"], ["y", "x", "x"], ["x"]], ["x", "y"]),
                 "the rounds x y, y x x and x, over the tokens x y"),
            Case(([["a"]], ["a", "b"]), "a single round of one token")]


def _by_columns(rounds, tokens):
    counts, _ = count_bigrams(rounds, tokens)
    totals = counts.sum(0, keepdims=True)
    return np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)


def _joined(rounds, tokens):
    return count_bigrams([[w for r in rounds for w in r]], tokens)[1]


def _nan_rows(rounds, tokens):
    counts, _ = count_bigrams(rounds, tokens)
    with np.errstate(all="ignore"):
        return counts / counts.sum(1, keepdims=True)


def _uniform_rows(rounds, tokens):
    counts, probs = count_bigrams(rounds, tokens)
    probs[counts.sum(1) == 0] = 1 / len(tokens)
    return probs


bigram_table = WriteCheck(
    name="bigram_table",
    cases=_bigram_cases,
    reference=lambda rounds, tokens: count_bigrams(rounds, tokens)[1],
    mistakes=(
        Mistake(lambda rounds, tokens: count_bigrams(rounds, tokens)[0],
                "these are counts: each row shares out probability, so divide it by its total."),
        Mistake(_by_columns,
                "the columns sum to 1, not the rows: row a is the token before, and holds P(next | a)."),
        Mistake(lambda rounds, tokens: count_bigrams(rounds, tokens)[1].T,
                "the table is transposed: rows are the token before, columns the token after."),
        Mistake(_joined,
                "the table counts pairs across the end of one round and the start of the next; a pair is two "
                "neighbours inside one round."),
        Mistake(_nan_rows,
                "a token that never comes before another gets a row of NaN (0 divided by 0): leave its row at zero."),
        Mistake(_uniform_rows,
                "a token that never comes before another gets a row of equal shares; with no counts, its row "
                "stays at zero."),
    ),
    invariants=(lambda case, got: rows_sum_to_one()(case, got[np.asarray(got).sum(1) != 0])
                if np.asarray(got).ndim == 2 else None,),
)


# ------------------------------------------------------------------ predict: a pair the rounds never hold
UNSEEN_RANGES = ("exactly 0", "above 0 but below 0.001", "between 0.001 and 0.1", "above 0.1")
UNSEEN_PROMPT, UNSEEN_TOKEN = "<BOS> Pietro chiama", "chiama"    # chiama is never followed by chiama


def unseen_probability(zl) -> float:
    return float(softmax(prompt_logits(zl, UNSEEN_PROMPT))[zl.vocab.id(UNSEEN_TOKEN)])


def range_of(p: float) -> str:
    """The one of UNSEEN_RANGES that holds probability `p`."""
    if p == 0:
        return UNSEEN_RANGES[0]
    return UNSEEN_RANGES[1] if p < 0.001 else UNSEEN_RANGES[2] if p <= 0.1 else UNSEEN_RANGES[3]


def _unseen_values(zl) -> Values:
    p = unseen_probability(zl)
    return Values(range_of(p), options=UNSEEN_RANGES, hints={"zero": UNSEEN_RANGES[0]}, fields={"p": p})


UNSEEN_PAIR = site_check(__name__, "unseen_pair", rule="choice", compute="unseenRange", values=_unseen_values,
                         model="zero-layer", args={"prompt": UNSEEN_PROMPT, "token": UNSEEN_TOKEN, "ranges": UNSEEN_RANGES},
                         texts={
    "right": "{answer}: the model gives " + UNSEEN_TOKEN + " {p:.1e} after " + UNSEEN_PROMPT + ": pushed far down, "
             "never to zero.",
    "wrong": "{answer} is not where it lands. Training lowers the logit of a pair each time another token follows "
             "instead, and this pair never comes: how far down can that push it?",
    "zero": "the table says exactly 0, but the model's page is a softmax of finite logits: every token keeps some "
            "probability, however small."})


def unseen_pair(zl, answer) -> Feedback:
    """Predict: the range of the zero-layer model's probability for a pair its rounds never hold."""
    return UNSEEN_PAIR.judge(answer, zl)
