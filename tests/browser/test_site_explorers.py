"""The explorers on the built site, with no kernel: every control changes what the reader sees.

Each page's explorers are found by their class; every control of each is moved (a slider by the
keyboard, a menu to another option, a toggle by a click), and the figure must change or a message
must appear, within the page and without any request leaving 127.0.0.1.
"""
import pytest

# Every chapter with an explorer, and how many explorers it has.
PAGES = {
    "chapters/part1/circuits.html": 1,
    "chapters/part1/shapes-and-cache.html": 1,
    "chapters/part1/ablation.html": 1,
    "chapters/part2/three-ways.html": 2,
    "chapters/part2/residual-path.html": 1,
    "chapters/part2/real-language.html": 1,
    "chapters/part3/search-by-hand.html": 1,
    "chapters/part3/results-page.html": 1,
    "chapters/part3/lever.html": 1,
}


def figure_and_message(explorer):
    return (explorer.locator(".course-figure").inner_html(), explorer.locator(".course-message").inner_text())


def options_of(control) -> int:
    """How many values a control has (a toggle has two)."""
    if control.evaluate("el => el.tagName") == "BUTTON":
        return 2
    if control.get_attribute("type") == "range":
        return int(control.get_attribute("max")) + 1
    return control.evaluate("el => el.options.length")


def move(control):
    """Change one control by one step, the way a reader would; returns a description."""
    tag = control.evaluate("el => el.tagName")
    if tag == "BUTTON":
        control.focus()
        control.press("Space")          # by the keyboard, as with the sliders
        return f"toggle {control.inner_text()}"
    if control.get_attribute("type") == "range":
        control.focus()
        at_end = control.evaluate("el => +el.value === +el.max")
        control.press("Home" if at_end else "ArrowRight")
        return f"slider {control.get_attribute('id')}"
    count = control.evaluate("el => el.options.length")
    index = control.evaluate("el => el.selectedIndex")
    control.select_option(index=(index + 1) % count)
    return f"menu {control.get_attribute('id')}"


@pytest.mark.parametrize("path", sorted(PAGES))
def test_every_control_changes_the_picture(visit, site_url, path):
    v = visit(f"{site_url}/{path}")
    explorers = v.page.locator(".course-static")
    assert explorers.count() == PAGES[path]
    v.page.wait_for_selector(".course-static-live")      # the script has started every explorer
    for e in range(explorers.count()):
        explorer = explorers.nth(e)
        # Readable without JavaScript: the default picture is in the page, described in words.
        chart = explorer.locator(".course-figure svg.course-chart, .course-figure .course-kv-result").first
        assert chart.count() == 1
        controls = explorer.locator("[data-control]")
        assert controls.count() >= 1
        for i in range(controls.count()):
            control = controls.nth(i)
            # Labelled for screen readers: a <label for> around it, or a button's own text.
            name = control.evaluate("el => (el.labels && el.labels.length ? el.labels[0].innerText : el.innerText)")
            assert name.strip(), f"{path}: control {i} has no label"
            # From the default picture, step through the control's values until the picture changes
            # (a step may rightly change nothing: the next stop can round to the same page); a
            # control that never changes it fails. Then the control goes back to its default.
            start = control.evaluate("el => el.tagName === 'BUTTON' ? el.getAttribute('aria-pressed') "
                                     ": (el.type === 'range' ? el.value : String(el.selectedIndex))")
            before = figure_and_message(explorer)
            for _ in range(options_of(control) - 1):
                what = move(control)
                if figure_and_message(explorer) != before:
                    break
            assert figure_and_message(explorer) != before, f"{path}: moving the {what} changed nothing"
            control.evaluate("""(el, start) => {
                if (el.tagName === 'BUTTON') { if (el.getAttribute('aria-pressed') !== start) el.click(); return; }
                if (el.type === 'range') { el.value = start; el.dispatchEvent(new Event('input')); return; }
                el.selectedIndex = +start; el.dispatchEvent(new Event('change'));
            }""", start)
            assert figure_and_message(explorer) == before, f"{path}: the {what} did not go back to its picture"
    assert (v.console_errors, v.outside, v.failed) == ([], [], []), (v.console_errors, v.outside, v.failed)


def test_a_refused_value_keeps_the_picture_and_says_why(visit, site_url):
    v = visit(f"{site_url}/chapters/part2/three-ways.html")
    v.page.wait_for_selector(".course-static-live")
    tsne = v.page.locator(".course-static").nth(1)
    slider = tsne.locator("input[type=range]").first
    before = tsne.locator(".course-figure").inner_html()
    slider.focus()
    slider.press("End")                      # perplexity 60: more than the 28 points allow
    assert "below the number of points (28)" in tsne.locator(".course-message").inner_text()
    assert tsne.locator(".course-figure").inner_html() == before
    assert tsne.locator(".course-message").get_attribute("role") == "alert"


def test_without_javascript_the_default_picture_is_there(browser, site_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
    page.goto(f"{site_url}/chapters/part2/three-ways.html")
    charts = page.locator(".course-static .course-figure svg.course-chart")
    assert charts.count() == 3          # the plane, and the two t-SNE seeds
    assert charts.first.is_visible() and "Concept plane" in charts.first.get_attribute("aria-label")
    context.close()
