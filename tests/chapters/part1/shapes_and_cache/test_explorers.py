"""The shapes-and-cache chapter's explorer (lib/chapters/part1/shapes_and_cache/explorers.py): the KV cache's
memory from the sizes typed, the note's 7B figure by default, and every bad box named in one line."""
from lib.analysis.inventory import kv_cache_bytes
from lib.chapters.part1.shapes_and_cache.explorers import kv_cache_calculator


def test_the_calculator_totals_the_sizes_typed_and_names_bad_boxes():
    calc = kv_cache_calculator().widget()
    assert calc.figure.data["total"] == 17_179_869_184
    calc.controls["layers"].value, calc.controls["bytes"].value = "12", "0.5"
    assert calc.figure.data["total"] == kv_cache_bytes(12, 32768, 32, 128, 0.5)
    calc.controls["bytes"].value = "two"
    assert "bytes per number must be a number" in calc.message.value
    calc.controls["bytes"].value = "-1"
    assert "positive" in calc.message.value
    calc.controls["bytes"].value = "1e300"
    calc.controls["layers"].value = "9" * 400
    assert calc.message.value, "a total past any float is named, not drawn"
