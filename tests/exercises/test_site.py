"""The page twins of the exercises' checks (lib/exercises/site.py): declared once, complete, and
shipping no answer. The browser half (tests/browser/test_site_checks.py) holds the page's verdicts
and messages to the library's."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from lib import chapters
from lib.exercises.catalogue import catalogue
from lib.exercises.site import SiteCheck, declarations, module_text, registry, typed_answer
from lib.explorers import web

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"


def page_checks_js() -> str:
    """The page's check code: checks.js, the rules and the computations chapters share (rules.js,
    twins.js), and every chapter's computations (its unit's page.js)."""
    core = [web.JS / name for name in ("checks.js", "rules.js", "twins.js")]
    return "".join(path.read_text() for path in core + [p for _, p in web.unit_files() if p.name == "page.js"])


def _said(template: str, message: str) -> bool:
    """Whether `message` is `template` with its fields filled in (an open check's fields come from the answer)."""
    pattern = "".join(re.escape(part) if i % 2 == 0 else ".*?"
                      for i, part in enumerate(re.split(r"(\{\w+(?::[^}]*)?\})", template)))
    return re.fullmatch(pattern, message, re.S) is not None


def test_every_twin_is_the_check_an_exercise_calls_and_its_computation_is_in_the_page():
    listed = {(e.module, c): e for e in catalogue() for c in e.checks}
    js = page_checks_js()
    computes = set(re.findall(r"^  (?:async )?(\w+)\(a(?:, \w+)*\) \{", js, re.M))
    for name, twin in registry().items():
        e = listed.get((twin.module, twin.check))
        assert e is not None, f"{name}: no exercise calls this check"
        assert e.kind in ("predict", "investigate"), f"{name}: a twin for a {e.kind} exercise"
        assert callable(getattr(chapters.checks(twin.module), twin.check)), name
        assert twin.shipped or twin.compute in computes, f"{name}: the page has no computation {twin.compute}"
        for key in twin.computed(*twin.load_models()).hints:
            # an open check's examples: a text's key, "key/anything" for a second example of it, or a
            # key of none where the check says a rule's sentence (check_whole_number's, ...)
            assert key.split("/")[0] in twin.texts or twin.rule == "open", f"{name}: the hint {key} has no text"
    assert set(declarations()) == {e.label for e in catalogue() if e.kind in ("predict", "investigate")
                                   and len(e.checks) == 1 and f"{e.module}.{e.checks[0]}" in registry()}


def test_a_twin_the_page_cannot_compute_ships_its_values_on_the_default_site_only():
    shipped = {label: d for label, d in declarations().items() if d.get("compute") is None}
    assert shipped, "no twin ships its values"
    for label, d in declarations(mode="hide").items():
        if label in shipped:
            assert d == {"check": d["check"], "rule": d["rule"], "live": True}, label
        else:
            assert "values" not in d and d["compute"], label
    assert all("values" in d for d in shipped.values())


def test_each_twin_judges_the_right_answer_right_and_a_known_wrong_one_with_its_text():
    for name, twin in registry().items():
        lms = twin.load_models()
        v = twin.computed(*lms)
        check = getattr(chapters.checks(twin.module), twin.check)
        # An own-text check (the learner's text, then the answer) is judged on its declared example text.
        say = (lambda a: check(twin.own_example, a)) if twin.own else (lambda a: check(*lms, a))     # noqa: E731
        assert say(v.expected), name
        assert not say(...).answered, name
        for key, wrong in v.hints.items():
            if wrong != v.expected:
                fb = say(wrong)
                assert not fb, (name, key)
                if twin.rule != "open":
                    assert fb.message == twin.texts[key].format(**v.fields, answer=wrong, shown=repr(wrong)), (name, key)
                elif key.split("/")[0] in twin.texts:
                    assert _said(twin.texts[key.split("/")[0]], fb.message), (name, key, fb.message)
        if twin.rule != "open":
            assert not say("banana" if twin.rule != "choice" else "not a word here"), name


def _spellings(value) -> set[str]:
    """How an expected value could be written in a page's script or HTML: in full, or rounded to five
    or six significant digits (fewer match unrelated numbers: 0.010 is on many pages, and a t-SNE
    layout's coordinates hold every four-digit number)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, int) or float(value) == int(value):
        return {str(int(value))}       # a whole number (_searchable leaves out those below 100)
    out = {repr(value), json.dumps(value)}
    if isinstance(value, float):
        out |= {f"{value:.{n}g}" for n in (5, 6)}
        if value == int(value):
            out.add(str(int(value)))
    return {s for s in out if len(re.sub(r"^[-0.]+|e.*$|\.", "", s)) >= 5}


def _values(expected) -> list:
    """The values an answer holds: itself, or the items of a tuple (an open check's pair or triple)."""
    return list(expected) if isinstance(expected, tuple) else [expected]


def _searchable(value) -> bool:
    """Whether finding `value` in a page means something: not a short word or a small count,
    which fill every page (a token such as 'vertical' or 'Tarso', a count such as -2)."""
    if isinstance(value, str):
        return False
    return not (float(value) == int(value) and abs(value) < 100)


def test_the_page_table_holds_no_expected_value():
    """What the page reads (exercise_checks.js) and computes with (page_checks_js) is the same on the class
    site: neither holds a value a check compares against, at any usual spelling."""
    shipped = module_text("hide") + page_checks_js()
    assert 'SOLUTIONS = "hide"' in shipped
    for name, twin in registry().items():
        v = twin.computed(*twin.load_models())
        for value in _values(v.expected):
            if _searchable(value):
                for spelling in _spellings(value):
                    assert not re.search(rf"(?<![\d.]){re.escape(spelling)}(?!\d)", shipped), (name, spelling)


def test_the_class_site_ships_no_answer():
    """On a class site (`make book SOLUTIONS=hide`) no page holds a solution, and no script the site
    ships (the course's modules, the generated tables, the data in its pages' script elements) holds
    an exercise's expected value. (A page's prose may print the same number as another quantity,
    GPT-2's embedding size is its search's multiply-adds: tests/site/test_exercise_pages.py holds the prose
    above each exercise to its answer.)"""
    table = SITE / "_static" / "explorers" / "exercise_checks.js"
    if not table.exists():
        pytest.fail("the site is not built: run `make book`")
    if 'SOLUTIONS = "hide"' not in table.read_text():
        pytest.skip("the site at _build/html is the default site; build the class site (make book SOLUTIONS=hide)")
    pages = [p.read_text(errors="replace") for p in SITE.rglob("*.html")]
    for page in pages:
        assert 'data-verdict="correct"' not in page and 'class="solution' not in page, "a solution on the class site"
    scripts = [p.read_text(errors="replace") for p in (SITE / "_static" / "explorers").rglob("*.js")]   # units/ too
    scripts += [m.group(1) for page in pages for m in re.finditer(r"<script\b[^>]*>(.*?)</script>", page, re.S)]
    text = "\n".join(scripts)
    for name, twin in registry().items():
        v = twin.computed(*twin.load_models())
        for value in _values(v.expected):
            if _searchable(value):
                for spelling in _spellings(value):
                    assert not re.search(rf"(?<![\d.]){re.escape(spelling)}(?!\d)", text), (name, spelling)


def test_a_typed_answer_reads_as_python_would():
    assert typed_answer(" 27126 ", "whole") == 27126 and isinstance(typed_answer("27126", "whole"), int)
    assert typed_answer("1_000", "number") == 1000
    assert typed_answer("0.5", "number") == 0.5 and math.isinf(typed_answer("1e400", "number"))
    assert typed_answer("banana", "number") == "banana"
    assert typed_answer("  Tarso ", "choice") == "Tarso" and typed_answer("4", "choice") == "4"
    assert typed_answer("   ", "number") is ...
    assert typed_answer(" <BOS> Pietro  chiama ", "text") == "<BOS> Pietro chiama"
    assert typed_answer("('L1H2', 3)", "tuple") == ("L1H2", 3) == typed_answer('L1H2, 3', "tuple")
    assert typed_answer("[38 28 36]", "tuple") == (38, 28, 36) == typed_answer("38, 28, 36,", "tuple")
    assert typed_answer("('L0H3',)", "tuple") == ("L0H3",) and typed_answer("()", "tuple") == ()
    assert typed_answer("1.5, x, ''", "tuple") == (1.5, "x", "")
    # As a person writes (lib.exercises.reading; tests/exercises/test_reading.py): commas between thousands
    # or a decimal comma, "and" between items.
    assert typed_answer("27,126", "whole") == 27126 and typed_answer("-1,000.5", "number") == -1000.5
    assert typed_answer("1,2", "number") == 1.2 and typed_answer("12,34", "whole") == 12.34
    assert typed_answer("1,234", "number") == "1,234"     # either 1234 or 1.234: the check asks which
    assert typed_answer("vice and Cefa", "tuple") == ("vice", "Cefa") == typed_answer("vice, and Cefa", "tuple")


def test_a_twin_refuses_an_unknown_rule_and_a_choice_without_texts():
    from lib.exercises import site
    from lib.exercises.site import Values, site_check

    with pytest.raises(ValueError, match="rule"):
        site_check("m", "c", rule="guess", compute="x", values=lambda: Values(1))
    with pytest.raises(ValueError, match="right and wrong"):
        site_check("m", "c2", rule="choice", compute="x", values=lambda: Values("a", options=("a",)))
    assert "m.c" not in site.SITE_CHECKS and "m.c2" not in site.SITE_CHECKS
