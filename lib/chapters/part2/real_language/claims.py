"""The claims of the chapter `chapters/part2/real-language.md`, each with its measurement."""
from __future__ import annotations

import functools

import numpy as np
import torch.nn.functional as F

from lib.chapters.part2.real_language.contextual import separation, word_vectors
from lib.analysis.maps.analogy import methods_right
from lib.analysis.maps.pca import share_vs_noise
from lib.claims.registry import claim
from lib.content import real_words
from lib.content.point_sets import point_set
from lib.chapters.part2.real_language.senses import BANK_SENSES
from lib.model import minilm


@functools.lru_cache(maxsize=1)
def analogy_counts() -> dict[str, int]:
    """How many of the shipped analogies each method gets right, inputs excluded, over the same pool
    (Linzen's baselines: `lib.analysis.maps.analogy.ANALOGY_METHODS`)."""
    vectors = {w: np.asarray(v, float) for w, v in real_words.load().all_vectors().items()}
    quads = [quad for quads in real_words.ANALOGIES.values() for quad in quads]
    return {"n": len(quads), **methods_right(vectors, quads)}


def _analogy_numbers(seed):
    x = analogy_counts()
    baselines = {k: v for k, v in x.items() if k not in ("n", "offset")}
    best = max(baselines, key=baselines.get)
    return {"n": x["n"], "offset": x["offset"], "near_a": x["nearest to a"], "near_b": x["nearest to b"],
            "near_c": x["nearest to c"], "a_plus_c": x["a + c"], "best_baseline": baselines[best],
            "best_name": best, "margin": x["offset"] - baselines[best]}


claim("real-language.analogy-baselines", "real-language",
      "Of the {n:.0f} analogies the offset method a − b + c gets {offset:.0f}; leaving part of the arithmetic "
      "out gets {near_a:.0f} (the nearest word to a), {near_c:.0f} (nearest to c), {near_b:.0f} (nearest to b) "
      "and {a_plus_c:.0f} (a + c, nothing subtracted)",
      holds=lambda x: x["n"] == x["n"], seeded=False,
      note="offset method against Linzen's baselines over the shipped analogies, inputs excluded")(_analogy_numbers)

claim("real-language.analogy-no-win", "real-language",
      "The offset method does not beat every baseline: adding a and c without subtracting b does as well "
      "({a_plus_c:.0f} of {n:.0f} against the offset's {offset:.0f})",
      holds=lambda x: x["offset"] <= x["best_baseline"], seeded=False,
      note="the offset method gets no more analogies than its best baseline")(_analogy_numbers)


claim("real-language.pca-share-vs-noise", "real-language",
      "The top two components of the {n:.0f} real-language rows hold {share:.1f}% of their variance; "
      "structureless points of the same shape ({n:.0f} in {dim:.0f} dimensions) give {noise_mean:.1f}% on "
      "average and at most {noise_hi:.1f}% in {draws:.0f} draws",
      holds=lambda x: x["share"] > x["noise_hi"],
      note="the real rows' top-2 PCA share exceeds every one of 200 structureless draws of the same shape")(
    lambda seed: share_vs_noise(point_set("real-language").vectors, seed))


@functools.lru_cache(maxsize=None)
def _group_numbers(seed, shuffles: int = 200):
    rows = real_words.load()
    X = rows.vectors.astype(float)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    C = U @ U.T
    off = ~np.eye(len(X), dtype=bool)
    groups = np.array(rows.groups)

    def gap(g):
        same = (g[:, None] == g[None, :]) & off
        return float(C[same].mean() - C[off & ~same].mean()), float(C[same].mean()), float(C[off & ~same].mean())

    real, same, other = gap(groups)
    rng = np.random.default_rng(seed)
    shuffled = [gap(rng.permutation(groups))[0] for _ in range(shuffles)]
    return {"same": same, "other": other, "gap": real, "shuffled_hi": float(max(shuffled)),
            "shuffles": shuffles, "n": len(X)}


claim("real-language.groups-cohere", "real-language",
      "Words of the same group have an average cosine of {same:.2f}, words of different groups {other:.2f}: a "
      "gap of {gap:.2f}, where the same words with their group labels shuffled give at most {shuffled_hi:.2f} "
      "in {shuffles:.0f} shuffles",
      holds=lambda x: x["gap"] > x["shuffled_hi"],
      note="same-group minus other-group mean cosine exceeds every one of 200 label shuffles")(_group_numbers)


SENSE_SHUFFLES = 200


@claim("real-language.bank-senses", "real-language",
       "Over {n:.0f} sentences written for two senses of bank, the same sense is closer than the other by "
       "{gap_input:.3f} in mean cosine at the input and by {gap_last:.3f} after the last layer (the same sentences "
       "with their senses shuffled: at most {shuffled_hi:.3f} at that layer in {shuffles:.0f} shuffles); the "
       "nearest mean of the other sentences of each sense names the sense of {correct_input:.0f} of the {n:.0f} "
       "at the input and of all {n:.0f} from layer {first_all:.0f} on",
       holds=lambda x: x["gap_last"] > x["shuffled_hi"] and x["gap_last"] > 5 * x["gap_input"]
       and x["correct_last"] == x["n"],
       note="MiniLM's contextual vectors of bank: the sense gap after the last layer exceeds every one of 200 "
            "sense shuffles and five times the input's; nearest-centroid sense right on every sentence at the end")
def _(seed):
    sep, labels, cos = _bank_vectors()
    off = ~np.eye(len(labels), dtype=bool)
    rng = np.random.default_rng(seed)

    def gap(lab):
        same = lab[:, None] == lab[None, :]
        return float(cos[same & off].mean() - cos[~same].mean())

    shuffled = [gap(rng.permutation(labels)) for _ in range(SENSE_SHUFFLES)]
    first_all = next((i for i, c in enumerate(sep.correct) if i and c == sep.n), -1)
    return {"n": sep.n, "gap_input": sep.within[0] - sep.across[0], "gap_last": sep.within[-1] - sep.across[-1],
            "shuffled_hi": float(max(shuffled)), "shuffles": SENSE_SHUFFLES, "correct_input": sep.correct[0],
            "correct_last": sep.correct[-1], "first_all": first_all}


@functools.lru_cache(maxsize=1)
def _bank_vectors():
    """MiniLM's vectors of bank in the sense sentences, run once: the separation by stage, the senses as
    labels, and the cosines between the last layer's vectors."""
    lm = minilm.load()
    sep = separation(lm, "bank", BANK_SENSES)
    sentences = [s for name in BANK_SENSES for s in BANK_SENSES[name]]
    labels = np.array([i for i, name in enumerate(BANK_SENSES) for _ in BANK_SENSES[name]])
    last = F.normalize(word_vectors(lm, "bank", sentences), dim=-1).numpy()[-1]
    return sep, labels, last @ last.T
