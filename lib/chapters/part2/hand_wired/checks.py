"""Self-checks for the chapter "Wiring meaning by hand: what comes back"."""
from __future__ import annotations

import numpy as np

from lib.content.corpora import hand_wired as hw
from lib.analysis.maps import analogy, pca
from lib.exercises import Feedback, check_choice, check_whole_number, same_option
from lib.exercises.site import Values, site_check


def _components_for(x, share: float) -> int:
    """How many principal components of the rows `x` it takes to hold at least `share` of the variance."""
    cumulative = np.cumsum(pca(x).explained_ratio)
    return int(np.searchsorted(cumulative, share - 1e-12) + 1)


def _learned_rows(lm) -> np.ndarray:
    E = lm.model.W_E.detach().double().numpy()
    return np.array([E[lm.vocab.id(w)] for w in hw.WORDS])


SHARE = 0.95


def _components_values(lm) -> Values:
    return Values(_components_for(_learned_rows(lm), SHARE), hints={"designed": _components_for(hw.designed_matrix(), SHARE)})


COMPONENTS_FOR_SHARE = site_check(
    __name__, "components_for_share", rule="whole", compute="componentsForShare", values=_components_values,
    units=("components", "component"),
    what=f"The number of components that hold {SHARE:.0%}", model="hand-wired",
    args=lambda: {"words": tuple(hw.WORDS), "share": SHARE, "designed": hw.designed_matrix().tolist()}, texts={
        "designed": "that is the count for the designed table, whose rows lie in its few axes; count the components "
                    "the model's learned rows need."})


def components_for_share(lm, answer) -> Feedback:
    """Investigate: how many principal components of the learned rows of the 40 words hold SHARE of
    their variance (the page gives the top six's share only)."""
    return COMPONENTS_FOR_SHARE.judge(answer, lm)


def _left_in_values(lm) -> Values:
    E = lm.model.W_E.detach().double().numpy()
    vecs = {w: E[lm.vocab.id(w)] for w in hw.WORDS}
    return Values(analogy(vecs, "man", "boy", "girl", exclude_inputs=False).best, options=tuple(hw.WORDS),
                  hints={"excluded": analogy(vecs, "man", "boy", "girl").best})


INPUTS_LEFT_IN = site_check(__name__, "inputs_left_in", rule="choice", compute="analogyLeftIn", values=_left_in_values,
                            model="hand-wired", args={"words": tuple(hw.WORDS), "inputs": ("man", "boy", "girl")},
                            texts={
    "right": "with the inputs left in, {answer} comes first.",
    "wrong": "{answer} is not first; rank every word, man, boy and girl included.",
    "excluded": "{answer} is the answer with the inputs left out; this time keep them in the ranking."})


def inputs_left_in(lm, answer) -> Feedback:
    """Predict: the top word of man - boy + girl with the inputs left in."""
    return INPUTS_LEFT_IN.judge(answer, lm)
