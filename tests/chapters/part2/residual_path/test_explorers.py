"""The residual-path chapter's explorer (lib/chapters/part2/residual_path/explorers.py): its switches change the path."""
import pytest

from lib.chapters.part2.residual_path.explorers import path_explorer


def test_path_explorer_switches_change_the_path(lm):
    box = path_explorer(lm).widget()
    start = box.figure.data
    assert start["off"] == [] and start["ablated"] is None and start["prob"] == pytest.approx(0.9999, abs=1e-4)
    box.controls["MLP0"].value = True
    assert box.figure.data["off"] == ["MLP 0"] and box.figure.data["prob"] == pytest.approx(0.0204, abs=1e-4)
    box.controls["MLP0"].value = False
    assert box.figure.data == start
    box.controls["prompt"].value = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"
    box.controls["toward"].value = "Cefa"
    assert box.message.value == "" and box.figure.data["toward"] == "Cefa"
