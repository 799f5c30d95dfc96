"""SmolLM2's embedding table mapped as the chapter maps MiniLM's, over its whole vocabulary of 49,152 tokens.

Each measurement is computed once per process (the page and its claims share it) from the table alone
(`lib.model.smollm2.embedding_table`: 113 MB, not the whole model's 540 MB). Cosines against the whole
vocabulary are taken in float32, one block of query rows at a time: a [84, 49,152] block is 16 MB.

Every measurement stands beside a null built the same way as the thing it tests: label shuffles for
groups, structureless data of the same shape for PCA shares, pairings shuffled for the rows of one word,
directions built from random tokens of the whole vocabulary for a concept direction, and planes built the
same way from random tokens for a concept plane.
"""
from __future__ import annotations

import functools

import numpy as np

from lib.analysis import nulls
from lib.analysis.maps import gram_schmidt, pca, spread_captured
from lib.analysis.maps.neighbours import knn_accuracy, same_group_share
from lib.analysis.maps.tsne import tsne_run
from lib.content import smollm2_words
from lib.content.point_sets import point_set
from lib.content.smollm2_words import FORMS
from lib.errors import require
from lib.messages import say
from lib.model import smollm2

K = 5                      # neighbours per word, as in the chapter's same-group counts
DIRECTION_DRAWS = 200      # random directions (or planes) per null
PERPLEXITY, TSNE_SEEDS = 10, (0, 1, 2)

# A concept direction named by one pair, tested on pairs it was not built from.
GENDER = (" man", " woman")
GENDER_PAIRS = ((" king", " queen"), (" father", " mother"), (" boy", " girl"), (" brother", " sister"),
                (" husband", " wife"), (" son", " daughter"), (" uncle", " aunt"), (" he", " she"), (" his", " her"),
                (" prince", " princess"), (" actor", " actress"), (" male", " female"), (" men", " women"),
                (" grandfather", " grandmother"), (" boys", " girls"), (" Mr", " Mrs"), (" groom", " bride"),
                (" hero", " heroine"), (" gentlemen", " ladies"))
PLURAL = (" dog", " dogs")
PLURAL_PAIRS = ((" cat", " cats"), (" house", " houses"), (" car", " cars"), (" tree", " trees"), (" bird", " birds"),
                (" hand", " hands"), (" eye", " eyes"), (" book", " books"), (" city", " cities"),
                (" child", " children"), (" day", " days"), (" friend", " friends"), (" horse", " horses"),
                (" story", " stories"), (" foot", " feet"), (" mouse", " mice"), (" leaf", " leaves"))


def table() -> smollm2.EmbeddingTable:
    return smollm2.embedding_table()


@functools.lru_cache(maxsize=1)
def norms() -> np.ndarray:
    return np.linalg.norm(table().W_E, axis=1)


def row(token: str) -> np.ndarray:
    """The row of one token, as float64 (a text that is not one token gets a line naming its pieces)."""
    return table().W_E[table().vocab.id(token)].astype(np.float64)


def cosines(rows) -> np.ndarray:
    """[query, vocab]: each query row's cosine with every row of the table (float32)."""
    q = np.atleast_2d(np.asarray(rows, dtype=np.float32))
    return (q @ table().W_E.T) / (np.linalg.norm(q, axis=1)[:, None] * norms()[None, :])


def top_k(cos: np.ndarray, k: int, exclude=()) -> list[tuple[str, float]]:
    """The k tokens of highest cosine in one row of `cosines`, best first, `exclude` (ids) left out."""
    c = cos.copy()
    c[list(exclude)] = -np.inf
    best = np.argpartition(-c, k)[:k]
    best = best[np.argsort(-c[best], kind="stable")]
    return [(table().vocab.tokens[j], float(c[j])) for j in best]


def nearest(token: str, k: int = K) -> list[tuple[str, float]]:
    """The k nearest tokens of a token over the whole vocabulary, by cosine, the token itself left out."""
    require(isinstance(k, int) and 1 <= k <= 50, f"k is a whole number from 1 to 50, got {k!r}")
    i = table().vocab.id(token)
    return top_k(cosines(table().W_E[i])[0], k, exclude=(i,))


