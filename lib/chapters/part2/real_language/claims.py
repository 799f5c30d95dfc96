"""The claims of the chapter `chapters/part2/real-language.md`, each with its measurement."""
from __future__ import annotations

import functools

import numpy as np
import torch.nn.functional as F

from lib.chapters.part2.real_language.contextual import separation, word_vectors
from lib.analysis import nulls
from lib.analysis.maps.analogy import methods_right, rank_methods
from lib.analysis.maps.neighbours import knn_accuracy, same_group_share
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
            "near_c": x["nearest to c"], "a_plus_c": x["a + c"], "opposite": x["add-opposite"], "best_baseline": baselines[best],
            "best_name": best, "margin": x["offset"] - baselines[best]}


claim("real-language.analogy-baselines", "real-language",
      "Of the {n:.0f} analogies the offset method a − b + c gets {offset:.0f}; leaving part of the arithmetic "
      "out gets {near_a:.0f} (the nearest word to a), {near_c:.0f} (nearest to c), {near_b:.0f} (nearest to b) "
      "and {a_plus_c:.0f} (a + c, nothing subtracted); turned round (a + b − c, ADD-OPPOSITE) it gets {opposite:.0f}",
      holds=lambda x: x["n"] == x["n"], seeded=False,
      note="offset method against Linzen's baselines over the shipped analogies, inputs excluded")(_analogy_numbers)

claim("real-language.analogy-no-win", "real-language",
      "The offset method does not beat every baseline: adding a and c without subtracting b does as well "
      "({a_plus_c:.0f} of {n:.0f} against the offset's {offset:.0f})",
      holds=lambda x: x["offset"] <= x["best_baseline"], seeded=False,
      note="the offset method gets no more analogies than its best baseline")(_analogy_numbers)


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


# ----------------------------------------------------------------------------- against fair nulls
@functools.lru_cache(maxsize=1)
def vocabulary_ranking():
    """The shipped analogies ranked over every whole word of MiniLM's vocabulary, by every method."""
    words, matrix = real_words.whole_word_table()
    quads = [quad for quads in real_words.ANALOGIES.values() for quad in quads]
    return rank_methods(words, matrix, quads)


def _vocabulary_numbers(seed):
    r = vocabulary_ranking()
    baselines = {m: r.right(m) for m in r.methods if m not in ("offset", "3CosMul")}
    king = r.quads.index(("king", "man", "woman", "queen"))
    return {"n": len(r.quads), "pool": r.pool + 3, "offset": r.right("offset"), "near_a": r.right("nearest to a"),
            "near_b": r.right("nearest to b"), "near_c": r.right("nearest to c"), "a_plus_c": r.right("a + c"),
            "opposite": r.right("add-opposite"), "cosmul": r.right("3CosMul"), "best_baseline": max(baselines.values()),
            "king_nn": r.best["nearest to a"][king], "queen_rank_nn": r.ranks["nearest to a"][king]}


claim("real-language.analogy-vocabulary", "real-language",
      "Ranked among all {pool:,.0f} whole words of MiniLM's vocabulary, the offset method gets {offset:.0f} of the "
      "{n:.0f} analogies, 3CosMul {cosmul:.0f}; the baselines get {a_plus_c:.0f} (a + c), {near_c:.0f} (nearest to "
      "c), {near_a:.0f} (nearest to a), {near_b:.0f} (nearest to b) and {opposite:.0f} (ADD-OPPOSITE, a + b − c: "
      "the offset turned round). King's nearest word there is {king_nn}; queen is number {queen_rank_nn:.0f}",
      holds=lambda x: x["offset"] > x["best_baseline"] and x["opposite"] < x["offset"] / 4, seeded=False,
      note="over the whole-word vocabulary the offset method beats every baseline that leaves part of the "
           "arithmetic out, and ADD-OPPOSITE gets under a quarter of its count")(_vocabulary_numbers)


@functools.lru_cache(maxsize=None)
def _cosine_numbers(seed):
    rows = real_words.load()
    X = rows.vectors.astype(float)
    acc_cos = knn_accuracy(X, rows.groups, 5, cosine=True)
    acc_euc = knn_accuracy(X, rows.groups, 5, cosine=False)
    null = nulls.label_shuffles(lambda g: knn_accuracy(X, g, 5, cosine=True), rows.groups, nulls.MIN_SHUFFLES, seed)
    return {"n": len(X), "cos": 100 * acc_cos, "cos_right": round(acc_cos * len(X)), "euc": 100 * acc_euc,
            "share_euc": 100 * same_group_share(X, rows.groups, 5), "share_cos": 100 * same_group_share(X, rows.groups, 5, cosine=True),
            "null_hi": 100 * float(null.max()), "shuffles": nulls.MIN_SHUFFLES, "groups": len(set(rows.groups))}


