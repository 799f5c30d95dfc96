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


def move(control):
    """Change one control the way a reader would; returns a description for failure messages."""
    tag = control.evaluate("el => el.tagName")
    kind = control.get_attribute("type")
    if tag == "BUTTON":
        control.click()
        return f"toggle {control.inner_text()}"
    if kind == "range":
        control.focus()
        at_end = control.evaluate("el => +el.value === +el.max")
        control.press("ArrowLeft" if at_end else "ArrowRight")
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
            before = figure_and_message(explorer)
            what = move(control)
            after = figure_and_message(explorer)
            assert after != before, f"{path}: moving the {what} changed nothing"
            if control.evaluate("el => el.tagName") == "BUTTON":
                control.click()      # back on: the next toggle starts from the default again
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
