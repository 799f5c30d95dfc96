"""SmolLM2's induction heads (lib/chapters/part1/induction/real.py): the stored figures were measured with today's
recipe, and the heads are found again on other tokens."""
import numpy as np

from lib.analysis import induction
from lib.chapters.part1.induction import real


def test_the_smollm2_figures_were_measured_with_todays_recipe():
    stored = real.read()      # refuses a file measured with another recipe
    ind = np.array(stored["induction"])
    heads = {tuple(hd) for hd in stored["heads"]}
    assert heads == {tuple(hd) for hd in np.argwhere(ind >= induction.FORMED).tolist()}
    assert len(stored["random"]) == real.DRAWS
    for draw in stored["random"]:
        picked = {tuple(hd) for hd in draw["heads"]}
        assert len(picked) == len(heads) and not picked & heads

def test_smollm2s_induction_heads_found_again_on_other_tokens(smollm2_model):
    """Other random tokens (seed 7), two sequences, three random draws: the best induction head is one the
    stored measurement found, and ablating the heads found costs the copy more than each random set."""
    got = real.measure(smollm2_model, seed=7, draws=3, n=2)
    stored = {tuple(hd) for hd in real.read()["heads"]}
    assert tuple(got["heads"][0]) in stored
    assert got["previous_head"] == real.read()["previous_head"]
    assert got["previous_ablated"]["accuracy"] < got["clean"]["accuracy"] - 0.2
    assert got["ablated"]["accuracy"] < got["clean"]["accuracy"] - 0.2
    assert all(r["accuracy"] > got["ablated"]["accuracy"] for r in got["random"])
