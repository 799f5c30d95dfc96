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
    page = Path(__file__).resolve().parents[3] / "_build" / "html" / "chapters" / "part3" / "scale.html"
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


def test_the_smollm2_row_is_counted_from_its_file():
    """The scale table's SmolLM2 row: every count from the GGUF file's tensor shapes and metadata. It agrees
    with the count from the published configuration, and a changed file would change it (its sizes are read,
    not copied)."""
    import dataclasses

    from lib.analysis.inventory import file_model_facts, model_facts, published_architecture
    from lib.chapters.part3.scale.claims import SMOLLM2, model_rows
    from lib.content.real_models import by_name
    from lib.errors import CourseError
    from lib.model import smollm2
    if smollm2.package_file() is None:
        pytest.skip(f"{smollm2.PACKAGE} is not installed (make install installs it)")
    facts = smollm2.file_facts()
    row = model_rows()[SMOLLM2]
    assert row.source == "its weights file" and row.parameters == facts.parameters == 134_515_008
    published = model_facts(published_architecture(by_name(SMOLLM2)))
    for field in ("unembed_params", "kv_bytes_per_token", "tied", "bias", "norm", "kv_heads", "heads", "vocab",
                  "d_model", "layers"):
        assert getattr(row, field) == getattr(published, field), field
    assert row.unembed_share == pytest.approx(published.unembed_share, abs=1e-9)
    assert row.unembed_compute_share == pytest.approx(published.unembed_compute_share, abs=1e-9)
    # an untied file with one layer fewer: the counts follow the shapes
    shapes = {n: s for n, s in facts.shapes.items() if not n.startswith("blk.29.")}
    shapes["output.weight"] = shapes["token_embd.weight"]
    other = file_model_facts("edited", dataclasses.replace(facts, shapes=shapes))
    assert not other.tied and other.parameters == row.parameters - sum(
        n for name, n in facts.numbers.items() if name.startswith("blk.29.")) + row.unembed_params
    broken = dict(facts.shapes, **{"token_embd.weight": (10, 576)})
    with pytest.raises(CourseError, match="disagrees with the metadata"):
        file_model_facts("broken", dataclasses.replace(facts, shapes=broken))
