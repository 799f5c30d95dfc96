"""The epithets on the concept plane on each run (lib/chapters/part2/three_ways/runs.py): where each sits, and
which sit in their role's corner, as the model's own epithet plane has them."""
import numpy as np

from lib.chapters.part2.three_ways import runs
from lib.shipped.behaviour import EPITHET_CORNERS, epithet_plane


def test_the_corners_of_a_run_are_its_epithet_plane(lm, monkeypatch):
    got = runs._corners(lm)
    _, corners = epithet_plane(lm)
    assert all(np.allclose(got["at"][w], corners[w]) for w in runs.EPITHETS)
    assert got["in_corner"] == list(EPITHET_CORNERS), "the pages' run has each epithet in its corner"
    swapped = {**corners, "Cefa": -corners["Cefa"]}
    monkeypatch.setattr(runs, "epithet_plane", lambda lm: (None, swapped))
    assert "Cefa" not in runs._corners(lm)["in_corner"]