def same_word(token: str, word: str) -> bool:
    """Is `token` the word written another way: with or without its leading space, capitalised or not?"""
    return token.strip().lower() == word.lower()


def pieces(text: str) -> list[str]:
    """The tokens a text is cut into, as they show."""
    return table().vocab.decode(table().vocab.encode(text))


# ----------------------------------------------------------------------------- tokens
@functools.lru_cache(maxsize=None)
def token_numbers(seed: int) -> dict:
    """How the 84 words and the calling game's words become tokens, and how alike one word's two rows
    (after a space, and bare) are, against the same rows paired with another word's."""
    w = smollm2_words.load()
    bare_cut = [x for x in w.words if len(pieces(x)) > 1]
    both = [x for x in w.words if x not in bare_cut]
    space = np.array([row(" " + x) for x in both])
    bare = np.array([row(x) for x in both])

    def mean_pair_cos(b):
        return float(np.mean(np.sum(space * b, 1) / (np.linalg.norm(space, axis=1) * np.linalg.norm(b, axis=1))))

    rng = np.random.default_rng(seed)
    null = [mean_pair_cos(bare[rng.permutation(len(both))]) for _ in range(nulls.MIN_SHUFFLES)]
    game = [t for t in point_set("calling-game").labels if not t.startswith("<")]
    game_one = [t for t in game if len(pieces(" " + t)) == 1]
    cuts = [len(pieces(" " + t)) for t in game if t.isdigit()]     # the calls ' 1' to ' 8'
    return {"n": len(w.words), "space_one": sum(len(pieces(t)) == 1 for t in w.tokens), "bare_one": len(both),
            "bare_cut": " ".join(bare_cut), "both": len(both), "pair_cos": mean_pair_cos(bare),
            "null_mean": float(np.mean(null)), "null_hi": float(np.max(null)), "shuffles": nulls.MIN_SHUFFLES,
            "game": len(game), "game_one": len(game_one), "game_one_words": " and ".join(game_one),
            "digit_pieces": max(cuts), "digit_pieces_lo": min(cuts), "vocab": len(table().vocab)}


# ----------------------------------------------------------------------------- neighbours
@functools.lru_cache(maxsize=1)
def neighbour_table() -> list[tuple[str, str, list[tuple[str, float]]]]:
    """(word, group, its K nearest tokens over the whole vocabulary) for each of the 84 words."""
    w = smollm2_words.load()
    cos = cosines(w.vectors)
    return [(word, g, top_k(cos[i], K, exclude=(w.ids[i],))) for i, (word, g) in enumerate(zip(w.words, w.groups))]


@functools.lru_cache(maxsize=1)
def spellings_in_vocabulary() -> float:
    """How many tokens of the whole vocabulary are, on average over the 84 words, the word written another way."""
    low = {}
    for t in table().vocab.tokens:
        low[t.strip().lower()] = low.get(t.strip().lower(), 0) + 1
    return float(np.mean([low.get(x, 1) - 1 for x in smollm2_words.load().words]))


def neighbour_numbers(seed: int) -> dict:
    rows = neighbour_table()
    flags = np.array([[same_word(t, word) for t, _ in near] for word, _, near in rows])
    same_group = {w: g for w, g in zip(smollm2_words.load().words, smollm2_words.load().groups)}
    other_word = [[t.strip().lower() for t, _ in near if not same_word(t, word)] for word, _, near in rows]
    group_hits = sum(same_group.get(t) == g for (word, g, _), ts in zip(rows, other_word) for t in ts)
    chance = K * spellings_in_vocabulary() / (len(table().vocab) - 1)
    return {"n": len(rows), "k": K, "share": 100 * float(flags.mean()), "first": int(flags[:, 0].sum()),
            "none": int((~flags.any(1)).sum()), "chance": 100 * chance / K, "spellings": spellings_in_vocabulary(),
            "group_hits": group_hits, "others": sum(map(len, other_word))}


