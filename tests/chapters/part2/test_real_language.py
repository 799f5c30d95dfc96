"""The self-checks of chapters/part2/real-language (lib/chapters/part2/real_language/checks.py): each accepts
the right answer and names the typical mistakes, without giving the answer away."""

import numpy as np


def test_part2_real_language_checks():
    from lib.chapters.part2.real_language import checks as real_language
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
