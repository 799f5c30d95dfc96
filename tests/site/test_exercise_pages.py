"""Exercises on the built website: a predict (or investigate) exercise's answer is printed nowhere
above it, at the precision its check accepts, nor held by the starting view of an explorer above it,
nor printed by an explorer above it one or two obvious moves from its defaults (a switch flipped, a
menu option, the exercise's own prompt or numbers typed in), and every exercise shows its kind."""
import functools
import html as htmllib
import itertools
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


# ----------------------------------------------------------------------------- one or two moves away
# A reader can move an explorer before answering: what it prints after one or two obvious moves is on
# the page too. The moves: a switch flipped; an option of a short menu (MENU options or fewer); the
# option of a longer menu or slider nearest a number the exercise names; a prompt the explorer offers;
# and what the exercise itself names, typed in (its prompts into a prompt box, its words into a token
# box, its numbers into a text box). Each move's view is computed by the library (the registered
# explorer of the same view, model and fixed settings) and drawn by the page's renderer (Node.js);
# its readable text is searched as the page's is.
MENU = 12
MOVES_PER_EXPLORER = 600
CODE = re.compile(r"`([^`]+)`")
RANGE = re.compile(r"between [-\d.]+ and [-\d.]+")


def named_in(task: str) -> tuple[list[float], list[str], list[str]]:
    """What an exercise's task names: its numbers, its prompts (code with spaces) and its words (code
    without)."""
    spans = CODE.findall(task)
    # "(between 0 and 1)" says what form the answer takes; it names no setting to try.
    prose = RANGE.sub(" ", CODE.sub(" ", task))
    return ([v for _, v in numbers_in(prose)],
            [s for s in spans if " " in s.strip()], [s.strip() for s in spans if s.strip() and " " not in s.strip()])


def stems(text: str) -> set[str]:
    """The words of four letters or more in `text`, cut to five letters ("divided" and "divide" meet)."""
    return {w[:5] for w in re.findall(r"[a-z_]{4,}", text.lower())}


def candidates(control: dict, task: str) -> list[tuple[object, bool]]:
    """The values a reader reaches from `control`'s default in one move, each with whether the
    exercise names it (its prompt, word or number)."""
    numbers, prompts, words = named_in(task)
    kind, default = control["kind"], control["default"]
    values = []
    if kind == "toggle":
        values = [(not default, False)]
    elif kind == "choice":
        options = control["options"]
        values = [(o, False) for o in options] if len(options) <= MENU else []
        numeric = [o for o in options if isinstance(o, (int, float)) and not isinstance(o, bool)]
        for x in numbers if numeric else ():
            near = min(numeric, key=lambda o: abs(o - x))
            if abs(near - x) <= 0.02 * abs(x):
                values.append((near, True))
    elif kind == "prompt":
        values = [(o, o in prompts) for o in control.get("options", ())] + [(p, True) for p in prompts]
    elif kind == "token":
        values = [(w, True) for w in words]
    else:   # free text: the numbers the exercise names, as a reader would type them
        values = [(f"{x:g}", True) for x in numbers]
    out = {}
    for v, named in values:
        if v != default:
            out[json.dumps(v)] = (v, out.get(json.dumps(v), (v, False))[1] or named)
    return list(out.values())


def moves(spec: dict, task: str) -> list[dict]:
    """The controls' values one or two obvious moves from the defaults, each a dict of the controls
    changed. A move is obvious for this exercise when it sets a value the exercise names, or moves a
    control whose label shares a word with the exercise (a switch "divide by √d_head" under a task
    about not dividing); any other control is left where it starts (a seed menu under a task about
    planes would print unrelated numbers that happen to fall in the accepted range)."""
    controls = [c for row in spec["rows"] for c in row]
    asked = stems(task)
    single = [[(c["name"], v) for v, named in candidates(c, task) if named or stems(c["label"]) & asked]
              for c in controls]
    out = [dict([m]) for ms in single for m in ms]
    for a, b in itertools.combinations(range(len(controls)), 2):
        out += [dict([x, y]) for x in single[a] for y in single[b]]
    return out[:MOVES_PER_EXPLORER]


@functools.cache
def _registered(view: str) -> tuple:
    from lib.explorers.registry import entries

    return tuple(e for entry in entries() if entry.view == view for e in entry.examples())


def library_explorer(spec: dict):
    """The registered explorer that computes what the page's explorer `spec` computes: the same view,
    model, fixed settings and controls (its prompts may differ: a prompt is a value). None if none."""
    names = [c["name"] for row in spec["rows"] for c in row]
    for e in _registered(spec["view"]):
        s = json.loads(json.dumps(e.spec(), allow_nan=False))
        if (s["model"], s["args"], [c["name"] for row in s["rows"] for c in row]) == (spec["model"], spec["args"], names):
            return e
    return None