claim("real-language.cosine-groups", "real-language",
      "Measured by straight-line distance on the raw rows, {share_euc:.0f}% of a word's five nearest words share its "
      "group, and a vote of the five names the group of {euc:.0f}% of the {n:.0f} words. Measured by cosine, the "
      "geometry the model's own similarity uses, {share_cos:.0f}% share it and the vote names {cos_right:.0f} of "
      "{n:.0f} ({cos:.1f}%); with the groups shuffled among the words, at most {null_hi:.0f}% in {shuffles:.0f} "
      "shuffles",
      holds=lambda x: x["cos"] > 90 and x["cos"] > x["null_hi"] and x["cos"] > x["euc"],
      note="leave-one-out 5-NN by cosine names over 90% of the words' groups, beating every one of 100 label "
           "shuffles and the straight-line 5-NN")(_cosine_numbers)


claim("real-language.pca-share-vs-permuted", "real-language",
      "The top two components of the {n:.0f} real-language rows hold {share:.1f}% of their variance. Points with no "
      "structure of the same shape give {gauss_mean:.1f}% on average ({ratio_gauss:.1f} times less) and at most "
      "{gauss_hi:.1f}% in {draws:.0f} draws; the rows with each column shuffled on its own (every coordinate's values "
      "kept, their relations broken) give {perm_mean:.1f}% ({ratio_perm:.1f} times less) and at most {perm_hi:.1f}%",
      holds=lambda x: x["share"] > x["perm_hi"] and x["share"] > x["gauss_hi"],
      note="the real rows' top-2 PCA share exceeds every one of 100 column-permuted and 100 Gaussian data sets")(
    lambda seed: nulls.top_share_against_nulls(point_set("real-language").vectors, seed))


CONTROL_WORDS = ("thing", "place")


@functools.lru_cache(maxsize=1)
def _control_runs() -> dict[str, tuple]:
    """For bank and each control (thing, place, the full stop) in the same sentences, run once: the separation
    by stage, and the cosines between the last layer's vectors."""
    lm = minilm.load()
    runs = {"bank": ("bank", BANK_SENSES), **{c: (c, nulls.with_control_word(BANK_SENSES, "bank", c)) for c in CONTROL_WORDS},
            "stop": (".", BANK_SENSES)}
    out = {}
    for key, (word, senses) in runs.items():
        sentences = [s for name in senses for s in senses[name]]
        last = F.normalize(word_vectors(lm, word, sentences), dim=-1).numpy()[-1]
        out[key] = (separation(lm, word, senses), last @ last.T)
    return out


@functools.lru_cache(maxsize=None)
def _control_numbers(seed):
    labels = np.array([i for i, name in enumerate(BANK_SENSES) for _ in BANK_SENSES[name]])
    off = ~np.eye(len(labels), dtype=bool)
    out = {"n": len(labels), "shuffles": nulls.MIN_SHUFFLES}
    for name, (sep, cos) in _control_runs().items():
        def gap(lab, cos=cos):
            same = lab[:, None] == lab[None, :]
            return float(cos[same & off].mean() - cos[~same].mean())

        null = nulls.label_shuffles(gap, labels, nulls.MIN_SHUFFLES, seed)
        out[f"{name}_gap"], out[f"{name}_null"] = gap(labels), float(null.max())
        out[f"{name}_first"] = next((i for i, c in enumerate(sep.correct) if c == sep.n), len(sep.correct))
        out[f"{name}_last"] = sep.correct[-1]
        out["layers"] = len(sep.correct) - 1
    out["controls_first"] = min(out[f"{c}_first"] for c in (*CONTROL_WORDS, "stop"))
    out["never"] = ", ".join(c if c != "stop" else "the full stop" for c in (*CONTROL_WORDS, "stop")
                             if out[f"{c}_first"] > out["layers"]) or "none"
    return out


claim("real-language.bank-control", "real-language",
      "Control words in the same sentences pass the same test: with bank replaced by thing, or by place, and for "
      "the full stop of each sentence, the two kinds of sentence are closer within than across by {thing_gap:.3f}, "
      "{place_gap:.3f} and {stop_gap:.3f} after the last layer (bank: {bank_gap:.3f}), each above the most that "
      "{shuffles:.0f} shuffles of the senses give ({thing_null:.3f}, {place_null:.3f}, {stop_null:.3f}). What is "
      "bank's own is the timing: the nearest mean names the sense of all {n:.0f} bank vectors from layer "
      "{bank_first:.0f} on, while no control word gets all {n:.0f} before layer {controls_first:.0f} (never: {never})",
      holds=lambda x: (x["thing_gap"] > x["thing_null"] and x["place_gap"] > x["place_null"]
                       and x["stop_gap"] > x["stop_null"] and x["bank_first"] < x["controls_first"]),
      note="control words in the same sentences separate the two kinds of sentence at the last layer too; bank "
           "reaches every sentence's sense at an earlier layer than any control")(_control_numbers)