# ----------------------------------------------------------------------------- groups, PCA, t-SNE
@functools.lru_cache(maxsize=None)
def group_numbers(seed: int) -> dict:
    w = smollm2_words.load()
    X = w.vectors
    gap = nulls.group_gap(X, w.groups)
    gap_null = nulls.label_shuffles(lambda g: nulls.group_gap(X, g), w.groups, nulls.MIN_SHUFFLES, seed)
    cos, euc = knn_accuracy(X, w.groups, K, cosine=True), knn_accuracy(X, w.groups, K, cosine=False)
    knn_null = nulls.label_shuffles(lambda g: knn_accuracy(X, g, K, cosine=True), w.groups, nulls.MIN_SHUFFLES, seed)
    return {"n": len(X), "gap": gap, "gap_null": float(gap_null.max()), "cos": 100 * cos, "cos_right": round(cos * len(X)),
            "euc": 100 * euc, "euc_right": round(euc * len(X)), "knn_null": 100 * float(knn_null.max()),
            "shuffles": nulls.MIN_SHUFFLES, "share_cos": 100 * same_group_share(X, w.groups, K, cosine=True)}


@functools.lru_cache(maxsize=1)
def word_pca():
    return pca(smollm2_words.load().vectors)


@functools.lru_cache(maxsize=None)
def pca_numbers(seed: int) -> dict:
    w = smollm2_words.load()
    X = w.vectors
    p = word_pca()
    g = np.array(w.groups)
    means = {name: float(p.coords[g == name, 0].mean()) for name in dict.fromkeys(w.groups)}
    ranked = sorted(means, key=means.get)
    fw = ranked[0] if ranked[0] == "function words" else ranked[-1]
    rest = [m for name, m in means.items() if name != fw]
    lengths = np.linalg.norm(X, axis=1)
    return {**nulls.top_share_against_nulls(X, seed), "share4": 100 * p.cumulative(4),
            "end_group": fw, "end_mean": abs(means[fw]), "next_mean": max(abs(m) for m in rest),
            "norm_fw": float(lengths[g == "function words"].mean()), "norm_rest": float(lengths[g != "function words"].mean()),
            "pc1_norm": float(np.corrcoef(p.coords[:, 0], lengths)[0, 1])}


def between_share(coords: np.ndarray, labels) -> float:
    """Share of the coordinates' variance (summed over their columns) that lies between the labels' means."""
    c = np.asarray(coords, float) - np.asarray(coords, float).mean(0)
    lab = np.asarray(labels)
    between = sum((lab == g).sum() * (c[lab == g].mean(0) ** 2).sum() for g in np.unique(lab))
    return float(between / (c ** 2).sum())


@functools.lru_cache(maxsize=1)
def spelling_rows():
    """The words of the 84 whose four usual forms (" dog", "dog", " Dog", "Dog") are one token each: their
    rows [form-major, dim], each row's form and each row's word."""
    w = smollm2_words.load()
    words = [x for x in w.words if all(len(pieces(f(x))) == 1 for f in FORMS.values())]
    X = np.array([row(f(x)) for f in FORMS.values() for x in words])
    forms = [name for name in FORMS for _ in words]
    return X, forms, [x for _ in FORMS for x in words]


@functools.lru_cache(maxsize=None)
def spelling_numbers(seed: int) -> dict:
    X, forms, words = spelling_rows()
    top2 = pca(X, 2).coords
    out = {"words": len(set(words)), "rows": len(X), "forms": len(FORMS), "shuffles": nulls.MIN_SHUFFLES}
    for key, labels in (("word", words), ("form", forms)):
        null = nulls.label_shuffles(lambda lab: between_share(top2, lab), labels, nulls.MIN_SHUFFLES, seed)
        out[key] = 100 * between_share(top2, labels)
        out[key + "_null"] = 100 * float(null.max())
    # the leading-space offsets (" dog" - "dog") of different words: how parallel, against the same rows
    # paired with other words' (the space form of one word minus the bare form of another)
    n = out["words"]
    space, bare = X[:n], X[n:2 * n]

    def parallel(b):
        d = space - b
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        c = d @ d.T
        return float(c[~np.eye(n, dtype=bool)].mean())

    rng = np.random.default_rng(seed)
    null = [parallel(bare[rng.permutation(n)]) for _ in range(nulls.MIN_SHUFFLES)]
    out.update({"space_parallel": parallel(bare), "space_null_mean": float(np.mean(null)),
                "space_null_hi": float(np.max(null))})
    return out


