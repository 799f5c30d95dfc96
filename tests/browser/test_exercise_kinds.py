"""The website shows each exercise's kind to the reader, beside its number, in a real browser."""
from lib.exercises.catalogue import KINDS, catalogue

LABEL = """el => getComputedStyle(el.querySelector('.admonition-title .caption-number'), '::after').content"""


def test_each_exercise_shows_its_kind(visit, site_url):
    listed = [e for e in catalogue() if e.chapter == "chapters/part3/results-page"]
    v = visit(f"{site_url}/chapters/part3/results-page.html")
    for e in listed:
        box = v.page.locator(f"div.exercise#{e.label}")
        assert box.is_visible(), e.label
        shown = box.evaluate(LABEL).strip('"')
        assert shown == KINDS[e.kind], (e.label, shown)
        # The label sits on the title's line, and the title still reads as the exercise's number.
        assert box.locator(".admonition-title").inner_text().startswith("Exercise")
    assert v.console_errors == []

