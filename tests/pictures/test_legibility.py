"""Every figure the library draws reads on the page (lib.pictures.legibility), and the rules can fail.

The registry (lib.pictures.gallery) draws each figure function with a chapter's arguments; the
chapters' own figures meet the same rules in the build (figures.show / with_alt / check warn, and the
build fails on a warning): the last test holds every chapter cell that makes a figure to one of them.
"""
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lib.pictures import figures  # noqa: E402
from lib.pictures.gallery import FIGURES  # noqa: E402
from lib.pictures.legibility import problems  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_each_registered_figure_reads_on_the_page(name):
    fig = FIGURES[name]()
    try:
        assert problems(fig) == [], name
    finally:
        plt.close(fig)


# ---------------------------------------------------------------- the rules can fail
def test_a_clipped_title_is_found():
    fig, ax = plt.subplots(figsize=(3, 2), dpi=100)
    ax.set_title("a title far too long for a figure three inches wide, clipped at both sides", fontsize=10)
    found = problems(fig)
    plt.close(fig)
    assert any("cut off" in p and "a title far too long" in p for p in found), found


def test_overlapping_tick_labels_and_a_label_over_ticks_are_found():
    fig, ax = plt.subplots(figsize=(3, 2), dpi=100, layout="constrained")
    ax.set_xticks(range(12), [f"token {i}" for i in range(12)])
    ax.text(-0.5, -0.2, "over the ticks", transform=ax.transAxes, fontsize=10)
    found = problems(fig)
    plt.close(fig)
    assert any(p.startswith("tick labels 'token 0' and 'token 1' overlap") for p in found), found
    assert any(p.startswith("'over the ticks' overlaps") for p in found), found


def test_dark_text_on_navy_is_found_and_cell_text_fixes_it():
    m = np.array([[0.0, 1.0], [0.62, 0.3]])
    fig, (bad, good) = plt.subplots(1, 2, figsize=(4, 2), dpi=100, layout="constrained")
    for ax in (bad, good):
        image = ax.imshow(m, cmap="Blues", vmin=0, vmax=1)
        ax.set_xticks([]), ax.set_yticks([])
    for (i, j), v in np.ndenumerate(m):
        bad.text(j, i, f"a{v:.2f}", ha="center", va="center", fontsize=10, color="#222")
        figures.cell_text(good, image, j, i, f"b{v:.2f}", v, fontsize=10)
    found = problems(fig)
    plt.close(fig)
    assert any("'a1.00' has contrast" in p for p in found), found          # navy cell
    assert not any("'b" in p for p in found), found


def test_text_too_small_on_the_page_is_found():
    fig, ax = plt.subplots(figsize=(13, 3), dpi=100, layout="constrained")   # shrunk to half on the page
    ax.set_title("ten points", fontsize=10)
    found = problems(fig)
    plt.close(fig)
    assert any("'ten points' is 7.2 px on the page" in p for p in found), found


# ---------------------------------------------------------------- every chapter figure is checked
FIGURE_MADE = re.compile(r"\bplt\.(subplots|figure)\(|figures\.(subplots|belt_strip|number_grids)\(")
FIGURE_CHECKED = re.compile(r"figures\.(show|with_alt|check)\(|\bshow\(fig")


def chapter_cells():
    for path in sorted((ROOT / "chapters").rglob("*.md")):
        for i, cell in enumerate(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)\n```", path.read_text(), re.S)):
            yield f"{path.relative_to(ROOT)} cell {i}", cell


def test_every_chapter_figure_passes_the_check():
    cells = list(chapter_cells())
    making = [(where, c) for where, c in cells if FIGURE_MADE.search(c)]
    assert len(making) >= 25, len(making)       # the chapters draw about thirty figures
    unchecked = [where for where, c in making if not FIGURE_CHECKED.search(c)]
    assert unchecked == [], f"figures shown without lib.pictures.figures.check: {unchecked}"
