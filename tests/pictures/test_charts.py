"""The chapters' SVG heatmaps (lib.pictures.charts): one image with its description in words (escaped), a cell
per entry in the ramp's colour with its value written in the ink that reads on it, the causal mask's cells
grey, no word under 11 px, and a grid of patterns that fits the page's column."""
import re
import xml.etree.ElementTree as ET

import numpy as np

from lib.pictures.charts import MIN_CELL, heatmap, heatmap_grid
from lib.pictures.colours import MASKED, blue, hex_colour, ink_on
from lib.pictures.legibility import PAGE_PX

SVG = "{http://www.w3.org/2000/svg}"
TOKENS = ["<BOS>", "Pietro", "chiama"]
PATTERN = np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.5]])


def squares(root) -> dict[str, int]:
    """How many cells each fill colour paints (a path of squares per colour)."""
    return {p.get("fill"): p.get("d").count("M") for p in root.iter(SVG + "path")}


def test_a_heatmap_is_one_described_image_with_every_value():
    svg = heatmap(PATTERN, TOKENS, TOKENS, alt='attention of "head" L0H3 <causal>', title="L0H3")
    root = ET.fromstring(svg)
    assert root.get("role") == "img" and root.get("aria-label") == 'attention of "head" L0H3 <causal>'
    assert root.find(SVG + "title").text == 'attention of "head" L0H3 <causal>'
    texts = [t.text for t in root.iter(SVG + "text")]
    assert texts[0] == "L0H3" and texts.count("<BOS>") == 2, "the title, then each token as a row and a column"
    values = {t.text: t.get("fill", "#222") for t in root.iter(SVG + "text") if re.fullmatch(r"\d\.\d\d", t.text or "")}
    assert set(values) == {f"{v:.2f}" for v in PATTERN.ravel()}
    assert values["1.00"] == ink_on(blue(1.0)) and values["0.20"] == ink_on(blue(0.2))
    assert sum(squares(root).values()) == 9 and squares(root)[blue(0.0)] == 3


def test_the_mask_is_grey_and_no_word_is_small():
    root = ET.fromstring(heatmap(PATTERN, TOKENS, TOKENS, alt="a", masked_upper=True))
    assert squares(root)[hex_colour(MASKED)] == 3 and blue(0.0) not in squares(root)
    sizes = [float(t.get("font-size", root.get("font-size"))) for t in root.iter(SVG + "text")]
    assert min(sizes) >= 11


def test_a_grid_fits_the_page_and_fades_what_is_off():
    tokens = [f"t{i}" for i in range(12)]
    items = [(f"L0H{h}", np.tril(np.full((12, 12), 1 / 12))) for h in range(8)]
    root = ET.fromstring(heatmap_grid(items, tokens, tokens, alt="eight heads", dimmed=["L0H2"]))
    assert float(root.get("width")) <= PAGE_PX + 8
    groups = list(root.iter(SVG + "g"))
    assert len(groups) == 8 and [g.get("opacity") for g in groups].count("0.35") == 1
    assert any(t.text == "L0H2 (off)" for t in root.iter(SVG + "text"))
    cell = min(float(x) for x in re.findall(r"h(\d+)v", root.find(f".//{SVG}path").get("d"))) + 1
    assert cell >= MIN_CELL, "shrunk to fit, but never below the smallest readable cell"
