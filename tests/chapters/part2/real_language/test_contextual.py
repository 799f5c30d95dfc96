"""One word's contextual vectors in two senses, layer by layer (lib/chapters/part2/real_language/contextual.py)."""
import pytest

from lib.chapters.part2.real_language.contextual import separation
from lib.chapters.part2.real_language.senses import BANK_SENSES
from lib.model import minilm

pytestmark = pytest.mark.skipif(minilm.package_dir() is None, reason=f"{minilm.PACKAGE} is not installed")


def test_bank_moves_apart_through_the_layers(minilm_model):
    s = separation(minilm_model, "bank", BANK_SENSES)
    assert s.n == 16 and s.stages == minilm_model.cfg.n_layers + 1
    gaps = [w - a for w, a in zip(s.within, s.across)]
    assert gaps[-1] > 5 * gaps[0], gaps
    assert s.correct[-1] == s.n, s.correct
