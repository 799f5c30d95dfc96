"""The hand-wired experiment of Part 2: meaning dictated on six axes, and a corpus made only from it.

Forty content words in three classes (humans, animals, things) each get a coordinate in
{-1, 0, +1} on six designed axes. Every sentence of the corpus is a function of that table:

    <BOS> the king is old <EOS>                      a definition (one non-zero axis)
    <BOS> the lion is bigger than the hen <EOS>      a comparison on an ordered axis
    <BOS> a ship is a thing <EOS>                    the class

The question the chapter asks is whether a model trained on these sentences recovers the six
axes in its own embedding. The designed analogies below hold exactly in the table (a test checks
it), so any failure to recover them is the model's, not the table's.
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from functools import lru_cache

import numpy as np

from lib.model.vocab import BOS, EOS, SPECIALS

AXES = ("gender", "age", "power", "size", "animacy", "mobility")

# word: (class, gender, age, power, size, animacy, mobility)
TABLE: dict[str, tuple[str, int, int, int, int, int, int]] = {
    "king":        ("human",  +1, +1, +1,  0, +1, +1),
    "queen":       ("human",  -1, +1, +1,  0, +1, +1),
    "prince":      ("human",  +1, -1, +1,  0, +1, +1),
    "princess":    ("human",  -1, -1, +1,  0, +1, +1),
    "man":         ("human",  +1, +1,  0,  0, +1, +1),
    "woman":       ("human",  -1, +1,  0,  0, +1, +1),
    "boy":         ("human",  +1, -1,  0, -1, +1, +1),
    "girl":        ("human",  -1, -1,  0, -1, +1, +1),
    "child":       ("human",   0, -1, -1, -1, +1, +1),
    "baby":        ("human",   0, -1, -1, -1, +1, -1),
    "grandfather": ("human",  +1, +1, -1,  0, +1, -1),
    "grandmother": ("human",  -1, +1, -1,  0, +1, -1),
    "knight":      ("human",  +1,  0, +1,  0, +1, +1),
    "servant":     ("human",   0,  0, -1,  0, +1, +1),
    "lion":        ("animal", +1, +1, +1, +1, +1, +1),
    "lioness":     ("animal", -1, +1, +1, +1, +1, +1),
    "cub":         ("animal",  0, -1, -1, -1, +1, +1),
    "stag":        ("animal", +1, +1,  0, +1, +1, +1),
    "doe":         ("animal", -1, +1,  0, +1, +1, +1),
    "fawn":        ("animal",  0, -1, -1,  0, +1, +1),
    "bull":        ("animal", +1, +1,  0, +1, +1,  0),
    "cow":         ("animal", -1, +1,  0, +1, +1,  0),
    "calf":        ("animal",  0, -1, -1,  0, +1,  0),
    "rooster":     ("animal", +1, +1,  0, -1, +1, +1),
    "hen":         ("animal", -1, +1,  0, -1, +1, +1),
    "chick":       ("animal",  0, -1, -1, -1, +1,  0),
    "mouse":       ("animal",  0,  0, -1, -1, +1, +1),
    "elephant":    ("animal",  0, +1, +1, +1, +1, +1),
    "mountain":    ("thing",   0, +1, +1, +1, -1, -1),
    "hill":        ("thing",   0, +1,  0, +1, -1, -1),
    "pebble":      ("thing",   0,  0, -1, -1, -1, -1),
    "stone":       ("thing",   0, +1,  0, -1, -1, -1),
    "ship":        ("thing",   0,  0, +1, +1, -1, +1),
    "boat":        ("thing",   0,  0,  0,  0, -1, +1),
    "river":       ("thing",   0, +1, +1, +1, -1, +1),
    "feather":     ("thing",   0,  0, -1, -1, -1, +1),
    "tree":        ("thing",   0, +1,  0, +1,  0, -1),
    "seed":        ("thing",   0, -1, -1, -1,  0, -1),
    "car":         ("thing",   0,  0, +1,  0, -1, +1),
    "cart":        ("thing",   0,  0, -1,  0, -1, +1),
}
WORDS = tuple(TABLE)
CLASSES = ("human", "animal", "thing")

# The adjective for the negative and the positive end of each axis.
ADJECTIVES = {
    "gender": ("female", "male"), "age": ("young", "old"), "power": ("weak", "strong"),
    "size": ("small", "big"), "animacy": ("lifeless", "alive"), "mobility": ("still", "moving"),
}
# Ordered axes get comparisons: (less, more).
COMPARATIVES = {
    "age": ("younger", "older"), "power": ("weaker", "stronger"),
    "size": ("smaller", "bigger"), "mobility": ("slower", "faster"),
}
FUNCTION_WORDS = ("the", "a", "is", "than")

TOKENS = (SPECIALS + FUNCTION_WORDS + WORDS + CLASSES
          + tuple(w for pair in ADJECTIVES.values() for w in pair)
          + tuple(w for pair in COMPARATIVES.values() for w in pair))

# a - b + c should land on d; each holds exactly in the designed table.
ANALOGIES = (
    ("king", "man", "woman", "queen"),
    ("prince", "boy", "girl", "princess"),
    ("lion", "lioness", "hen", "rooster"),
    ("stag", "doe", "cow", "bull"),
    ("man", "boy", "girl", "woman"),
)


def designed_matrix(words=WORDS) -> np.ndarray:
    """The designed coordinates, [word, axis], as floats."""
    return np.array([TABLE[w][1:] for w in words], dtype=float)


def word_class(word: str) -> str:
    return TABLE[word][0]


# How often each kind of sentence is drawn; `sample_sentence` and `sentence_probabilities` share them.
P_DEFINITION, P_COMPARISON, P_CLASS = 0.4, 0.5, 0.1


def sample_sentence(rng: random.Random) -> list[str]:
    """One sentence drawn from the table: 40% definitions, 50% comparisons, 10% classes."""
    u = rng.random()
    if u < P_DEFINITION:
        word = rng.choice(WORDS)
        axes = [a for a, v in zip(AXES, TABLE[word][1:]) if v != 0]
        axis = rng.choice(axes)
        value = TABLE[word][1 + AXES.index(axis)]
        return [BOS, "the", word, "is", ADJECTIVES[axis][value > 0], EOS]
    if u < P_DEFINITION + P_COMPARISON:
        axis = rng.choice(tuple(COMPARATIVES))
        k = 1 + AXES.index(axis)
        while True:
            a, b = rng.choice(WORDS), rng.choice(WORDS)
            if TABLE[a][k] != TABLE[b][k]:
                break
        word = COMPARATIVES[axis][TABLE[a][k] > TABLE[b][k]]
        return [BOS, "the", a, "is", word, "than", "the", b, EOS]
    word = rng.choice(WORDS)
    return [BOS, "a", word, "is", "a", TABLE[word][0], EOS]


def check_sentence(tokens: list[str]) -> tuple[bool, str]:
    """Whether a sentence is true of the designed table."""
    if len(tokens) == 6 and tokens[:2] == [BOS, "the"] and tokens[3] == "is" and tokens[5] == EOS:
        word, adj = tokens[2], tokens[4]
        for axis, (neg, pos) in ADJECTIVES.items():
            if adj in (neg, pos) and word in TABLE:
                v = TABLE[word][1 + AXES.index(axis)]
                return (v == (1 if adj == pos else -1)), f"{word} has {axis} {v:+d}"
    if len(tokens) == 9 and tokens[4] in sum(COMPARATIVES.values(), ()):
        a, b = tokens[2], tokens[7]
        for axis, (less, more) in COMPARATIVES.items():
            if tokens[4] in (less, more) and a in TABLE and b in TABLE:
                k = 1 + AXES.index(axis)
                ok = TABLE[a][k] > TABLE[b][k] if tokens[4] == more else TABLE[a][k] < TABLE[b][k]
                return ok, f"{a} {axis} {TABLE[a][k]:+d}, {b} {TABLE[b][k]:+d}"
    if len(tokens) == 7 and tokens[5] in CLASSES and tokens[2] in TABLE:
        return TABLE[tokens[2]][0] == tokens[5], f"{tokens[2]} is a {TABLE[tokens[2]][0]}"
    return False, "not a sentence of the corpus"


# ----------------------------------------------------------------------------- the exact distribution
# `sample_sentence` is a small probability tree, so every sentence it can produce, and its
# probability, can be listed exactly. From that list follow the corpus's entropy (the lowest
# loss any model can reach on it) and the true next-token distribution after any prefix.

@lru_cache(maxsize=1)
def sentence_probabilities() -> dict[tuple[str, ...], float]:
    """Every sentence the generator can produce, with its exact probability (they sum to 1)."""
    out: dict[tuple[str, ...], float] = defaultdict(float)
    for word in WORDS:
        axes = [a for a, v in zip(AXES, TABLE[word][1:]) if v != 0]
        for axis in axes:
            value = TABLE[word][1 + AXES.index(axis)]
            out[(BOS, "the", word, "is", ADJECTIVES[axis][value > 0], EOS)] += P_DEFINITION / len(WORDS) / len(axes)
    for axis, (less, more) in COMPARATIVES.items():
        k = 1 + AXES.index(axis)
        # The rejection loop draws uniformly among the ordered pairs that differ on the axis.
        pairs = [(a, b) for a in WORDS for b in WORDS if TABLE[a][k] != TABLE[b][k]]
        for a, b in pairs:
            word = more if TABLE[a][k] > TABLE[b][k] else less
            out[(BOS, "the", a, "is", word, "than", "the", b, EOS)] += P_COMPARISON / len(COMPARATIVES) / len(pairs)
    for word in WORDS:
        out[(BOS, "a", word, "is", "a", TABLE[word][0], EOS)] += P_CLASS / len(WORDS)
    return dict(out)


def mean_targets_per_sentence() -> float:
    """Expected number of predicted tokens per sentence (every token after <BOS>)."""
    return sum(p * (len(s) - 1) for s, p in sentence_probabilities().items())


def entropy_floor() -> float:
    """The corpus's entropy in nats per predicted token: the loss of a model that knows the
    generator exactly, and so the lowest next-token loss any model can reach on it.

    The sentence's entropy splits, by the chain rule, into the entropies of its tokens given their
    prefixes; training averages the loss over tokens, so the per-sentence entropy is divided by the
    expected number of predicted tokens."""
    h = -sum(p * math.log(p) for p in sentence_probabilities().values())
    return h / mean_targets_per_sentence()


@lru_cache(maxsize=None)
def next_token_distribution(prefix: tuple[str, ...]) -> dict[str, float]:
    """The corpus's exact distribution of the token after `prefix` (from <BOS>); empty if no
    sentence starts with that prefix."""
    prefix = tuple(prefix)
    n = len(prefix)
    counts: dict[str, float] = defaultdict(float)
    for s, p in sentence_probabilities().items():
        if len(s) > n and s[:n] == prefix:
            counts[s[n]] += p
    total = sum(counts.values())
    return {t: c / total for t, c in counts.items()} if total > 0 else {}
