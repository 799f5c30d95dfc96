"""The self-checks of chapters/part2/real-language (lib/chapters/part2/real_language/checks.py): each accepts
the right answer and names the typical mistakes, without giving the answer away."""

import numpy as np
import pytest

from lib.chapters.part2.real_language import checks as real_language
from tests.chapters.part2.real_language.test_smol_map import _smol


def test_part2_real_language_checks():
    from lib.content import real_words
    from lib.analysis.maps import analogy, nearest, pca
    rows = real_words.load()
    x = rows.vectors.astype(float)
    content = np.array([g != "function words" for g in rows.groups])
    share = pca(x[content]).cumulative(4)
    assert real_language.content_top4_share(share)
    assert "all 84 words" in real_language.content_top4_share(pca(x).cumulative(4)).message
    assert "top two" in real_language.content_top4_share(pca(x[content]).cumulative(2)).message
    assert "percentage" in real_language.content_top4_share(share * 100).message
    assert real_language.teacher_analogy("mother") and "inputs" in real_language.teacher_analogy("teacher").message
    assert "baseline" in real_language.teacher_analogy("father").message
    assert "not the closest" in real_language.teacher_analogy("doctor").message
    assert "one of" in real_language.teacher_analogy("nurse").message
    # The predict: the offset's word and the baseline's, computed here without the check's helper.
    vecs = {w: x[i] for i, w in enumerate(rows.words)}
    offset = analogy(vecs, "father", "man", "woman").best
    baseline = next(w for w, _ in nearest(x, rows.words, "father", 3) if w not in ("man", "woman"))
    right, wrong = ("same", "different") if offset == baseline else ("different", "same")
    assert real_language.baseline_agrees(right)
    assert "gender rows" in real_language.baseline_agrees(wrong).message
    assert "one of" in real_language.baseline_agrees("yes").message
    assert "one of" in real_language.baseline_agrees(True).message


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def analogy(vectors, a, b, c):
    target = vectors[a] - vectors[b] + vectors[c]
    def cos(w):
        v = vectors[w]
        return target @ v / (np.linalg.norm(target) * np.linalg.norm(v))
    return max((w for w in vectors if w not in (a, b, c)), key=cos)


WRITE_CHECKS = {
    "analogy": (real_language.analogy, analogy, [
        (lambda v, a, b, c: max(v, key=lambda w: (v[a] - v[b] + v[c]) @ v[w] /
                                np.linalg.norm(v[a] - v[b] + v[c]) / np.linalg.norm(v[w])), "one of the inputs"),
        (lambda v, a, b, c: max((w for w in v if w not in (a, b, c)), key=lambda w: (v[a] - v[b] + v[c]) @ v[w]),
         "dot product"),
        (lambda v, a, b, c: analogy(v, a, c, b), "wrong way"),
    ]),
}


# ------------------------------------------------------------------ SmolLM2's table (smol_map and its two checks)


def test_smol_checks_judge_the_map():
    smol_map = _smol()
    # the predict: which of three tokens is nearest ' Paris', computed here from the table itself
    W = smol_map.table().W_E.astype(np.float64)
    vocab = smol_map.table().vocab
    p = W[vocab.id(" Paris")]
    cos = {o: float(W[vocab.id(t)] @ p / (np.linalg.norm(W[vocab.id(t)]) * np.linalg.norm(p)))
           for o, t in real_language.PARIS_CANDIDATES.items()}
    best = max(cos, key=cos.get)
    assert real_language.paris_nearest(best) and real_language.paris_nearest(f" {best.lower()} ")
    for other in set(cos) - {best}:
        verdict = real_language.paris_nearest(other)
        assert not verdict and "nearer still" in verdict.message and f"'{best}'" not in verdict.message
    assert "one of" in real_language.paris_nearest("Berlin").message
    assert "one of" in real_language.paris_nearest(3).message
    # the investigate: the gender pair with the narrowest gap on the plane, from the printed coordinates
    tokens, coords = smol_map.pair_points()
    n = len(smol_map.GENDER_PAIRS)
    gaps = {tokens[2 * i + 1].strip(): coords[2 * i + 1, 0] - coords[2 * i, 0] for i in range(n)}
    narrow, wide = min(gaps, key=gaps.get), max(gaps, key=gaps.get)
    assert all(g > 0 for g in gaps.values())       # every held-out pair runs the direction's way
    assert real_language.smallest_gender_gap(narrow)
    assert "widest" in real_language.smallest_gender_gap(wide).message
    middling = sorted(gaps, key=gaps.get)[len(gaps) // 2]
    verdict = real_language.smallest_gender_gap(middling)
    assert not verdict and narrow not in verdict.message
    assert "one of" in real_language.smallest_gender_gap("king").message
