"""The hand-wired model's six designed axes read back by probes on one training run, beside what a word's
class already tells (the chapter's sections "What decides which axes come back" and "What another training
run changes"), measured on every run of the panel by the chapter's claims about the recipe.

The designed table confounds two axes with the three classes: every human and animal is alive and every
thing but two is lifeless, so a probe that reads a word's class reads its animacy too (class alone, each
class's mean, predicts animacy with R² above 0.9). An axis "comes back" as an axis of its own only if a
straight line reads what the class does *not* tell: each class's mean is taken out of the axis's values
and out of every coordinate of the embedding (the class partialled out of both sides, so that the line
cannot spend itself on the classes' own offsets), and the probe is scored on what is left, beside the same
probe on those leftovers shuffled among the words of each class (`SHUFFLES` draws): a null built the same
way, which keeps the class structure and breaks the word-by-word facts. The leftovers' probe and its null are the same ridge probe scored by leave-one-out
in closed form, each choosing its strength on its own targets (`probes.loo_r2`). Nothing here depends on a
cut such as R² 0.8: an axis is compared with its own null.

A run that has not learned its corpus (its loss further above the corpus's entropy than the recipe's
floor) is no evidence either way: the claims say so (`Absent`) rather than count it.
"""
from __future__ import annotations

import functools

import numpy as np

import lib
from lib.analysis.corpus_fit import fit_summary
from lib.analysis.maps import best_probe
from lib.analysis.maps.probes import loo_r2
from lib.analysis.nulls import MIN_SHUFFLES
from lib.claims.registry import Absent
from lib.content.corpora import hand_wired
from lib.shipped.behaviour import HAND_WIRED_MAX_GAP, PROBE_R2_THRESHOLD, embedding_vectors

SHUFFLES = MIN_SHUFFLES
COMPARED = tuple(a for a in hand_wired.AXES if a in hand_wired.COMPARATIVES)
STATED = tuple(a for a in hand_wired.AXES if a not in hand_wired.COMPARATIVES)


def class_means_taken_out(values: np.ndarray, classes: list[str]) -> np.ndarray:
    """`values` (one per word, or a row of coordinates per word) minus the mean of each word's class."""
    out = np.asarray(values, float).copy()
    for c in set(classes):
        at = np.array([k == c for k in classes])
        out[at] -= out[at].mean(axis=0)
    return out


def class_r2(values: np.ndarray, classes: list[str]) -> float:
    """How much of an axis a word's class alone tells: 1 - (spread left within the classes) / (spread)."""
    values = np.asarray(values, float)
    total = float(((values - values.mean()) ** 2).sum())
    left = float((class_means_taken_out(values, classes) ** 2).sum())
    return 1 - left / total if total > 0 else 0.0


def _within_shuffles(values: np.ndarray, classes: list[str], rng: np.random.Generator) -> np.ndarray:
    out = values.copy()
    # in a fixed order: a set of strings iterates in an order that changes from process to process (hash
    # randomisation), and the draws would go to other classes in each
    for c in sorted(set(classes)):
        at = np.flatnonzero([k == c for k in classes])
        out[at] = values[rng.permutation(at)]
    return out


def axes(lm, seed: int = 0) -> dict:
    """Each designed axis on the run `lm`: the probe's held-out R² over the vocabulary, what class alone
    tells of it, the probe's R² on what the class leaves, and that R²'s null (the leftovers shuffled within
    each class, `SHUFFLES` draws with `seed`): its 95th percentile and its maximum."""
    gap = float(fit_summary(lm)["gap"])
    if gap > HAND_WIRED_MAX_GAP:
        raise Absent(f"the run stopped {gap:.3f} nats above its corpus's floor, further than the recipe's "
                     f"{HAND_WIRED_MAX_GAP}: it has not learned its corpus, and is no evidence either way")
    words = list(hand_wired.WORDS)
    classes = [hand_wired.word_class(w) for w in words]
    vecs = embedding_vectors(lm)
    x = np.array([vecs[w] for w in words])
    x_left = class_means_taken_out(x, classes)
    designed = hand_wired.designed_matrix(words)
    rng = np.random.default_rng(seed)
    out = {"gap": gap}
    for k, axis in enumerate(hand_wired.AXES):
        y = designed[:, k]
        left = class_means_taken_out(y, classes)
        null = np.array([loo_r2(x_left, _within_shuffles(left, classes, rng)) for _ in range(SHUFFLES)])
        out[axis] = {"r2": float(best_probe(x, y).r2), "class_r2": class_r2(y, classes),
                     "within_r2": loo_r2(x_left, left), "null_95": float(np.percentile(null, 95)),
                     "null_hi": float(null.max())}
    # A probe of the class "thing" (1 for a thing, 0 otherwise): what reading the class alone gives.
    out["thing_r2"] = float(best_probe(x, np.array([c == "thing" for c in classes], float), levels=(0.0, 1.0)).r2)
    return out


@functools.lru_cache(maxsize=None)
def run_axes(seed: int = 0) -> dict:
    """`axes` of the run in use (the pages' run, or the run `use_run` names), measured once per process."""
    return axes(lib.load("hand-wired"), seed)


def read_back(numbers: dict) -> list[str]:
    """The axes whose probe scores above the chapter's first cut (`PROBE_R2_THRESHOLD`) over the vocabulary."""
    return [a for a in hand_wired.AXES if numbers[a]["r2"] > PROBE_R2_THRESHOLD]
