"""The built site's icons: Font Awesome's fonts cut to the glyphs the site shows (_ext/course_sphinx.py)."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "_ext"))
from course_sphinx import icons_shown  # noqa: E402



def test_the_icon_fonts_hold_every_icon_the_site_shows_and_no_more():
    """Font Awesome's fonts are cut to the glyphs the built site shows (_ext/course_sphinx.py): every icon a page
    or a script names, and every glyph a stylesheet draws itself, is in the cut font that held it; the cut fonts
    are a few kB where the whole ones a page fetched were 274 kB; the stylesheet points at them."""
    from fontTools.ttLib import TTFont

    if not (SITE / "index.html").exists():
        pytest.fail("the site is not built: run `make book`")
    fonts = SITE / "_static" / "vendor" / "fontawesome" / "webfonts"
    cut = {p.stem: TTFont(str(p)).getBestCmap() for p in fonts.glob("*.woff")}
    assert set(cut) == {"fa-solid-900", "fa-regular-400", "fa-brands-400"} and not list(fonts.glob("*.woff2"))
    shown = icons_shown(SITE)
    assert len(shown) >= 10
    missing = [hex(c) for c in shown if not any(c in cmap for cmap in cut.values())]
    assert not missing, missing
    assert sum(p.stat().st_size for p in fonts.glob("*.woff")) < 20_000
    css = (SITE / "_static" / "styles" / "pydata-sphinx-theme.css").read_text()
    assert ".woff2" not in css and css.count('webfonts/fa-solid-900.woff) format("woff")') == 1
    # The theme's switch of colour modes and the search button draw icons the cut keeps.
    assert {0xF185, 0xF186, 0xF002} <= shown
