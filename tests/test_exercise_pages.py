"""Exercises on the built website: a predict (or investigate) exercise's answer is printed nowhere
above it, at the precision its check accepts, nor held by the starting view of an explorer above it,
and every exercise shows its kind."""
import html as htmllib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"

# A whole-number answer below this is not searched for: small counts ("3", "Part 2", "layer 0")
# fill every page, so a hit would say nothing. CONTRIBUTING.md asks authors to read for those.
SMALL_WHOLE = 100
NUMBER = re.compile(r"(?<![\w.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+−]?\d+)?%?")


@dataclass(frozen=True)
class Leak:
    label: str
    shown: str
    accepts: tuple[float, float]


def numbers_in(text: str) -> list[tuple[str, float]]:
    """Every number a reader sees in `text`, as (as printed, value); a percentage also as a share."""
    out = []
    for m in NUMBER.finditer(text):
        token = m.group(0)
        raw = token.replace("−", "-").replace(",", "").rstrip("%")
        try:
            value = float(raw)
        except ValueError:
            continue
        out.append((token, value))
        if token.endswith("%"):
            out.append((token, value / 100))
    return out


def readable_text(fragment: str) -> str:
    """What a reader can read in an HTML fragment: its text plus alt texts, labels and titles;
    not scripts or styles (an explorer's precomputed data is not printed on the page)."""
    fragment = re.sub(r"<(script|style)\b.*?</\1>", " ", fragment, flags=re.S | re.I)
    attrs = " ".join(m.group(2) for m in re.finditer(r'\b(alt|aria-label|title)="([^"]*)"', fragment))
    text = re.sub(r"<[^>]+>", " ", fragment)
    return htmllib.unescape(text + " " + attrs)


SPEC = re.compile(r'<script type="application/json" class="course-explorer-spec">(.*?)</script>', re.S)


def view_numbers(view, where: str = "") -> list[tuple[str, float]]:
    """The numbers an explorer's starting view holds, at full precision, as (where, value): every
    number of the view the renderer prints or describes (a page of probabilities, a lens's stages, a
    calculator's total), not the cells of a numeric matrix (a pattern or a map, drawn as colours)."""
    if isinstance(view, bool) or view is None or isinstance(view, str):
        return []
    if isinstance(view, (int, float)):
        return [(where, float(view))]
    if isinstance(view, dict):
        return [n for k, v in view.items() for n in view_numbers(v, f"{where}.{k}")]
    if isinstance(view, list):
        if view and all(isinstance(r, list) and r and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                          for x in r) for r in view):
            return []   # a matrix of numbers: a heatmap's cells
        return [n for i, v in enumerate(view) for n in view_numbers(v, f"{where}[{i}]")]
    return []


def explorer_numbers(fragment: str) -> list[tuple[str, float]]:
    """The numbers of the starting views of every explorer in an HTML fragment (the build computed
    each view from the explorer's default values through the registry, and drew it from them)."""
    out = []
    for m in SPEC.finditer(fragment):
        spec = json.loads(htmllib.unescape(m.group(1)) if "&quot;" in m.group(1) else m.group(1))
        out += [(f"the {spec.get('view')} explorer's starting view{where}", value)
                for where, value in view_numbers(spec.get("default"))]
    return out


def small_count(lo: float, hi: float) -> bool:
    """Whether the accepted answers are small whole numbers: one count, or a count give or take a
    few (an estimate of how many tokens...). Small numbers fill every page, so they are not searched."""
    return lo == int(lo) and hi == int(hi) and abs(lo) < SMALL_WHOLE and abs(hi) < SMALL_WHOLE


def leaks(page: str, kinds=("predict", "investigate")) -> tuple[list[Leak], int]:
    """Numbers printed above an exercise of `kinds` that its check would accept, and how many such
    exercises had a numeric answer to look for. The accepted interval comes from the right answer's
    verdict in the exercise's own solution (data-accepts)."""
    start = page.find('<article class="bd-article"')
    article = page[start:page.find("</article>", start)] if start >= 0 else page
    exercises = [m for m in re.finditer(r'<div class="(?P<classes>[^"]*)" id="(?P<label>[^"]+)"', article)
                 if "exercise" in m["classes"].split()]
    found, numeric = [], 0
    for i, ex in enumerate(exercises):
        if not set(ex["classes"].split()) & set(kinds):
            continue
        end = exercises[i + 1].start() if i + 1 < len(exercises) else len(article)
        accepted = re.search(r'data-verdict="correct" data-accepts="(\S+) (\S+)"', article[ex.end():end])
        if not accepted:
            continue
        lo, hi = float(accepted[1]), float(accepted[2])
        if small_count(lo, hi):
            continue
        numeric += 1
        above = article[:ex.start()]
        for shown, value in numbers_in(readable_text(above)) + explorer_numbers(above):
            if lo <= value <= hi:
                found.append(Leak(ex["label"], shown, (lo, hi)))
    return found, numeric


def _page(*blocks: str) -> str:
    return '<article class="bd-article">' + "".join(blocks) + "</article>"


