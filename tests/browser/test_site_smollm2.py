"""SmolLM2 in the built site, as a reader meets it: the button loads the model from the site (nothing from outside),
the explorers then run the reader's own text, a shared link reopens it, a second visit reads the model from the
browser's cache, and a download that fails leaves the menu of stored prompts working.

The numbers are held to the library's here on one text made from a fresh seed (the Node tests,
tests/explorers/test_smollm2.py, hold every operation of the page's model to the library on many).
"""
from __future__ import annotations

import random
import re

import pytest

PAGE = "chapters/part3/real-model.html"
PROB = 1e-3
WORDS = ["river", "lantern", "Oslo", "seven", "quietly", "the", "of", "engine", "blue", "Maria", "said", "and"]


def fresh_text() -> str:
    rng = random.Random(random.SystemRandom().randrange(2**32))
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9))) + " the"


def explorer_index(page, view: str) -> int:
    return page.evaluate("(v) => window.courseExplorers.explorers.findIndex((e) => e.spec.view === v)", view)


def load_model(page, timeout=180_000):
    button = page.get_by_role("button", name=re.compile("^Load the real model")).first
    assert re.search(r"\d+\.\d MB", button.inner_text()), button.inner_text()
    button.click()
    page.wait_for_function("window.courseSmolLM2 && ['ready', 'failed'].includes(window.courseSmolLM2.state)", timeout=timeout)
    return page.evaluate("({state: window.courseSmolLM2.state, message: window.courseSmolLM2.message, info: window.courseSmolLM2.info})")


def settle_after(page, i: int, act):
    before = page.evaluate(f"window.courseExplorers.explorers[{i}].settled")
    act()
    page.wait_for_function(f"window.courseExplorers.explorers[{i}].settled > {before}", timeout=120_000)


@pytest.fixture(scope="module")
def library():
    from lib.chapters.part3.real_model.explorers import real_page_explorer
    return real_page_explorer


def test_the_real_model_runs_a_new_text_as_the_library_does(visit, site_url, library):
    v = visit(f"{site_url}/{PAGE}")
    page = v.page
    page.wait_for_function("window.courseExplorers && window.courseExplorers.ready")
    loaded = load_model(page)
    assert loaded["state"] == "ready", loaded["message"]
    info = loaded["info"]
    assert info["memory"] <= 384 * 2**20 and info["bytes"] > 90e6 and info["fromCache"] == 0
    text = fresh_text()
    i = explorer_index(page, "real_page")
    box = page.locator(".course-explorer").nth(i).get_by_role("textbox", name="Your text")
    settle_after(page, i, lambda: box.fill(text))
    table = page.locator(".course-explorer").nth(i).locator("table.course-next-tokens")
    assert "next token" in table.locator("caption").inner_text()
    rows = [r.locator("th, td").all_inner_texts() for r in table.locator("tbody tr").all()]
    ex = library()
    want = ex.compute({**ex.defaults(), "prompt": text})
    assert [r[0] for r in rows] == [f'"{w["token"]}"' for w in want["rows"]], text
    assert all(abs(float(r[1]) - w["base"]) <= 5e-4 + PROB for r, w in zip(rows, want["rows"]))
    drawn = page.evaluate(f"window.courseExplorers.explorers[{i}].drawn.view")
    assert all(abs(a["base"] - b["base"]) < PROB for a, b in zip(drawn["rows"], want["rows"]))
    # A shared link reopens the same text: the page says so, and runs it once the model is loaded (from the cache).
    page.wait_for_function("location.search.length > 0")
    again = visit(page.url)
    status = again.page.locator(".course-real-status").nth(i)
    assert "holds a text of its own" in status.inner_text()
    second = load_model(again.page, timeout=60_000)
    assert second["state"] == "ready" and second["info"]["fromCache"] == second["info"]["bytes"]
    again.page.wait_for_function(f"window.courseExplorers.explorers[{i}].drawn && "
                                 f"window.courseExplorers.explorers[{i}].drawn.view.tokens.join('') === {text!r}", timeout=60_000)
    for visited in (v, again):
        assert (visited.console_errors, visited.outside) == ([], []), (visited.console_errors, visited.outside)


def test_bad_text_gets_one_sentence_and_the_page_goes_on(visit, site_url):
    v = visit(f"{site_url}/{PAGE}")
    page = v.page
    page.wait_for_function("window.courseExplorers && window.courseExplorers.ready")
    assert load_model(page)["state"] == "ready"
    i = explorer_index(page, "real_page")
    ex = page.locator(".course-explorer").nth(i)
    box = ex.get_by_role("textbox", name="Your text")
    message = ex.locator(".course-message")
    for text, said in (("", "empty"), ("word " * 200, "at most 128"), ("a \U00040000 b", "cannot write")):
        settle_after(page, i, lambda: box.fill(text))
        assert said in message.inner_text(), (text[:20], message.inner_text())
    settle_after(page, i, lambda: box.fill("The capital of Italy is"))
    assert message.inner_text() == ""
    assert v.console_errors == []


def test_a_refused_download_leaves_the_stored_menu_working(visit, site_url):
    v = visit(f"{site_url}/{PAGE}")
    page = v.page
    page.wait_for_function("window.courseExplorers && window.courseExplorers.ready")
    page.route(re.compile(r".*/smollm2/model-1\.bin$"), lambda route: route.fulfill(status=503, body="busy"))
    loaded = load_model(page)
    assert loaded["state"] == "failed" and "pictures the site's build made still work" in loaded["message"], loaded
    status = page.locator(".course-real-status").first
    assert status.inner_text() == loaded["message"]
    i = explorer_index(page, "real_page")
    ex = page.locator(".course-explorer").nth(i)
    menu = ex.locator("select[data-control=prompt]")
    assert menu.count() == 1, "the menu of stored prompts is still there"
    settle_after(page, i, lambda: menu.select_option(index=3))
    assert ex.locator(".course-message").inner_text() == ""
    assert [e for e in v.console_errors if "503" not in e] == []
