"""The lever chapter's explorer (lib/chapters/part3/lever/explorers.py): the lens widget names a bad token, a
position past the prompt and an empty prompt, and reads the position it is given."""
from lib.chapters.part3.lever.explorers import lens_explorer
from lib.content.prompts import CONFIDENT


def test_the_lens_widget_shows_bad_input_as_a_message(lm):
    box = lens_explorer(lm, [CONFIDENT]).widget()
    box.controls["track"].value = "banana!"
    assert "unknown token" in box.message.value
    box.controls["track"].value = ""
    box.controls["position"].value = "9"
    assert "position must be" in box.message.value
    box.controls["position"].value = "1"
    assert box.message.value == "" and box.figure.data["position"] == 1
    box.controls["prompt"].value = "   "
    assert "empty" in box.message.value
