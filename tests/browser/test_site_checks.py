"""The answer boxes on the website give the library's verdicts and messages, word for word.

For every exercise whose check declares a page twin (lib/exercises/site.py, the registry), the test
types into the built page the right answer, each known wrong one, a plain wrong one and garbage,
presses Check, and holds the verdict and message the page shows to what the library's check says
about the same typed text (read as lib.exercises.site.typed_answer reads it).
"""
from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pytest

from lib.exercises.catalogue import ROOT, catalogue
from lib.exercises.site import twins_by_label

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from answer_cases import answers, library_says  # noqa: E402


SITE = ROOT / "_build" / "html"


# In the page: for each text, put it in the box, press Check, wait for the verdict (30 s at most) and
# read it as a reader sees it.
PRESS_EACH = """async (box, texts) => {
  const input = box.querySelector("input[data-exercise]"), button = box.querySelector("button.course-check-button");
  const out = box.querySelector(".course-verdict");
  const shown = [];
  for (const text of texts) {
    out.dataset.verdict = "";
    input.value = text;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    button.click();
    const start = performance.now();
    while (out.dataset.verdict === "") {
      if (performance.now() - start > 30000) throw new Error(`no verdict for ${JSON.stringify(text)}`);
      await new Promise((r) => setTimeout(r, 2));
    }
    shown.push([out.dataset.verdict, out.innerText]);
  }
  return shown;
}"""


def _pages():
    where = {e.label: e.chapter for e in catalogue()}
    pages = defaultdict(list)
    for label, twin in twins_by_label().items():
        pages[where[label]].append((label, twin))
    return sorted(pages.items())


PAGES = _pages()


CLASS_SITE = 'SOLUTIONS = "hide"' in (
    (SITE / "_static" / "explorers" / "exercise_checks.js").read_text()
    if (SITE / "_static" / "explorers" / "exercise_checks.js").exists() else "")


def test_the_registry_covers_exercises():
    from lib.exercises.site import coverage
    computed, shipped, total = coverage()
    # every predict and investigate exercise has a page twin but those that say they are notebook exercises (the
    # page gives those no box); all but a few compute in the page
    notebook = [e.label for e in catalogue() if e.kind in ("predict", "investigate") and e.label not in twins_by_label()]
    assert computed + shipped == len(twins_by_label()) == total - len(notebook) and computed >= 50, (computed, shipped, total)
    for e in catalogue():
        assert (e.label in notebook) == (e.kind in ("predict", "investigate") and "notebook exercise" in e.task), e.label


@pytest.mark.parametrize("chapter,entries", PAGES, ids=[c.rsplit("/", 1)[-1] for c, _ in PAGES])
def test_the_page_checks_as_the_library_does(visit, site_url, chapter, entries):
    v = visit(f"{site_url}/{chapter}.html")
    v.page.wait_for_function("window.courseChecks && window.courseChecks.ready", timeout=30_000)
    if any(twin.own for _, twin in entries):
        # A check of the learner's own text runs the real model in the page: loaded once, by the box's button.
        v.page.locator("div.course-check .course-real-load").first.click()
        v.page.wait_for_function("window.courseSmolLM2 && window.courseSmolLM2.state === 'ready'", timeout=300_000)
    for label, twin in entries:
        if CLASS_SITE and twin.shipped:
            # The class site ships no answer: a check the page cannot compute is run live.
            note = v.page.locator(f'.course-live-note[data-exercise="{label}"]')
            assert note.count() == 1 and "Binder" in note.inner_text(), label
            continue
        lm = twin.load_models()
        values = twin.computed(*lm)
        box = v.page.locator(f'div.course-check[data-exercise="{label}"]')
        assert box.count() == 1, label
        typed = answers(twin, values)
        # The first text (the right answer) is typed and checked as a reader does it; the others are put
        # in the same box and checked by the same button, in one call into the page (six round trips a
        # text proved nothing more: the file took 172 CPU-s that way, 102 this way).
        if twin.own:
            box.locator("input.course-own-text").fill(twin.own_example)
        box.locator("input[data-exercise]").fill(typed[0])
        box.locator("button.course-check-button").click()
        out = box.locator(".course-verdict")
        v.page.wait_for_function("el => el.dataset.verdict !== ''", arg=out.element_handle(), timeout=30_000)
        shown = [(out.get_attribute("data-verdict"), out.inner_text())]
        shown += box.evaluate(PRESS_EACH, typed[1:])
        assert len(shown) == len(typed), label
        for text, (got_verdict, got_text) in zip(typed, shown):
            verdict, message = library_says(twin, text, lm)
            mark = {"correct": "Correct", "not yet": "Not yet", "not answered": "Not answered yet"}[verdict]
            assert (got_verdict, got_text) == (verdict, f"{mark}: {message}"), (label, text)
        # The right answer is right, and at least one wrong answer is not.
        assert library_says(twin, typed[0], lm)[0] == "correct", label
    assert v.console_errors == []


def test_a_write_exercise_says_how_to_run_it_live(visit, site_url):
    write = next(e for e in catalogue() if e.kind == "write")
    v = visit(f"{site_url}/{write.chapter}.html")
    v.page.wait_for_function("window.courseChecks && window.courseChecks.ready", timeout=30_000)
    note = v.page.locator(f'.course-live-note[data-exercise="{write.label}"]')
    assert "Binder" in note.inner_text() and "JupyterLab" in note.inner_text()
    # It says why it is a notebook exercise, not only where the notebook is.
    assert "notebook exercise" in note.inner_text() and "Python function" in note.inner_text()


def test_a_notebook_exercise_has_no_box_and_says_why(visit, site_url):
    """A predict or investigate exercise the page cannot check (it says it is a notebook exercise) gets a note,
    not a box that could only check a guess."""
    notebook = [e for e in catalogue() if e.kind in ("predict", "investigate") and e.label not in twins_by_label()]
    assert notebook
    for e in notebook[:1]:
        v = visit(f"{site_url}/{e.chapter}.html")
        v.page.wait_for_function("window.courseChecks && window.courseChecks.ready", timeout=30_000)
        assert v.page.locator(f'div.course-check[data-exercise="{e.label}"]').count() == 0
        note = v.page.locator(f'.course-live-note[data-exercise="{e.label}"]').inner_text()
        assert "notebook exercise" in note and "Binder" in note, note