@functools.lru_cache(maxsize=1)
def tsne_runs() -> tuple:
    """The 84 rows laid out by t-SNE at perplexity 10, one converged run per seed (read from the store when
    the course has run them before)."""
    return tuple(tsne_run(smollm2_words.load().vectors, PERPLEXITY, s) for s in TSNE_SEEDS)


@functools.lru_cache(maxsize=None)
def tsne_numbers(seed: int) -> dict:
    w = smollm2_words.load()
    runs = tsne_runs()
    shares = [100 * same_group_share(r.layout, w.groups, K) for r in runs]
    first = runs[0].layout
    null = nulls.label_shuffles(lambda g: same_group_share(first, g, K), w.groups, nulls.MIN_SHUFFLES, seed)
    return {"seeds": len(runs), "perplexity": PERPLEXITY, "converged": sum(r.converged for r in runs),
            "iter_lo": min(r.n_iter for r in runs), "iter_hi": max(r.n_iter for r in runs),
            "kl_lo": min(r.kl for r in runs), "kl_hi": max(r.kl for r in runs), "share_lo": min(shares),
            "share_hi": max(shares), "share_full": 100 * same_group_share(w.vectors, w.groups, K, cosine=True),
            "null_hi": 100 * float(null.max()), "shuffles": nulls.MIN_SHUFFLES}


# ----------------------------------------------------------------------------- concept directions and a plane
def offsets(pairs) -> np.ndarray:
    """[pair, dim]: the second token's row minus the first's, for each pair."""
    return np.array([row(b) - row(a) for a, b in pairs])


def plane_axes() -> np.ndarray:
    """[2, dim]: the gender direction (" woman" - " man") and the plural one (" dogs" - " dog") made
    perpendicular to it by Gram-Schmidt."""
    return gram_schmidt([row(GENDER[1]) - row(GENDER[0]), row(PLURAL[1]) - row(PLURAL[0])])


def pair_points() -> tuple[list[str], np.ndarray]:
    """The held-out pairs' tokens and their coordinates on the plane."""
    tokens = [t for pair in GENDER_PAIRS + PLURAL_PAIRS for t in pair]
    return tokens, np.array([row(t) for t in tokens]) @ plane_axes().T


