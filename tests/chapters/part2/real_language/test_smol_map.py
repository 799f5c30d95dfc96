"""SmolLM2's map of the chapter's words (lib/chapters/part2/real_language/smol_map.py): the nearest tokens are a
brute-force cosine search, bad input is one line, the words are single tokens, the between-share is a share."""
import numpy as np
import pytest


def _smol():
    from lib.model import smollm2
    if smollm2.package_file() is None:
        pytest.skip(f"{smollm2.PACKAGE} is not installed (make install installs it)")
    from lib.chapters.part2.real_language import smol_map
    return smol_map

def test_smol_nearest_is_a_brute_force_cosine_search():
    smol_map = _smol()
    W = smol_map.table().W_E.astype(np.float64)
    i = smol_map.table().vocab.id(" king")
    cos = W @ W[i] / (np.linalg.norm(W, axis=1) * np.linalg.norm(W[i]))
    cos[i] = -np.inf
    best = np.argsort(-cos)[:5]
    got = smol_map.nearest(" king", 5)
    assert [t for t, _ in got] == smol_map.table().vocab.decode(best)
    np.testing.assert_allclose([c for _, c in got], cos[best], atol=1e-5)

@pytest.mark.parametrize("token, k, says", [(" unbelievable", 5, "not one token"), (" king", 0, "k is a whole number")])
def test_smol_nearest_bad_input_is_one_line(token, k, says):
    from lib.errors import CourseError
    smol_map = _smol()
    with pytest.raises(CourseError) as e:
        smol_map.nearest(token, k)
    assert says in str(e.value) and "\n" not in str(e.value)

def test_smol_words_are_single_tokens_and_the_between_share_is_a_share():
    smol_map = _smol()
    from lib.content import smollm2_words
    w = smollm2_words.load()
    assert len(w.words) == 84 and w.vectors.shape == (84, smol_map.table().cfg.d_model)
    assert all(smol_map.pieces(t) == [t] for t in w.tokens)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    labels = np.repeat(np.arange(4), 10)
    assert 0 <= smol_map.between_share(x, labels) <= 1
    assert smol_map.between_share(np.repeat(x[:4], 10, axis=0), labels) == pytest.approx(1, abs=1e-12)