def _exercise(label, kind, accepts):
    return (f'<div class="exercise {kind} admonition" id="{label}"><p>task</p></div>'
            f'<div class="solution dropdown admonition"><div class="course-feedback" data-verdict="correct" '
            f'data-accepts="{accepts[0]} {accepts[1]}">Correct</div></div>')


def test_the_leak_finder_finds_a_printed_answer():
    above = "<p>The weight is 0.2857, and 12.5% of the spread; 38,597,376 weights.</p><script>0.5</script>"
    assert [x.shown for x in leaks(_page(above, _exercise("a", "predict", (0.2847, 0.2867))))[0]] == ["0.2857"]
    assert [x.shown for x in leaks(_page(above, _exercise("b", "predict", (0.124, 0.126))))[0]] == ["12.5%"]
    assert [x.shown for x in leaks(_page(above, _exercise("c", "predict", (38597376, 38597376))))[0]] == ["38,597,376"]
    assert leaks(_page(above, _exercise("d", "predict", (0.49, 0.51))))[0] == [], "script data is not printed"
    assert leaks(_page(above, _exercise("e", "predict", (0.29, 0.30))))[0] == [], "0.2857 is outside"
    assert leaks(_page(above, _exercise("f", "write", (0.28, 0.29))))[0] == [], "only predict and investigate"
    assert leaks(_page("<p>3 of 5</p>", _exercise("s", "predict", (1, 5))))[0] == [], "a small count, give or take 2"
    assert leaks(_page("<p>3.5</p>", _exercise("t", "predict", (3.4, 3.6))))[0][0].shown == "3.5"
    assert leaks(_page('<img alt="P = 0.75">', _exercise("g", "predict", (0.7, 0.8))))[0][0].shown == "0.75"
    # Below the exercise, or in its own solution, the answer may appear.
    assert leaks(_page(_exercise("h", "predict", (0.7, 0.8)), "<p>0.75</p>"))[0] == []


def _explorer(view: str, default) -> str:
    return (f'<div class="course-explorer course-live"><script type="application/json" class="course-explorer-spec">'
            f'{json.dumps({"view": view, "default": default})}</script><div class="course-figure"></div></div>')


def test_the_leak_finder_finds_an_answer_in_an_explorers_starting_view():
    calculator = _explorer("kv_cache", {"sizes": [12, 1024, 12, 64], "bytes": 75497472.0})
    lens = _explorer("lens", {"top": [[["Tarso", 0.93127], ["Cefa", 0.01]]], "pattern": [[1.0, 0.0], [0.4123, 0.5877]]})
    found = leaks(_page(calculator, _exercise("a", "investigate", (75497471.0, 75497473.0))))[0]
    assert [x.label for x in found] == ["a"] and "kv_cache" in found[0].shown
    assert leaks(_page(lens, _exercise("b", "predict", (0.931, 0.932))))[0], "a probability the lens lists"
    assert leaks(_page(lens, _exercise("c", "predict", (0.412, 0.413))))[0] == [], "a heatmap's cell is a colour"
    assert leaks(_page(_exercise("d", "predict", (0.931, 0.932)), lens))[0] == [], "an explorer below"


def built_chapters():
    return sorted((SITE / "chapters").rglob("*.html")) if (SITE / "chapters").exists() else []


def test_no_predict_answer_is_printed_above_its_exercise():
    pages = built_chapters()
    if not pages:
        pytest.fail("the site is not built: run `make book`")
    all_leaks, numeric = [], 0
    for path in pages:
        found, n = leaks(path.read_text())
        all_leaks += [(path.name, x) for x in found]
        numeric += n
    assert not all_leaks, "answers printed above their exercise: " + "; ".join(
        f"{page} {x.label}: {x.shown} (the check accepts {x.accepts[0]:.6g} to {x.accepts[1]:.6g})"
        for page, x in all_leaks)
    assert numeric >= 1, "no numeric predict exercise was found to test"


def test_every_exercise_of_the_example_chapter_names_its_kind():
    from lib.exercises.catalogue import catalogue
    page = SITE / "chapters" / "part3" / "results-page.html"
    if not page.exists():
        pytest.fail("the site is not built: run `make book`")
    text = page.read_text()
    listed = [e for e in catalogue() if e.chapter == "chapters/part3/results-page"]
    kinds = [e.kind for e in listed]
    assert kinds.count("write") >= 1 and kinds.count("predict") >= 1 and None not in kinds
    for e in listed:
        classes = re.search(rf'<div class="([^"]*)" id="{e.label}"', text)
        assert classes and {"exercise", e.kind} <= set(classes[1].split()), e.label


def test_the_stylesheet_labels_every_kind():
    from lib.exercises.catalogue import KINDS
    css = (ROOT / "_assets" / "course.css").read_text()
    for kind, label in KINDS.items():
        assert re.search(rf'\.exercise\.{kind}\b[^{{]*::after\s*{{[^}}]*content:\s*"{re.escape(label)}"', css), kind
