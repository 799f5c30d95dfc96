"""The self-checks of chapters/part3/scale (lib/chapters/part3/scale/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

import re
from pathlib import Path

import pytest

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


def test_the_machines_timings_are_printed_as_whole_numbers():
    """A timing belongs to the machine that built the page: printed with decimals, one machine's
    rate once read 6.3 billion a second, inside the bytes exercise's answer window (6.28 to 6.30).
    Whole microseconds and whole millions cannot fall inside a decimal window."""
    page = Path(__file__).resolve().parents[4] / "_build" / "html" / "chapters" / "part3" / "scale.html"
    if not page.exists():
        pytest.skip("the site is not built")
    html = page.read_text()
    # The prose, and the figure's description (its alt text), which the tags would otherwise hide.
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html) + " ".join(re.findall(r'alt="([^"]*)"', html)))
    times = re.findall(r" ([\d,.]+) µs", text)
    rates = re.findall(r"between ([\d,.]+) and ([\d,.]+) million multiply-adds per second", text)
    assert len(times) >= 3 and len(rates) >= 2, f"the table's times and the rates are on the page: {times} {rates}"
    for value in times + [v for pair in rates for v in pair]:
        assert "." not in value, value
