"""The induction chapter's explorer (lib/chapters/part1/induction/explorers.py): its drawn sequence is a segment
of distinct letters twice, it moves with the checkpoints over training, and bad input is one clear line."""
import pytest

from lib.analysis import induction
from lib.chapters.part1.induction import explorers
from lib.errors import CourseError


def test_the_drawn_sequence_is_a_segment_of_distinct_letters_twice():
    for seed in (0, 1, 99, 123456):
        s = explorers.drawn_sequence(seed)
        p = len(s) // 2
        assert 4 <= p <= 12 and s[:p] == s[p:] and len(set(s[:p])) == p
    assert explorers.drawn_sequence(5) == explorers.drawn_sequence(5)
    assert len({tuple(explorers.drawn_sequence(s)) for s in range(30)}) == 30

@pytest.mark.parametrize("values, says", [({"sequence": "a B c"}, "'B' is not one"),
                                          ({"sequence": " ".join("abcdefghijklmnopqrstuvwxy")}, "at most 24"),
                                          ({"sequence": "", "seed": "x"}, "whole number from 0"),
                                          ({"sequence": "", "seed": "-1"}, "whole number from 0")])
def test_bad_input_in_the_explorer_is_one_clear_line(values, says):
    e = explorers.training_explorer()
    with pytest.raises(CourseError, match=says):
        e.compute({**e.defaults(), **values})

def test_the_explorer_moves_with_the_checkpoints():
    e = explorers.training_explorer()
    first = e.compute({**e.defaults(), "step": e.args["steps"][0]})
    last = e.compute(e.defaults())
    # before training nothing is copied; at the end the second copy is nearly free
    assert first["loss"]["second"] > 2.5 and last["loss"]["second"] < 0.2
    assert max(max(r) for r in last["prefix"]) > induction.FORMED > max(max(r) for r in first["prefix"])
    typed = e.compute({**e.defaults(), "sequence": "a b c d a b"})
    assert typed["loss"]["second"] is None and typed["tokens"][0] == "<BOS>"
