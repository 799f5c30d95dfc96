"""The search-by-hand chapter's explorer (lib/chapters/part3/search_by_hand/explorers.py): the temperature widget's
page is the read-out's at the temperature it shows, and a misspelt word gets the nearest known one."""
import pytest

from lib.chapters.part3.search_by_hand.explorers import temperature_explorer
from lib.content.prompts import UNCERTAIN
from lib.model.readout import prompt_logits, softmax


def test_the_page_is_the_readouts_and_a_typo_names_the_nearest_word(lm):
    box = temperature_explorer(lm, [UNCERTAIN]).widget()
    box.controls["temperature"].box.value = "0.5"
    shown = box.figure.data["page"]
    want = softmax(prompt_logits(lm, UNCERTAIN), 0.5)
    assert [p for _, p in shown] == pytest.approx(sorted(want.tolist(), reverse=True)[:len(shown)], abs=1e-12)
    assert [t for t, _ in shown][0] == lm.vocab.tokens[int(want.argmax())]
    box.controls["prompt"].value = "<BOS> Pietro chiam"
    assert "did you mean 'chiama'" in box.message.value
