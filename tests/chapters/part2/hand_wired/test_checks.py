"""The self-checks of chapters/part2/hand-wired (lib/chapters/part2/hand_wired/checks.py): each accepts the
right answer and names the typical mistakes, without giving the answer away."""

import numpy as np



def test_part2_hand_wired_checks(hand_wired):
    from lib.content.corpora import hand_wired as hw
    from lib.chapters.part2.hand_wired import checks
    from lib.analysis.maps import analogy, pca
    hwm = hand_wired
    E = hwm.model.W_E.detach().double().numpy()
    vecs = {w: E[hwm.vocab.id(w)] for w in hw.WORDS}
    learned = np.array([vecs[w] for w in hw.WORDS])
    n = int(np.argmax(np.cumsum(pca(learned).explained_ratio) >= 0.95)) + 1
    designed = int(np.argmax(np.cumsum(pca(hw.designed_matrix()).explained_ratio) >= 0.95)) + 1
    assert n != designed
    assert checks.components_for_share(hwm, n)
    assert "designed table" in checks.components_for_share(hwm, designed).message
    assert "too high" in checks.components_for_share(hwm, n + 1).message
    assert "one of" in checks.inputs_left_in(hwm, "banana").message
    assert checks.inputs_left_in(hwm, analogy(vecs, "man", "boy", "girl", exclude_inputs=False).best)
    assert "left out" in checks.inputs_left_in(hwm, analogy(vecs, "man", "boy", "girl").best).message
