"""The self-checks of chapters/part2/three-ways (lib/chapters/part2/three_ways/checks.py): each accepts the
right answer and names the typical mistakes, without giving the answer away."""

import numpy as np

from lib.chapters.part2.three_ways import checks as three_ways


def test_part2_three_ways_checks():
    from lib.chapters.part2.three_ways.views import plane_view
    spreads = three_ways.epithet_plane_spreads()
    assert len(spreads) == 6 and spreads["Tarso and capo"] == plane_view("calling-game", "Tarso", "capo").spread
    ranked = sorted(spreads, key=spreads.get, reverse=True)
    assert spreads[ranked[0]] - spreads[ranked[1]] > 0.01, "the widest plane stands out at the explorer's percent"
    assert three_ways.widest_epithet_plane(ranked[0]) and not three_ways.widest_epithet_plane(ranked[1])
    assert "one of" in three_ways.widest_epithet_plane("Tarso, capo").message
    from lib.chapters.part2.three_ways.views import SEEDS
    kept = three_ways.seeds_keeping("calling-game", "banana", 10.0)
    assert 0 < kept < len(SEEDS), "the investigate asks about a word whose page neighbour the seed decides"
    assert three_ways.seeds_keeping_neighbour(kept) and three_ways.seeds_keeping_neighbour(float(kept))
    assert "not every seed" in three_ways.seeds_keeping_neighbour(len(SEEDS)).message
    assert "whole number" in three_ways.seeds_keeping_neighbour("banana").message
    assert three_ways.full_neighbour("calling-game", "Tarso") == "vice"
    # The degenerate layout: the stored run's count is right, and so is chance's estimate if within 2;
    # the count an ordinary perplexity keeps gets its own diagnosis.
    count = three_ways.nearest_kept("calling-game", 27.0, 0)
    ordinary = three_ways.nearest_kept("calling-game", 5.0, 0)
    assert ordinary - count > 4
    fb = three_ways.degenerate_nearest_kept(count)
    assert fb and fb.accepts == (count - 2, count + 2)
    assert three_ways.degenerate_nearest_kept(round(28 / 27)), "chance's estimate is within 2 of this count"
    assert "ordinary perplexity" in three_ways.degenerate_nearest_kept(ordinary).message
    assert "too high" in three_ways.degenerate_nearest_kept(count + 6).message
    # The known clusters at perplexity 50: the right choice is computed, the other gets the hint, and
    # anything else is told the two choices.
    right = three_ways.known_distances_closer("data")
    assert right and "4.96 in the data" in right.message
    wrong = three_ways.known_distances_closer("perplexity 10")
    assert not wrong and "neighbourhood" in wrong.message and "data" not in wrong.message
    assert three_ways.known_distances_closer("Data"), "a word as a person writes it: case aside"
    for garbage in ("dat", 4.5, True, None, ["data"]):
        assert not three_ways.known_distances_closer(garbage)


# ------------------------------------------------------------------ the chapter's write checks
# For each, (the check, a right function written as a learner would, [(a typical wrong function, words
# its diagnosis must contain), ...]). tests/exercises/test_writing.py gathers every chapter's WRITE_CHECKS
# and runs each check on its right function, its wrong ones and garbage.
def pca_by_svd(x, k):
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    return vt[:k], (s ** 2 / (s ** 2).sum())[:k]


WRITE_CHECKS = {
    "pca_by_svd": (three_ways.pca_by_svd, pca_by_svd, [
        (lambda x, k: (np.linalg.svd(x, full_matrices=False)[2][:k], pca_by_svd(x, k)[1]), "not centred"),
        (lambda x, k: (pca_by_svd(x, k)[0], (lambda s: (s / s.sum())[:k])(np.linalg.svd(x - x.mean(0))[1])),
         "singular value squared"),
        (lambda x, k: (pca_by_svd(x, k)[0], pca_by_svd(x, k)[1] / pca_by_svd(x, k)[1].sum()), "k kept components"),
    ]),
}


def plane_share(x, i, j, k, l, m, n):
    d1 = x[i] - x[j]
    d2 = x[k] + x[l] - x[m] - x[n]
    e1 = d1 / np.linalg.norm(d1)
    e2 = d2 - (d2 @ e1) * e1
    e2 /= np.linalg.norm(e2)
    c = x - x.mean(axis=0)
    return float(((c @ e1) ** 2 + (c @ e2) ** 2).sum() / (c ** 2).sum())


def plane_share_not_centred(x, i, j, k, l, m, n):
    d1 = x[i] - x[j]
    d2 = x[k] + x[l] - x[m] - x[n]
    e1 = d1 / np.linalg.norm(d1)
    e2 = d2 - (d2 @ e1) * e1
    e2 /= np.linalg.norm(e2)
    return float(((x @ e1) ** 2 + (x @ e2) ** 2).sum() / (x ** 2).sum())


def plane_share_not_perpendicular(x, i, j, k, l, m, n):
    c = x - x.mean(axis=0)
    axes = [d / np.linalg.norm(d) for d in (x[i] - x[j], x[k] + x[l] - x[m] - x[n])]
    return float(sum(((c @ e) ** 2).sum() for e in axes) / (c ** 2).sum())


WRITE_CHECKS["plane_share"] = (three_ways.plane_share, plane_share, [
    (plane_share_not_centred, "not centred"), (plane_share_not_perpendicular, "perpendicular")])
