"""The self-checks of chapters/part3/scale (lib/chapters/part3/scale/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

from helpers import one_line_verdicts
from lib.chapters.part3.scale import checks as scale


def test_scale_checks():
    assert scale.multiply_adds(50257 * 768) and not scale.multiply_adds(50257)
    assert "added" in scale.multiply_adds(50257 + 768).message
    assert "bytes" in scale.multiply_adds(50257 * 768 * 4).message
    assert "one multiply-add per word" in scale.multiply_adds(50257).message
    assert "too low" in scale.multiply_adds(1000).message
    assert scale.dictionary_gigabytes(256_000 * 12288 * 2 / 1e9)
    assert "32-bit" in scale.dictionary_gigabytes(256_000 * 12288 * 4 / 1e9).message
    assert "2**30" in scale.dictionary_gigabytes(256_000 * 12288 * 2 / 2**30).message
    assert "GPT-3's own" in scale.dictionary_gigabytes(50257 * 12288 * 2 / 1e9).message   # half the table's figure
    one_line_verdicts(scale.multiply_adds)
    one_line_verdicts(scale.dictionary_gigabytes)
