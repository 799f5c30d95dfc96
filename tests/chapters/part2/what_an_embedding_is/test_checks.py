"""The self-checks of chapters/part2/what-an-embedding-is
(lib/chapters/part2/what_an_embedding_is/checks.py): each accepts the right answer and names the typical
mistakes, without giving the answer away."""

import numpy as np

from lib.chapters.part2.what_an_embedding_is import checks as what_an_embedding_is


def test_part2_embedding_checks(lm, zero_layer):
    from lib.chapters.part2.what_an_embedding_is import checks as emb
    from lib.analysis.maps import nearest
    zl = zero_layer
    # Cefa's neighbour in the zero-layer model: right; the calling-game model's; Cefa itself; not a token.
    word = nearest(zl.model.W_E.detach().double().numpy(), zl.vocab.tokens, "Cefa", 1)[0][0]
    cg_word = nearest(lm.model.W_E.detach().double().numpy(), lm.vocab.tokens, "Cefa", 1)[0][0]
    assert word != cg_word
    assert emb.zero_layer_neighbour(lm, zl, word)
    assert "calling-game model" in emb.zero_layer_neighbour(lm, zl, cg_word).message
    assert "itself" in emb.zero_layer_neighbour(lm, zl, "Cefa").message
    assert "one of" in emb.zero_layer_neighbour(lm, zl, "banana-split").message
    # The Pietro-Paolo cosine: right; the dot product; the distance.
    E = lm.model.W_E.detach().double().numpy()
    a, b = E[lm.vocab.id("Pietro")], E[lm.vocab.id("Paolo")]
    assert emb.row_cosine(lm, float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    assert "dot product" in emb.row_cosine(lm, float(a @ b)).message
    assert "distance" in emb.row_cosine(lm, float(np.linalg.norm(a - b))).message


def test_dot_versus_cosine_predict(lm):
    from lib.chapters.part2.what_an_embedding_is import checks as ch
    n = ch.dot_disagreements(lm)
    assert 0 < n < len(lm.vocab.tokens)
    assert ch.dot_vs_cosine(lm, ch.dot_range(n))
    assert "lengths" in ch.dot_vs_cosine(lm, "none").message
    wrong = next(r for r in ch.DOT_RANGES[1:] if r != ch.dot_range(n))
    assert "is not it" in ch.dot_vs_cosine(lm, wrong).message
    assert [ch.dot_range(k) for k in (0, 5, 12, 25)] == list(ch.DOT_RANGES)
    for garbage in (None, "5", np.array([5]), 10**400, True):
        fb = ch.dot_vs_cosine(lm, garbage)
        assert not fb.ok and fb.message


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def cosine_neighbours(rows, names, word, k):
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    sims = unit @ unit[list(names).index(word)]
    return [names[j] for j in np.argsort(-sims) if names[j] != word][:k]


WRITE_CHECKS = {
    "cosine_neighbours": (what_an_embedding_is.cosine_neighbours, cosine_neighbours, [
        (lambda r, n, w, k: [w] + cosine_neighbours(r, n, w, k - 1), "itself"),
        (lambda r, n, w, k: [n[j] for j in np.argsort(-(r @ r[list(n).index(w)])) if n[j] != w][:k], "dot product"),
        (lambda r, n, w, k: cosine_neighbours(r, n, w, k)[::-1] if k > 1 else ["?"], "wrong order"),
    ]),
}
