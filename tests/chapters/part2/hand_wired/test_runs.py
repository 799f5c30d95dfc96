"""The hand-wired model's designed axes on each run (lib/chapters/part2/hand_wired/runs.py): each axis's
probe over the vocabulary is the one the model's recorded figures were measured with, the axes read back are
those above the threshold, the class is taken out of both the axis and the embedding, and the null of
within-class shuffles draws the same permutations in any process."""
import subprocess
import sys

import numpy as np
import pytest

from lib.chapters.part2.hand_wired import runs
from lib.content.corpora import hand_wired as hw
from lib.shipped.behaviour import PROBE_R2_THRESHOLD


def test_the_axes_of_a_run_are_its_recorded_probes(hand_wired):
    got = runs.axes(hand_wired)
    recorded = hand_wired.meta["behaviour"]
    for axis in hw.AXES:
        assert got[axis]["r2"] == pytest.approx(recorded["probes"][axis]["r2"], abs=1e-9), axis
    assert runs.read_back(got) == [a for a in hw.AXES if got[a]["r2"] > PROBE_R2_THRESHOLD]
    assert got["gap"] == pytest.approx(recorded["corpus_fit"]["gap"], abs=1e-9)


def test_the_class_is_taken_out_of_rows_and_values_alike():
    classes = ["a", "a", "b", "b", "b"]
    x = np.array([[1.0, 2.0], [3.0, 6.0], [0.0, 0.0], [3.0, 3.0], [6.0, 9.0]])
    left = runs.class_means_taken_out(x, classes)
    assert np.allclose(left[:2].mean(axis=0), 0) and np.allclose(left[2:].mean(axis=0), 0)
    assert np.allclose(runs.class_means_taken_out(x[:, 0], classes), left[:, 0])


def test_the_within_class_shuffles_are_the_same_in_every_process():
    # a set of class names iterates in an order that each process's string hashing sets
    code = ("import numpy as np; from lib.chapters.part2.hand_wired import runs; "
            "print(runs._within_shuffles(np.arange(9.0), list('aaabbbccc'), np.random.default_rng(3)).tolist())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(h), "PATH": ""}).stdout for h in (1, 2, 3)}
    assert len(outs) == 1, outs
