"""The results-page chapter's explorer (lib/chapters/part3/results_page/explorers.py): the sampling widget shows every
bad input as a message, its seed picks what the library picks, and greedy decoding at temperature 0 points to the
greedy switch."""
from lib.chapters.part3.results_page.explorers import sampling_explorer
from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.model.readout import prompt_logits


def test_sampling_widget_shows_every_bad_input_as_a_message(lm):
    box = sampling_explorer(lm, [UNCERTAIN]).widget()
    assert box.message.value == "" and box.figure.view == "sampling"
    first = box.figure.data
    for name, value, expected in (("top_k", "0", "top-k"), ("top_k", "", None), ("top_p", "1.5", "top-p"),
                                  ("top_p", "", None), ("seed", "-2", "seed"), ("seed", "3", None),
                                  ("prompt", "<BOS> pippo", "unknown token 'pippo'"), ("prompt", "", "empty"),
                                  ("prompt", "<BOS> " * 60, "at most 48"), ("prompt", CONFIDENT, None)):
        before = box.figure.data
        box.controls[name].value = value
        if expected:
            assert expected in box.message.value and 'role="alert"' in box.message.value
            assert box.figure.data == before, "a bad value leaves the last good picture"
        else:
            assert box.message.value == ""
    assert box.figure.data != first and box.figure.data["rows"][0]["token"] == "Tarso"

def test_the_seed_picks_what_the_library_picks(lm):
    from lib.model.readout import sample

    box = sampling_explorer(lm, [UNCERTAIN]).widget()
    for seed in (0, 1, 17, 2**63 - 1):
        box.controls["seed"].value = str(seed)
        assert box.figure.data["chosen"] == lm.vocab.tokens[sample(prompt_logits(lm, UNCERTAIN), seed=seed)]

def test_greedy_decoding_at_temperature_0_points_to_the_greedy_switch(lm):
    box = sampling_explorer(lm, [UNCERTAIN]).widget()
    box.controls["greedy"].value = True
    box.controls["temperature"].box.value = "0"
    assert "that is greedy decoding, which is on: it takes the most probable token whatever" in box.message.value
    assert box.figure.data["greedy"] is True and box.figure.data["temperature"] == 1.0