def draw(views: list[tuple[str, dict]], site: Path = SITE) -> list[str]:
    """The pictures of `views`, drawn by the site's renderer as the build draws starting pictures."""
    node = shutil.which("node")
    assert node, "Node.js draws the explorers' pictures: install it"
    result = subprocess.run([node, str(ROOT / "_ext" / "prerender.mjs"), str(site / "_static" / "explorers" / "render.js")],
                            input=json.dumps([[v, d] for v, d in views]), capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def printed_unit(shown: str) -> float:
    """The step of a printed number's last digit, as a value (0.01 for "0.02" and for "2%"); 0 for a
    whole number, which is exact. A view printed coarser than the window a check accepts does not
    give its answer (a calculator's "0.02 GB" under an answer wanted within 0.001)."""
    digits = re.search(r"\.(\d+)", shown)
    if not digits:
        return 0.01 if shown.endswith("%") else 0.0
    return 10.0 ** -len(digits[1]) / (100 if shown.endswith("%") else 1)


@dataclass(frozen=True)
class MoveLeak:
    label: str
    explorer: str
    move: dict
    shown: str
    accepts: tuple[float, float]


def move_leaks(page: str, tasks: dict, site: Path = SITE) -> tuple[list[MoveLeak], int]:
    """Numbers an explorer above a predict or investigate exercise prints, one or two moves from its
    defaults, that the exercise's check would accept; and how many (exercise, explorer) pairs were
    searched. `tasks`: each exercise's task text by label (lib.exercises.catalogue)."""
    from lib.errors import CourseError

    start = page.find('<article class="bd-article"')
    article = page[start:page.find("</article>", start)] if start >= 0 else page
    exercises = [m for m in re.finditer(r'<div class="(?P<classes>[^"]*)" id="(?P<label>[^"]+)"', article)
                 if "exercise" in m["classes"].split() and set(m["classes"].split()) & {"predict", "investigate"}]
    specs = [(m.start(), json.loads(htmllib.unescape(m.group(1)) if "&quot;" in m.group(1) else m.group(1)))
             for m in SPEC.finditer(article)]
    jobs = []   # (label, accepts, explorer's view, move, the view computed)
    pairs = 0
    for i, ex in enumerate(exercises):
        end = exercises[i + 1].start() if i + 1 < len(exercises) else len(article)
        accepted = re.search(r'data-verdict="correct" data-accepts="(\S+) (\S+)"', article[ex.end():end])
        if not accepted or small_count(float(accepted[1]), float(accepted[2])):
            continue
        for at, spec in specs:
            explorer = library_explorer(spec) if at < ex.start() else None
            if explorer is None:
                continue
            pairs += 1
            defaults = {c["name"]: c["default"] for row in spec["rows"] for c in row}
            for move in moves(spec, tasks.get(ex["label"], "")):
                try:
                    view = explorer.compute({**defaults, **move})
                except CourseError:
                    continue     # a value the explorer refuses: the reader sees a message, not a view
                jobs.append((ex["label"], (float(accepted[1]), float(accepted[2])), spec["view"], move, view))
    if not jobs:
        return [], pairs
    pictures = draw([(view, json.loads(json.dumps(data, allow_nan=False))) for _, _, view, _, data in jobs], site)
    found = []
    for (label, (lo, hi), view, move, _), picture in zip(jobs, pictures):
        for shown, value in numbers_in(readable_text(picture)):
            if lo <= value <= hi and printed_unit(shown) <= max(hi - lo, 1e-12):
                found.append(MoveLeak(label, view, move, shown, (lo, hi)))
                break
    return found, pairs


def _cat_sat_page(unscaled_first: bool) -> tuple[str, dict]:
    """A page with the one-head chapter's explorer and its undivided-scores predict, in either order."""
    from lib.chapters.part1.one_head.explorers import cat_sat_explorer
    from lib.explorers.page import html
    from lib.chapters.part1.one_head import checks as one_head

    e = cat_sat_explorer()
    expected = one_head.SAT_ON_CAT.computed().expected
    explorer = html(e, e.compute(e.defaults()))
    exercise = _exercise("ex-unscaled", "predict", (expected - 0.003, expected + 0.003))
    task = "How much would sat attend to cat if the scores were not divided by sqrt(d_head)?"
    blocks = (exercise, explorer) if unscaled_first else (explorer, exercise)
    return _page(*blocks), {"ex-unscaled": task}


def test_the_move_finder_finds_an_answer_one_switch_away():
    if not (SITE / "_static" / "explorers" / "render.js").exists():
        pytest.fail("the site is not built: run `make book`")
    found, pairs = move_leaks(*_cat_sat_page(unscaled_first=False))
    assert pairs == 1 and found, "the cat-sat head with its switch off prints sat's weight on cat"
    assert {x.move.get("scaled") for x in found} == {False}
    found, pairs = move_leaks(*_cat_sat_page(unscaled_first=True))
    assert pairs == 0 and found == [], "an explorer below the exercise is where its answer is checked"


def test_no_answer_is_one_or_two_moves_away_in_an_explorer_above():
    from lib.exercises.catalogue import catalogue

    pages = built_chapters()
    if not pages:
        pytest.fail("the site is not built: run `make book`")
    tasks = {e.label: e.task for e in catalogue()}
    all_leaks, pairs = [], 0
    for path in pages:
        found, n = move_leaks(path.read_text(), tasks)
        all_leaks += [(path.name, x) for x in found]
        pairs += n
    assert not all_leaks, "answers an explorer above prints after a move: " + "; ".join(
        f"{page} {x.label}: the {x.explorer} explorer with {x.move} prints {x.shown} (the check accepts "
        f"{x.accepts[0]:.6g} to {x.accepts[1]:.6g})" for page, x in all_leaks)
    assert pairs >= 1, "no explorer above a numeric exercise was searched"


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
