"""The hand-wired model's designed axes on each run (lib/chapters/part2/hand_wired/runs.py): each axis's
probe is the one the model's recorded figures were measured with, the axes read back are those above the
threshold, and the shipped run is at its corpus's floor."""
import pytest

from lib.chapters.part2.hand_wired import runs
from lib.content.corpora import hand_wired as hw
from lib.shipped.behaviour import PROBE_R2_THRESHOLD


def test_the_axes_of_a_run_are_its_recorded_probes(hand_wired):
    got = runs._axes(hand_wired)
    recorded = hand_wired.meta["behaviour"]
    assert list(got["r2"]) == list(hw.AXES)
    for axis, r2 in got["r2"].items():
        assert r2 == pytest.approx(recorded["probes"][axis]["r2"], abs=1e-9), axis
    assert got["read"] == [a for a in hw.AXES if got["r2"][a] > PROBE_R2_THRESHOLD]
    assert got["at_floor"] and got["gap"] == pytest.approx(recorded["corpus_fit"]["gap"], abs=1e-9)