def _sorted_right(off: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Each pair offset's cosine with the direction d (positive: the pair runs the direction's way)."""
    return off @ d / (np.linalg.norm(off, axis=1) * np.linalg.norm(d))


@functools.lru_cache(maxsize=None)
def direction_numbers(seed: int) -> dict:
    """Each held-out pair measured along the direction named by one pair (and the plural one after
    Gram-Schmidt), against directions built the same way from two random tokens of the whole vocabulary:
    how many pairs run the direction's way (for a random direction, whichever way more of them run) and
    their mean cosine with it (for a random direction, its size)."""
    axes = plane_axes()
    W = table().W_E
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(W), size=(DIRECTION_DRAWS, 2))
    draws = draws[draws[:, 0] != draws[:, 1]]
    random_dirs = W[draws[:, 1]].astype(float) - W[draws[:, 0]].astype(float)
    out = {"draws": len(draws), "vocab": len(W)}
    for key, pairs, axis in (("gender", GENDER_PAIRS, axes[0]), ("plural", PLURAL_PAIRS, axes[1])):
        off = offsets(pairs)
        c = _sorted_right(off, axis)
        null = off @ random_dirs.T / (np.linalg.norm(off, axis=1)[:, None] * np.linalg.norm(random_dirs, axis=1)[None, :])
        right_null = np.maximum((null > 0).sum(0), (null < 0).sum(0))
        null_cos = float(np.abs(null.mean(0)).max())
        # which pair names the direction matters: each held-out pair's own offset as the direction in turn,
        # its mean cosine with the others' offsets
        unit = off / np.linalg.norm(off, axis=1)[:, None]
        cos = unit @ unit.T
        builders = np.array([np.delete(cos[i], i).mean() for i in range(len(off))])
        out.update({f"{key}_n": len(pairs), f"{key}_right": int((c > 0).sum()), f"{key}_cos": float(c.mean()),
                    f"{key}_null_right": int(right_null.max()), f"{key}_null_cos": null_cos,
                    f"{key}_builders_beat": int((builders > null_cos).sum()),
                    f"{key}_builder_median": float(np.median(builders))})
    # the other axis: how far each kind of pair moves along the direction it was not named for
    out["gender_on_plural"] = float(_sorted_right(offsets(GENDER_PAIRS), axes[1]).mean())
    out["plural_on_gender"] = float(_sorted_right(offsets(PLURAL_PAIRS), axes[0]).mean())
    # the toy's lesson on planes: the spread the plane holds, against planes built the same way
    X = np.array([row(t) for t in pair_points()[0]])
    spread = spread_captured(X, axes)
    built = nulls.same_construction_planes(X, ((1, 1), (1, 1)), DIRECTION_DRAWS, seed, source=W)
    inside = nulls.in_span_planes(X, DIRECTION_DRAWS, seed)
    out.update({"spread": 100 * spread, "built_median": 100 * float(np.median(built)),
                "built_pct": nulls.percentile_of(spread, built), "in_mean": 100 * float(inside.mean()),
                "in_pct": nulls.percentile_of(spread, inside), "points": len(X)})
    return out


def pair_gaps() -> list[tuple[str, float]]:
    """Each held-out gender pair (as "king/queen") with its gap along the gender axis: the second word's
    coordinate minus the first's."""
    tokens, coords = pair_points()
    n = len(GENDER_PAIRS)
    return [(f"{a.strip()}/{b.strip()}", float(coords[2 * i + 1, 0] - coords[2 * i, 0]))
            for i, (a, b) in enumerate(GENDER_PAIRS[:n])]


# ----------------------------------------------------------------------------- the reader's words (the chapter's explorer)
MAX_WORDS = 8


def read_words(text: str) -> list[str]:
    """The words of a box, separated by commas (each read as SmolLM2 reads a word inside a sentence: after a space)."""
    words = [w.strip() for w in str(text).split(",") if w.strip()]
    require(words, say("rows_none"))
    require(len(words) <= MAX_WORDS, say("rows_many", most=MAX_WORDS, n=len(words)))
    return words


def rows_view(text: str, k: int = K) -> dict:
    """The rows explorer's view: each word as the token ' word' (with its space), the pieces a word SmolLM2 has no
    token for is cut into, each one-token word's `k` nearest tokens over the whole vocabulary by cosine (itself
    left out), and the cosines between the one-token words. The page computes the same from the model it runs
    (lib/explorers/js/smollm2/ops.js `rows`)."""
    words = read_words(text)
    vocab = table().vocab
    out, rows, names = [], [], []
    for w in words:
        ids = vocab.encode(" " + w)
        entry = {"word": w, "pieces": vocab.decode(ids), "one": len(ids) == 1, "neighbours": []}
        if len(ids) == 1:
            entry["neighbours"] = [[t, c] for t, c in top_k(cosines(table().W_E[ids[0]])[0], k, exclude=(ids[0],))]
            rows.append(table().W_E[ids[0]])
            names.append(vocab.tokens[ids[0]])
        out.append(entry)
    cos = []
    if rows:
        r = np.asarray(rows, dtype=np.float32)
        n = np.linalg.norm(r, axis=1)
        cos = ((r @ r.T) / (n[:, None] * n[None, :])).astype(float).tolist()
    return {"words": out, "tokens": names, "cos": cos, "k": k}
