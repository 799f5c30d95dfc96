"""Sharing what an explorer shows (lib/explorers/js/share.js), on the built site: every control set,
the address reloaded, the same pictures; a broken or foreign address ignored; the picture saved as
SVG and PNG with its description."""
import json
import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_site_explorers import PAGES, explorers_of, move, seen, spec_of  # noqa: E402


def shared(page) -> dict:
    return {k: json.loads(v[0]) for k, v in parse_qs(urlparse(page.url).query).items()}


# Waits until the explorer has answered every move made since it had answered `before` moves.
ANSWERED = "([root, before]) => window.courseExplorers.explorers.find((e) => e.root === root).settled > before"
SETTLED = "(root) => window.courseExplorers.explorers.find((e) => e.root === root).settled"
# True once the page's address holds what the explorer's controls hold now (written once the moves pause).
SHARE = "async () => { window.courseShare = await import(new URL('../../_static/explorers/share.js', location.href)); }"
WRITTEN = """(root) => {
    const ex = window.courseExplorers.explorers.find((e) => e.root === root);
    const { changedValues } = window.courseShare;
    const values = Object.fromEntries(Object.entries(ex.controls).map(([k, c]) => [k, c.read()]));
    const changed = changedValues(ex.spec.rows.flat(), values);
    const held = new URLSearchParams(location.search).get(ex.id);
    return Object.keys(changed).length ? held === JSON.stringify(changed) : held === null;
}"""


def answered(explorer, move_it):
    """Makes a move and waits until the explorer has answered it (with a picture or a message)."""
    before = explorer.evaluate(SETTLED)
    result = move_it()
    explorer.page.wait_for_function(ANSWERED, arg=[explorer.element_handle(), before], timeout=15000)
    return result


@pytest.mark.parametrize("path", sorted(PAGES))
def test_a_link_reopens_the_same_pictures(visit, site_url, path):
    """Every control of every explorer on the page moved, once; the page's address, opened afresh,
    sets every control back where it was and draws the same pictures."""
    v = visit(f"{site_url}/{path}")
    explorers = explorers_of(v.page)
    v.page.evaluate(SHARE)
    moved = {}
    for e in range(explorers.count()):
        explorer = explorers.nth(e)
        for c in [c for row in spec_of(explorer)["rows"] for c in row]:
            back = answered(explorer, lambda: move(explorer, c))
            if seen(explorer)[1]:           # refused (the plane's axes on another point set): put back
                answered(explorer, back)
        moved[e] = seen(explorer)
        assert moved[e][1] == "", f"{path}: {moved[e][1]}"
        v.page.wait_for_function(WRITTEN, arg=explorer.element_handle(), timeout=5000)
    ids = v.page.evaluate("() => window.courseExplorers.explorers.map((e) => e.id)")
    # An explorer that runs the real model only once a reader loads it holds its opening picture: every move
    # refused and put back, nothing to share (tests/browser/test_site_smollm2.py shares a reader's own text).
    opening = v.page.evaluate("() => window.courseExplorers.explorers.map((e) => !!(e.spec.args.real && e.spec.args.real.opening))")
    state = shared(v.page)
    assert set(state) == {i for i, o in zip(ids, opening) if not o}, (state, ids)
    again = visit(v.page.url)
    reopened = explorers_of(again.page)
    assert reopened.count() == explorers.count()
    for e in range(reopened.count()):
        assert seen(reopened.nth(e)) == moved[e], f"{path}: explorer {e} reopened another picture"
        values = reopened.nth(e).evaluate("(root) => { const ex = window.courseExplorers.explorers.find((x) => x.root === root);"
                                          " return Object.fromEntries(Object.entries(ex.controls).map(([k, c]) => [k, c.read()])); }")
        for name, value in state.get(ids[e], {}).items():
            assert values[name] == value, (path, ids[e], name)
    for visited in (v, again):
        assert (visited.console_errors, visited.outside, visited.failed) == ([], [], [])


