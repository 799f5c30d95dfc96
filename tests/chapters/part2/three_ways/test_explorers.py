"""The three-ways chapter's explorers (lib/chapters/part2/three_ways/explorers.py): the t-SNE explorer offers only
the perplexities its points allow, moves with every control, and its iterations control is honest in a kernel
(values no slider offers named in one sentence); the plane builder names bad axes and redraws."""
import pytest

from lib.chapters.part2.three_ways.explorers import AXES, plane_builder, tsne_explorer
from lib.errors import CourseError


def test_the_iterations_control_in_a_kernel():
    from lib.chapters.part2.three_ways.views import STEPS

    ex = tsne_explorer("known-clusters", perplexity=10)
    steps = next(c for c in ex.controls if c.name == "steps")
    assert steps.options == STEPS and steps.default == STEPS[-1] and steps.slider
    assert steps.labels()[0] == "250" and steps.labels()[-1] == "until converged"
    assert "early exaggeration" in ex.note and "scikit-learn" in ex.note
    assert "steps" not in {c.name for c in tsne_explorer().controls}
    assert tsne_explorer("known-clusters").defaults()["perplexity"] == 10, "5 is not offered there"
    box = ex.widget()
    done = box.figure.data
    assert done["converged"] == [True, True] and done["steps"] == STEPS[-1]
    box.controls["steps"].value = 250
    first = box.figure.data
    assert first["iterations"] == [250, 250] and first["converged"] == [False, False]
    assert all(a > b for a, b in zip(first["kl"], done["kl"])), "the end of exaggeration is far from the optimum"
    assert first["layouts"][0] != done["layouts"][0]
    box.controls["left"].value = 4
    assert box.figure.data["seeds"] == [4, 1] and box.figure.data["iterations"][0] == 250
    # Values no slider offers get one sentence each, in the constructor and in compute.
    with pytest.raises(CourseError, match="iterations 300 is not one of this set's stops: 250, 500"):
        tsne_explorer("known-clusters", perplexity=10, steps=300)
    with pytest.raises(CourseError, match="perplexity 5 is not one of this set.s stops: 10, 20, 30, 50"):
        tsne_explorer("known-clusters", perplexity=5)
    for values, message in (({"steps": 100}, "iterations 100 is not"), ({"perplexity": 7}, "perplexity 7 is not"),
                            ({"left": 9}, "the left seed 9 is not")):
        with pytest.raises(CourseError, match=message):
            ex.compute({**ex.defaults(), **values})


def test_the_tsne_explorer_offers_only_perplexities_the_points_allow():
    for points, n in (("calling-game", 28), ("real-language", 84)):
        ex = tsne_explorer(points, perplexity=5)
        perplexity = next(c for c in ex.controls if c.name == "perplexity")
        assert perplexity.options and max(perplexity.options) < n
        assert "precomputed" in ex.note.lower() and str(n) in ex.note
    with pytest.raises(CourseError, match="not one of this set's stops"):
        tsne_explorer("calling-game", perplexity=40)

def test_tsne_widget_moves_with_every_control():
    box = tsne_explorer().widget()
    first = box.figure.data
    assert first["seeds"] == [0, 1] and first["perplexity"] == 5 and len(first["layouts"]) == 2
    box.controls["right"].value = 3
    assert box.figure.data["seeds"] == [0, 3] and box.figure.data["layouts"][0] == first["layouts"][0]
    box.controls["perplexity"].value = 15
    assert box.figure.data["perplexity"] == 15 and box.figure.data["layouts"][0] != first["layouts"][0]

def test_plane_builder_messages_and_redraws():
    box = plane_builder().widget()
    start = box.figure.data
    assert start["axes"] == ["Paolo - Pietro", "Tarso + Cefa - capo - vice"] and round(start["spread"], 2) == 0.13
    box.controls["axis_2"].value = "Paolo - Paolo"
    assert "zero vector" in box.message.value and box.figure.data == start
    box.controls["axis_2"].value = "Pippo"
    assert "'Pippo' is not a token" in box.message.value
    box.controls["axis_2"].value = "Paolo"
    assert box.message.value == "" and box.figure.data != start
    box.controls["axis_2"].value = "Paolo - Pietro"
    assert "points along the first" in box.message.value
    # A word set's change puts that set's own axes in the boxes (the game's words are not MiniLM's points),
    # and the "where this sits" line, true of the game model's embedding table only, goes.
    assert box.children[-3].layout.display is None and "embedding table" in box.children[-3].value
    box.controls["points"].value = "real-language"
    assert box.message.value == "" and "queen" in box.figure.data["labels"]
    assert [box.controls[a].value for a in ("axis_1", "axis_2")] == list(AXES["real-language"])
    assert box.figure.data["axes"] == list(AXES["real-language"]) and box.children[-3].layout.display == "none"
    # One bad box: the message names it, the picture keeps its last good value, the other box still works.
    box.controls["axis_1"].value = "Paolo"
    assert box.message.value.startswith('<span class="course-error" role="alert"') and "axis 1: 'Paolo' is not" in box.message.value
    assert box.figure.data["axes"] == list(AXES["real-language"])
    box.controls["axis_2"].value = "big - small"
    assert "axis 1: 'Paolo'" in box.message.value and box.figure.data["axes"] == [AXES["real-language"][0], "big - small"]
    box.controls["axis_1"].value = "cat"
    assert box.message.value == "" and box.figure.data["axes"] == ["cat", "big - small"]
    box.controls["points"].value = "calling-game"
    assert box.figure.data == start and box.message.value == "" and box.children[-3].layout.display is None
