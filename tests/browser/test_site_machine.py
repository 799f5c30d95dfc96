"""Part 1's map on the built site: the rules checker and the whole machine at phone width, and the
map answering a click on one of its parts."""
import pytest

PAGES = ("chapters/part1/index.html", "chapters/part1/the-game.html")

# Every word of the explorer's pictures as the screen shows it: its font size times the picture's scale.
TEXT_SIZES = """(root) => [...root.querySelectorAll('.course-figure svg')].flatMap((svg) => {
    const scale = svg.getBoundingClientRect().width / +svg.getAttribute('width');
    return [...svg.querySelectorAll('text')].map((t) => [t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]);
})"""


@pytest.mark.parametrize("path", PAGES)
def test_at_phone_width_the_map_and_the_checker_read(browser, site_url, path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                  has_touch=True)
    page = context.new_page()
    page.goto(f"{site_url}/{path}")
    page.wait_for_function("() => window.courseExplorers && window.courseExplorers.ready")
    explorer = page.locator(".course-explorer.course-live").first
    sizes = explorer.evaluate(TEXT_SIZES)
    assert len(sizes) > 20, sizes
    small = [(t, round(s, 1)) for t, s in sizes if s < 11]
    assert not small, f"{path}: words below 11 px at 390 px: {small[:8]}"
    assert explorer.evaluate("(root) => root.scrollWidth - root.clientWidth") <= 1
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    context.close()


def test_a_click_on_the_map_shows_that_part(visit, site_url):
    v = visit(f"{site_url}/chapters/part1/index.html")
    v.page.wait_for_function("() => window.courseExplorers && window.courseExplorers.ready")
    explorer = v.page.locator(".course-explorer.course-live").first
    show = explorer.get_by_label("show", exact=True)
    for part in ("MLP1", "readout", "L1H2"):
        explorer.locator(f'[data-choose="part={part}"]').first.click()
        v.page.wait_for_function("([el, part]) => el.querySelector('select[data-control=part]').value !== '' && "
                                 "el.querySelector('[data-choose=\"part=' + part + '\"] rect').getAttribute('stroke-width') === '3'",
                                 arg=[explorer.element_handle(), part])
        assert show.evaluate("(s) => s.options[s.selectedIndex].textContent") == {"MLP1": "MLP 1", "readout": "read-out",
                                                                                  "L1H2": "L1H2"}[part]
    # Every part that a click presses, the keyboard reaches (Tab) and presses (Enter, Space) too.
    parts = explorer.locator("[data-choose]")
    assert parts.count() >= 10 and all(parts.nth(i).get_attribute("tabindex") == "0" and
                                       parts.nth(i).get_attribute("role") == "button" for i in range(parts.count()))
    for part, key, shown in (("MLP0", "Enter", "MLP 0"), ("L0H1", " ", "L0H1")):
        explorer.locator(f'[data-choose="part={part}"]').first.focus()
        v.page.keyboard.press(key)
        v.page.wait_for_function("([el, shown]) => { const s = el.querySelector('select[data-control=part]');"
                                 " return s.options[s.selectedIndex].textContent === shown; }",
                                 arg=[explorer.element_handle(), shown])
    explorer.locator('[data-choose="part=L1H2"]').first.click()
    v.page.wait_for_function("(el) => [...el.querySelectorAll('svg')].some((s) => (s.getAttribute('aria-label') || '')"
                             ".includes('head L1H2'))", arg=explorer.element_handle())
    assert "head L1H2" in explorer.evaluate("(el) => [...el.querySelectorAll('svg')].map((s) => s.getAttribute('aria-label')).join(' ')")
    assert (v.console_errors, v.outside, v.failed) == ([], [], []), (v.console_errors, v.outside, v.failed)