def test_a_broken_or_foreign_address_leaves_the_defaults(visit, site_url):
    path = "chapters/part3/results-page.html"
    first = visit(f"{site_url}/{path}")
    defaults = [seen(explorers_of(first.page).nth(e)) for e in range(explorers_of(first.page).count())]
    for query in ("?sampling=%7Bnot%20json", "?sampling=%7B%22no_such_control%22%3A1%7D", "?sampling=3",
                  "?other=%7B%7D"):
        v = visit(f"{site_url}/{path}{query}")
        explorers = explorers_of(v.page)
        assert [seen(explorers.nth(e)) for e in range(explorers.count())] == defaults, query
        assert v.console_errors == [], (query, v.console_errors)


def test_a_typed_temperature_travels_in_the_link(visit, site_url):
    """A temperature typed beyond the slider's range is written into the address as the number it is,
    and the link reopens it: the box, the slider pinned at its end, the same picture."""
    path = "chapters/part3/results-page.html"
    v = visit(f"{site_url}/{path}")
    v.page.evaluate(SHARE)
    explorer = explorers_of(v.page).first
    answered(explorer, lambda: explorer.get_by_label("temperature (typed)", exact=True).fill("0.0123"))
    v.page.wait_for_function(WRITTEN, arg=explorer.element_handle(), timeout=5000)
    assert shared(v.page)["sampling"] == {"temperature": 0.0123}
    picture = seen(explorer)
    assert picture[1] == "" and "at temperature 0.0123" in picture[0]
    again = visit(v.page.url)
    reopened = explorers_of(again.page).first
    assert seen(reopened) == picture
    assert reopened.get_by_label("temperature (typed)", exact=True).input_value() == "0.0123"
    assert reopened.get_by_label("temperature", exact=True).input_value() == "0"
    # A link written by hand with a temperature past the slider's other end opens at it too.
    hand = visit(f"{site_url}/{path}?sampling=%7B%22temperature%22%3A123%7D")
    opened = explorers_of(hand.page).first
    hand.page.wait_for_function("(el) => el.querySelector('.course-chart').getAttribute('aria-label').includes('temperature 123')",
                                arg=opened.element_handle())
    slider = opened.get_by_label("temperature", exact=True)
    assert slider.input_value() == slider.get_attribute("max") and seen(opened)[1] == ""
    for visited in (v, again, hand):
        assert (visited.console_errors, visited.outside, visited.failed) == ([], [], [])


def test_a_picture_is_saved_with_its_words(visit, site_url, tmp_path):
    v = visit(f"{site_url}/chapters/part1/ablation.html")
    explorer = explorers_of(v.page).first
    explorer.get_by_role("button", name="L0H3", exact=True).click()
    v.page.wait_for_function("(el) => el.querySelector('svg.course-chart').getAttribute('aria-label').includes('L0H3')",
                             arg=explorer.element_handle())
    words = explorer.locator(".course-words p").first.text_content().strip()
    with v.page.expect_download() as svg_download:
        explorer.get_by_role("button", name="save SVG").click()
    assert svg_download.value.suggested_filename == "ablation.svg"
    svg_path = tmp_path / "ablation.svg"
    svg_download.value.save_as(svg_path)
    root = ET.parse(svg_path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg" and root.find(f"{ns}desc").text == words
    charts = root.findall(f"{ns}svg")
    assert len(charts) == explorer.locator("svg.course-chart").count() > 1, "every chart of the figure"
    # Where the screen lays them out: a grid of heads stays a grid (issue 39: it was one 1418 x 3396 column).
    rows = {round(float(c.get("y"))) for c in charts}
    assert len(rows) < len(charts) and int(root.get("height")) < 2 * int(root.get("width")), (rows, root.attrib)
    assert "L0H3" in " ".join(root.find(f"{ns}text").itertext())
    with v.page.expect_download() as png_download:
        explorer.get_by_role("button", name="save PNG").click()
    png_path = tmp_path / "ablation.png"
    png_download.value.save_as(png_path)
    data = png_path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 2 * int(root.get("width")) and height == 2 * int(root.get("height"))
    assert len(data) > 5000, "a picture, not an empty canvas"
    assert v.console_errors == [], v.console_errors
