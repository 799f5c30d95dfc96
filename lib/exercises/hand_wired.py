"""Self-checks for the chapter "Wiring meaning by hand: what comes back"."""
from __future__ import annotations

from lib.content.corpora import hand_wired as hw
from lib.analysis.maps import analogy, pca
from lib.exercises import Feedback, check_choice, check_number, same_option


def designed_top2(answer) -> Feedback:
    """Exercise 1: the designed table's top-2 PCA share."""
    p = pca(hw.designed_matrix())
    return check_number(answer, p.cumulative(2), tol=2e-3, what="The share",
                        hints={p.cumulative(2) * 100: "that is a percentage; give the share between 0 and 1.",
                               float(p.explained_ratio[0]): "that is the first component alone; add the second."})


def inputs_left_in(lm, answer) -> Feedback:
    """Exercise 2: the top word of man - boy + girl with the inputs left in."""
    E = lm.model.W_E.detach().double().numpy()
    vecs = {w: E[lm.vocab.id(w)] for w in hw.WORDS}
    best = analogy(vecs, "man", "boy", "girl", exclude_inputs=False).best
    excluded = analogy(vecs, "man", "boy", "girl").best
    wrong = (f"{answer} is the answer with the inputs left out; this time keep them in the ranking."
             if same_option(answer, excluded) else f"{answer} is not first; rank every word, man, boy and girl included.")
    return check_choice(answer, hw.WORDS, best, right=f"with the inputs left in, {answer} comes first.", wrong=wrong)
