"""Every exercise doable on the website (issue 39): a predict or investigate exercise is worded for a
reader of the page, who types the answer in the box under it, with the code a second route; and what
its task names in code is on the page.

- The page's route comes first: the part of a task before the word "notebook" names no code (no
  `check.NAME`, no call such as `sample_many(...)`, no attribute such as `lm.model.W_E`) and asks for
  no Python variable ("store it in `top`"). The code route follows, after "In the notebook".
- Every `check.NAME` a task names (a prompt, a set of prompts, a picture the check module holds) has
  its value shown on the built page, in the page's own text: a prompt as its words, a set as each of
  its prompts, a grid as numpy prints it.
"""
from __future__ import annotations

import functools
import html as htmllib
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

from lib import chapters
from lib.exercises.catalogue import catalogue

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"

CODE = re.compile(r"`([^`]+)`")
# Code a reader of the page cannot run: a check's value, a call, an attribute or an index.
RUNS = re.compile(r"^check\.\w+|\b[A-Za-z_]\w*\(|\b[a-z_]\w*\.[A-Za-z_]\w*|\w\[")
# Python wording: an answer stored in a variable.
STORE = re.compile(r"\bstore\b[^.;:]*?\bin `\w+`", re.I)
NAMED = re.compile(r"`check\.(\w+)(\(([^)`]*)\))?`")

# Exercises still worded for the notebook, on pages other sessions were rewriting when this test came
# (issue 39 item 1 left for them). The test fails when one of them is fixed: take it off the list.
LEFT = {
    "ex-induction-reader",                      # chapters/part1/induction: the run of seed 3, `check.investigated_run()`
}


def page_route(task: str) -> str:
    """The part of a task a reader of the page follows: everything before the word "notebook"."""
    cut = re.search(r"notebook", task, re.I)
    return task[:cut.start()] if cut else task


def code_in_page_route(task: str) -> list[str]:
    """What the page's route of a task asks of a Python reader: code to run, a variable to fill."""
    route = page_route(task)
    return [f"`{c}`" for c in CODE.findall(route) if RUNS.search(c)] + STORE.findall(route)


def test_the_rule_finds_code_and_python_wording_in_the_page_route():
    assert code_in_page_route("Take `check.LATER_CALL` and store the token in `top`.") == [
        "`check.LATER_CALL`", "store the token in `top`"]
    assert code_in_page_route("Draw them with `sample_many(lm.model, [bos], 200)` first.") == [
        "`sample_many(lm.model, [bos], 200)`"]
    assert code_in_page_route("Compute it from the rows (`lm.model.W_E`).") == ["`lm.model.W_E`"]
    # Tokens, prompts and keys are the page's words, not code; after "notebook" code is the second route.
    assert code_in_page_route("After `<BOS> Pietro chiama`, type `vice` or `Tarso` (one of `start`, `end`) "
                              "in the box. In the notebook, `check.PROMPT` gives it; store it in `top`.") == []


def predict_and_investigate():
    return [e for e in catalogue() if e.kind in ("predict", "investigate")]


def test_every_exercise_is_worded_for_the_page_first():
    exercises = predict_and_investigate()
    assert len(exercises) >= 50
    worded = {e.label: code_in_page_route(e.task) for e in exercises}
    wrong = {label: found for label, found in worded.items() if found and label not in LEFT}
    assert not wrong, "these tasks ask a reader of the page for code before the word 'notebook': " + repr(wrong)
    fixed = sorted(label for label in LEFT if label in worded and not worded[label])
    assert not fixed, f"worded for the page now: take {fixed} off LEFT"
    assert LEFT <= set(worded), f"not exercises: {sorted(LEFT - set(worded))}"


# ----------------------------------------------------------------------------- what the task names
def shown(value) -> list[str]:
    """The texts a page shows for a value a check module holds: a prompt, each prompt of a set, a grid's
    rows as numpy prints them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, np.ndarray):
        grid = value.astype(int) if np.array_equal(value, np.round(value)) else value
        return [str(grid)]
    if isinstance(value, (list, tuple)) and value:
        return [t for v in value for t in shown(getattr(v, "text", v))]
    raise TypeError(f"the test cannot tell how a page shows a {type(value).__name__}; show it as text "
                    f"(a prompt, a set of prompts or a grid) or word the task without it")


@functools.cache
def game_model():
    import lib

    return lib.load("calling-game")


def named_value(module: str, name: str, call: str | None):
    """The value of `check.NAME` (or `check.NAME(lm)`: a call gets the calling-game model)."""
    value = getattr(chapters.checks(module), name)
    if call is None:
        return value
    return value(game_model()) if inspect.signature(value).parameters else value()


def page_text(chapter: str) -> str:
    """What a reader can read on a built page, hidden outputs and folded blocks included (one click)."""
    page = (SITE / f"{chapter}.html").read_text()
    start = page.find('<article class="bd-article"')
    article = page[start:page.find("</article>", start)] if start >= 0 else page
    article = re.sub(r"<(script|style)\b.*?</\1>", " ", article, flags=re.S | re.I)
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", article)).split())


@pytest.mark.site
def test_every_check_value_a_task_names_is_on_its_page():
    if not (SITE / "index.html").exists():
        pytest.skip("the book is not built (scripts/book.py build)")
    missing, named = [], 0
    for e in predict_and_investigate():
        uses = NAMED.findall(e.task)
        if not uses or e.label in LEFT:
            continue
        text = page_text(e.chapter)
        for name, call, _ in uses:
            named += 1
            for want in shown(named_value(e.module, name, call or None)):
                if " ".join(want.split()) not in text:
                    missing.append(f"{e.label}: check.{name} shows {want[:60]!r}...")
                    break
    assert named >= 6, "the exercises that name a check's value were not found"
    assert not missing, "named in a task, not shown on the page: " + "; ".join(missing)
