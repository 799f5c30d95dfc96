"""The explorers on the built site, with no kernel: the model runs in the page, every control works.

Controls are found as a reader finds them, by their labels (or a button's name); a picture is read
through its description in words (its aria-label), never through its title. Every page is served
from 127.0.0.1 and may not reach anything else.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def explorer_pages() -> dict[str, int]:
    """Every chapter that shows an explorer, and how many: read from the chapters' code, where a
    cell's last line calls a registered explorer (so a new explorer or page touches no list here)."""
    from lib.explorers.definition import REGISTRY, registered_views

    registered_views()      # every unit's explorers loaded, registered
    call = re.compile(r"^(" + "|".join(REGISTRY) + r")\(", re.M)
    pages = {}
    for path in sorted((ROOT / "chapters").rglob("*.md")):
        found = call.findall(path.read_text())
        if found:
            pages[str(path.relative_to(ROOT).with_suffix(".html"))] = len(found)
    return pages


PAGES = explorer_pages()


def test_every_registered_explorer_is_on_a_page():
    from lib.explorers.definition import REGISTRY

    shown = {name for path in PAGES for name in re.findall(r"^(\w+)\(",
                                                           (ROOT / path).with_suffix(".md").read_text(), re.M)}
    assert set(REGISTRY) <= shown, sorted(set(REGISTRY) - shown)


# A value each text control can take that differs from its default (and that the library accepts).
OTHER_TEXT = {"prompt": "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo Tarso <SEP> Paolo chiama", "top_k": "3",
              "top_p": "0.5", "seed": "5", "position": "1", "track": "vice", "toward": "Cefa", "against": "Pietro",
              "axis_1": "Tarso - Paolo", "axis_2": "capo", "layers": "12", "context": "1024", "heads": "8",
              "d_head": "64", "bytes": "1", "clean": "<BOS> Pietro chiama 4 <SEP> 4 chiama Pietro",
              "corrupted": "<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo", "target": "capo",
              "embed_the": "1 0 0 0 0", "embed_cat": "0 2 0 1 0", "embed_sat": "0.5 0.5 0.5 0.5 0.5", "query": "2",
              "sequence": "a b c d e a b c d e", "min_p": "0.1"}


def _stops():
    from lib.explorers.definition import TEMPERATURES
    return list(TEMPERATURES)


TEMPERATURE_STOPS = _stops()


def explorers_of(page):
    page.wait_for_function("() => window.courseExplorers && window.courseExplorers.ready")
    return page.locator(".course-explorer.course-live")


def spec_of(explorer) -> dict:
    return json.loads(explorer.locator("script.course-explorer-spec").text_content())


SEEN = """(el) => {
    const f = el.querySelector('.course-figure'), charts = [...f.querySelectorAll('svg.course-chart')];
    const pick = f.querySelector('.course-pick');
    const words = (pick ? pick.innerText + ' ' : '') + (charts.length ? charts.map((c) => c.getAttribute('aria-label')).join(' | ')
                                                                      : f.innerText);
    return [words, el.querySelector('.course-message').innerText];
}"""


def seen(explorer) -> tuple[str, str]:
    """What a reader sees: the pictures' descriptions (or the KV result), and the message line."""
    return tuple(explorer.evaluate(SEEN))


def control(explorer, c):
    if c["kind"] == "toggle":
        return explorer.get_by_role("button", name=c["label"], exact=True)
    return explorer.get_by_label(c["label"], exact=True)


def wait_for_change(explorer, before, what="", timeout=5000):
    try:
        explorer.page.wait_for_function(f"([el, before]) => {{ const now = ({SEEN})(el); "
                                        "return now[0] !== before[0] || now[1] !== before[1]; }",
                                        arg=[explorer.element_handle(), list(before)], timeout=timeout)
    except Exception:
        raise AssertionError(f"{what}: nothing changed in {timeout} ms") from None


def move(explorer, c):
    """Change one control the way a reader would; returns how to put it back."""
    el = control(explorer, c)
    if c["kind"] == "toggle":
        el.focus()
        el.press("Space")
        return lambda: el.press("Space")
    if (c["kind"] == "choice" and c["slider"]) or c["kind"] == "number":
        el.focus()
        at_end = el.evaluate("e => +e.value === +e.max")
        el.press("Home" if at_end else "ArrowRight")
        start = c["options"].index(c["default"])     # a number's default is one of its slider's stops
        return lambda: el.evaluate("(e, v) => { e.value = v; e.dispatchEvent(new Event('input')); }", str(start))
    if c["kind"] == "choice" or c.get("precomputed"):      # a menu (what the site's build computed)
        at = c["options"].index(c["default"])
        el.select_option(index=(at + 1) % len(c["options"]))
        return lambda: el.select_option(index=at)
    # Put back to what the box held (a control that follows a choice, such as the plane's axes after the
    # word set changed, may no longer hold its default).
    held = el.input_value()
    el.fill(OTHER_TEXT[c["name"]])
    return lambda: el.fill(held)


@pytest.mark.parametrize("path", sorted(PAGES))
def test_every_control_changes_the_picture_and_goes_back(visit, site_url, path):
    v = visit(f"{site_url}/{path}")
    explorers = explorers_of(v.page)
    assert explorers.count() == PAGES[path]
    for e in range(explorers.count()):
        explorer = explorers.nth(e)
        spec = spec_of(explorer)
        start = seen(explorer)
        assert start[0] and start[1] == "", f"{path}: the starting picture has no description, or a message"
        for c in [c for row in spec["rows"] for c in row]:
            el = control(explorer, c)
            assert el.count() == 1, f"{path}: no control labelled {c['label']!r}"
            if c.get("precomputed") and len(c["options"]) < 2:
                continue        # a menu of one text (the real model's, until a reader loads it): nothing to move to
            assert el.get_attribute("aria-description") == c["description"]
            before = seen(explorer)
            back = move(explorer, c)
            wait_for_change(explorer, before, f"{path}: moving {c['label']}")
            moved = seen(explorer)
            # A message is an answer too (the plane's axes are not words of the other point set),
            # but never a failure of the page itself.
            assert not moved[1].startswith("This explorer failed"), f"{path}: {c['label']}: {moved[1]}"
            back()
            wait_for_change(explorer, moved, f"{path}: moving {c['label']} back")
            assert seen(explorer) == before, f"{path}: {c['label']} did not go back to its picture"
    assert (v.console_errors, v.outside, v.failed) == ([], [], []), (v.console_errors, v.outside, v.failed)


def test_any_prompt_from_the_token_buttons_and_a_misspelt_word(visit, site_url):
    v = visit(f"{site_url}/chapters/part3/results-page.html")
    explorer = explorers_of(v.page).first
    prompt = explorer.get_by_label("prompt", exact=True)
    prompt.fill("")
    explorer.locator("summary", has_text="add a token").click()
    for word in ("<BOS>", "Paolo", "chiama", "7", "<SEP>", "7", "chiama"):
        before = seen(explorer)
        explorer.get_by_role("button", name=word, exact=True).click()
        if word == "<BOS>":
            continue
        wait_for_change(explorer, before)
    assert prompt.input_value() == "<BOS> Paolo chiama 7 <SEP> 7 chiama"
    words, message = seen(explorer)
    assert message == "" and "after <BOS> Paolo chiama 7 <SEP> 7 chiama at temperature 1.00" in words
    before = seen(explorer)
    prompt.fill("<BOS> Paolo chiamma")
    wait_for_change(explorer, before)
    words, message = seen(explorer)
    assert message.startswith("prompt: unknown token 'chiamma'; did you mean 'chiama'") and words == before[0]
    prompt.fill(" ".join(["<BOS>"] * 49))
    wait_for_change(explorer, (words, message))
    assert seen(explorer)[1].startswith("prompt: the prompt has 49 tokens but calling-game reads at most 48. "
                                        "The picture keeps the last prompt that worked")


def test_the_sampling_explorer_takes_any_temperature_top_k_top_p_and_seed(visit, site_url):
    v = visit(f"{site_url}/chapters/part3/results-page.html")
    explorer = explorers_of(v.page).first
    slider = explorer.get_by_label("temperature", exact=True)
    stops = int(slider.get_attribute("max")) + 1
    assert stops > 300, "the temperature moves in small steps over the kernel's range"
    typed = explorer.get_by_label("temperature (typed)", exact=True)
    slider.focus()
    slider.press("End")
    assert typed.input_value() == "10.0"
    # Typed beyond the slider's range, both ways: the slider pins at its end, the picture follows.
    for text, shown, at in (("0.02", "0.0200", "0"), ("1e-4", "1.00e-4", "0"), ("1000", "1000", slider.get_attribute("max"))):
        before = seen(explorer)
        typed.fill(text)
        wait_for_change(explorer, before, f"typing temperature {text}")
        words, message = seen(explorer)
        assert message == "" and f"at temperature {shown}" in words and slider.input_value() == at, (text, words)
    # A temperature the library refuses: its sentence, the last good picture stays, and so does the slider;
    # temperature 0 points to the greedy switch.
    kept = ". The picture keeps the last temperature that worked (1000.0); the other controls still work."
    for text, said in (("warm", "temperature must be a positive number, got 'warm'"),
                       ("0", "temperature 0 is below 1e-06, the least the read-out divides by. Temperature 0 would mean "
                             "taking the most probable token every time: that is greedy decoding, the greedy switch"),
                       ("-1", "temperature must be a finite number of at least 1e-06, got -1"),
                       ("1e-7", "temperature 1e-07 is below 1e-06")):
        last = seen(explorer)
        typed.fill(text)
        wait_for_change(explorer, last, f"typing temperature {text}")
        now = seen(explorer)
        assert now[0] == words and now[1].startswith(said) and now[1].endswith(kept), (text, now[1])
        assert slider.input_value() == slider.get_attribute("max"), "the slider stays at the temperature drawn"
    assert typed.get_attribute("aria-invalid") == "true"
    # One refused box leaves the others working: the seed still rolls.
    before = seen(explorer)
    explorer.get_by_label("seed", exact=True).fill("11")
    wait_for_change(explorer, before, "a seed moved while the temperature box is wrong")
    assert "seed 11" in seen(explorer)[0] and seen(explorer)[1].endswith(kept)
    before = seen(explorer)
    explorer.get_by_label("seed", exact=True).fill("0")
    wait_for_change(explorer, before)
    before = seen(explorer)
    typed.fill("2")
    wait_for_change(explorer, before)
    assert slider.input_value() == str(TEMPERATURE_STOPS.index(2.0)) and "at temperature 2.00" in seen(explorer)[0]
    before = seen(explorer)
    explorer.get_by_label("top-p", exact=True).fill("1.5")
    wait_for_change(explorer, before)
    assert seen(explorer)[0] == before[0] and seen(explorer)[1].startswith("top-p must lie in (0, 1], got 1.5. The "
                                                                        "picture keeps the last top-p that worked (blank)")
    explorer.get_by_label("top-p", exact=True).fill("0.3")
    explorer.get_by_label("top-k", exact=True).fill("4")
    explorer.get_by_label("seed", exact=True).fill(str(2**63 - 1))
    v.page.wait_for_function("(el) => el.querySelector('.course-message').innerText === '' && "
                             "el.querySelector('.course-pick').innerText.includes('9223372036854775807')",
                             arg=explorer.element_handle())
    assert re.search(r"The roll with seed 9223372036854775807 picks \S+ \(p = [01]\.\d{3}\)", seen(explorer)[0])


def test_without_javascript_every_explorer_shows_its_picture_and_its_words(browser, site_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
    for path, count in PAGES.items():
        page.goto(f"{site_url}/{path}")
        explorers = page.locator(".course-explorer.course-live")
        assert explorers.count() == count, path
        for e in range(count):
            figure = explorers.nth(e).locator(".course-figure")
            chart = figure.locator("svg.course-chart, .course-kv-result").first
            assert chart.is_visible(), f"{path}: explorer {e} has no starting picture"
            words = figure.locator(".course-words p, .course-kv-result")
            assert words.count() >= 1 and words.first.text_content().strip(), f"{path}: no words for the picture"
    context.close()


def test_the_models_weights_are_served_once_for_the_site(visit, site_url):
    """Two pages that run the calling-game model fetch its weights from one address (the browser's
    cache serves the second), and neither page carries the weights itself."""
    urls = []
    for path in ("chapters/part3/results-page.html", "chapters/part1/ablation.html"):
        v = visit(f"{site_url}/{path}")
        explorers_of(v.page)
        found = v.page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)"
                                ".filter(n => n.endsWith('.safetensors'))")
        assert len(found) == 1, found
        urls.append(found[0])
        html = v.page.content()
        # The weights (285 KB, 380 KB as base64) are not inlined: no long run of base64 anywhere in the page
        # (its size alone says little: the ablation page's rendered explorers and tables come to 410 KB).
        assert not re.search(r"[A-Za-z0-9+/=]{100000,}", html), "the page carries a large base64 block"
        assert "safetensors" not in html.split("course-explorer-spec")[0][-2000:]
    assert urls[0] == urls[1] and urls[0].endswith("/_static/explorers/models/calling-game.safetensors")


def test_the_induction_checkpoints_are_fetched_after_the_page_is_ready(visit, site_url):
    """The training explorer's checkpoints (every snapshot of the run, float16) are no part of the page's
    start: the page is ready without them, asks for them after, and its view then runs on them."""
    v = visit(f"{site_url}/chapters/part1/induction.html")
    explorers_of(v.page)
    ready, asked = v.page.evaluate("""async () => {
        const s = window.courseExplorers;
        await Promise.all(s.later);
        return [s.readyAt, performance.getEntriesByType('resource')
                .filter((e) => e.name.endsWith('/models/induction.checkpoints.safetensors')).map((e) => e.startTime)];
    }""")
    assert len(asked) == 1 and asked[0] >= ready, (ready, asked)
    assert not re.search(r"[A-Za-z0-9+/=]{100000,}", v.page.content()), "the page carries a large base64 block"
    assert (v.console_errors, v.outside, v.failed) == ([], [], []), (v.console_errors, v.outside, v.failed)


def test_tsne_layouts_say_they_are_precomputed(visit, site_url):
    v = visit(f"{site_url}/chapters/part2/three-ways.html")
    tsne = explorers_of(v.page).nth(1)
    assert "Precomputed" in tsne.locator(".course-note").inner_text()
    slider = tsne.get_by_label("perplexity", exact=True)
    options = spec_of(tsne)["rows"][0][0]["options"]
    assert max(options) < 28 and int(slider.get_attribute("max")) + 1 == len(options)


def test_the_known_clusters_iterations_slider(visit, site_url):
    """The third explorer on three-ways: the known clusters, with an iterations slider whose first
    stop is the end of early exaggeration and whose last lets the optimiser converge."""
    v = visit(f"{site_url}/chapters/part2/three-ways.html")
    known = explorers_of(v.page).nth(2)
    assert "early exaggeration" in known.locator(".course-note").inner_text()
    steps = known.get_by_label("iterations", exact=True)
    stops = next(c for row in spec_of(known)["rows"] for c in row if c["name"] == "steps")["options"]
    assert stops[0] == 250 and int(steps.get_attribute("max")) + 1 == len(stops)
    words, message = seen(known)
    assert message == "" and words.count("(converged)") == 2 and "80 synthetic points" in words
    steps.focus()
    steps.press("Home")
    wait_for_change(known, (words, message), "the iterations slider")
    words, message = seen(known)
    assert message == "" and words.count("after 250 iterations (stopped before converging)") == 2, words


# The contrast of every control's text, every label and every chart's text against what is behind it
# (WCAG's ratio of relative luminances); text drawn on a coloured cell carries its own colour for it.
CONTRASTS = """(root) => {
    const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => [r, g, b].map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; })
        .reduce((s, c, i) => s + c * [0.2126, 0.7152, 0.0722][i], 0);
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const behind = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length === 3 || c[3] > 0.5) return c.slice(0, 3); } return [255, 255, 255]; };
    const out = [];
    const check = (el, what, fg) => out.push([what, ratio(rgb(fg || getComputedStyle(el).color), behind(el))]);
    // A slider shows no text of its own: its value is in the <output> beside it.
    root.querySelectorAll('[data-control]:not([type=range]), .course-label, .course-message, .course-note, output, summary').forEach((el) =>
        check(el, el.getAttribute('data-control') || el.textContent.slice(0, 30)));
    root.querySelectorAll('svg.course-chart text').forEach((t) => {
        if (!(t.getAttribute('style') || '').includes('#') && !(t.getAttribute('style') || '').includes('white'))
            check(t.closest('svg').parentElement, 'chart text: ' + t.textContent.slice(0, 20), getComputedStyle(t).fill);
    });
    return out;
}"""


# Figures' words as the screen shows them (issue 39): at least this many CSS pixels, and none over another.
FIGURE_TEXT_PX = 11
FIGURE_TEXT = """(root) => {
    // Every text of every chart: its size as the screen shows it (font size x the chart's scale), and
    // each pair of texts of one chart whose drawn boxes (rotated as drawn) overlap by more than 1 px.
    const out = { small: [], overlaps: [], count: 0 };
    for (const svg of root.querySelectorAll('svg.course-chart')) {
        const r = svg.getBoundingClientRect();
        if (!r.width) continue;
        const scale = r.width / +svg.getAttribute('width');
        const quads = [];
        for (const t of svg.querySelectorAll('text')) {
            const words = t.textContent.trim();
            if (!words) continue;
            out.count++;
            const px = parseFloat(getComputedStyle(t).fontSize) * scale;
            if (px < 11 - 0.05) out.small.push([words.slice(0, 24), Math.round(px * 10) / 10]);
            const b = t.getBBox(), m = t.getCTM();
            if (!b.width || !m) continue;
            const s = 0.5 / scale;      // half a screen pixel in from each side: touching is no clash
            const corners = [[b.x + s, b.y + s], [b.x + b.width - s, b.y + s], [b.x + b.width - s, b.y + b.height - s], [b.x + s, b.y + b.height - s]]
                .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
            quads.push([words, corners]);
        }
        // Separating axes: two convex quadrilaterals overlap unless one of their edges' normals separates them.
        const apart = (p, q) => [p, q].some((poly) => poly.some((a, i) => {
            const b = poly[(i + 1) % 4], nx = a[1] - b[1], ny = b[0] - a[0];
            const span = (pts) => pts.map(([x, y]) => x * nx + y * ny);
            const [sp, sq] = [span(p), span(q)];
            return Math.max(...sp) <= Math.min(...sq) || Math.max(...sq) <= Math.min(...sp);
        }));
        for (let i = 0; i < quads.length; i++) for (let j = i + 1; j < quads.length; j++)
            if (!apart(quads[i][1], quads[j][1])) out.overlaps.push([quads[i][0].slice(0, 24), quads[j][0].slice(0, 24)]);
    }
    return out;
}"""


def figure_text_problems(found: dict, where: str) -> list[str]:
    return ([f"{where}: {w!r} is {px} px" for w, px in found["small"][:4]] +
            [f"{where}: {a!r} runs into {b!r}" for a, b in found["overlaps"][:4]])


PHONE_SIZES = """(root) => [...root.querySelectorAll('[data-control], .course-label')].map((el) => {
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return [el.getAttribute('data-control') || el.textContent, el.hasAttribute('data-control'), r.left,
            r.right, r.height, parseFloat(s.fontSize)];
})"""


@pytest.fixture(scope="module")
def survey(browser, site_url) -> dict:
    """Every explorer page visited once in each of three settings, what the tests below read measured
    on that one visit: {setting: [(path, explorer index, {measure: result})]}. Settings: "light" and "dark"
    (1280 px, the theme's own switch set), "phone" (390 px, touch, twice the pixels). Words' sizes and
    clashes are read before a toggle is pressed (the starting picture); contrast after (a pressed toggle
    must read too)."""
    settings = {"light": dict(viewport={"width": 1280, "height": 900}), "dark": dict(viewport={"width": 1280, "height": 900}),
                "phone": dict(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True, has_touch=True)}
    out = {}
    for setting, options in settings.items():
        context = browser.new_context(**options)
        if setting != "phone":
            context.add_init_script(f"localStorage.setItem('mode', '{setting}')")     # the theme's own switch
        page = context.new_page()
        rows = out[setting] = []
        for path in PAGES:
            page.goto(f"{site_url}/{path}")
            explorers = explorers_of(page)
            theme = page.evaluate("() => document.documentElement.dataset.theme")
            for e in range(explorers.count()):
                explorer, found = explorers.nth(e), {"theme": theme}
                if setting != "dark":
                    found["text"] = explorer.evaluate(FIGURE_TEXT)
                if setting == "phone":
                    found["sizes"] = explorer.evaluate(PHONE_SIZES)
                    found["overflow"] = explorer.evaluate("(root) => root.scrollWidth - root.clientWidth")
                else:
                    toggles = explorer.locator(".course-toggle")
                    if toggles.count():
                        toggles.first.click()       # a pressed toggle must read too
                    found["contrasts"] = explorer.evaluate(CONTRASTS)
                rows.append((path, e, found))
        context.close()
    return out


def test_every_pictures_words_are_11_px_and_clear_of_each_other(survey):
    """Issue 39: every word of every explorer's picture is at least 11 px as shown, at 1280 and at 390 px, and
    no two words of one picture run into each other (boxes as drawn, rotated words too)."""
    problems = [p for setting, width in (("light", 1280), ("phone", 390)) for path, e, found in survey[setting]
                for p in figure_text_problems(found["text"], f"{path} #{e} at {width} px")]
    assert sum(found["text"]["count"] for _, _, found in survey["phone"]) > 500
    assert not problems, problems


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_every_control_and_picture_is_readable_in_both_modes(survey, mode):
    for path, e, found in survey[mode]:
        assert found["theme"] == mode
        low = [(what, round(r, 2)) for what, r in found["contrasts"] if r < 4.5]
        assert not low, f"{path} ({mode}): text below contrast 4.5: {low[:6]}"


def test_at_phone_width_the_controls_fit_and_read(survey):
    assert {path for path, _, _ in survey["phone"]} == set(PAGES)
    for path, e, found in survey["phone"]:
        for what, is_control, left, right, height, font in found["sizes"]:
            assert left >= 0 and right <= 390.5, f"{path}: {what} runs off a 390 px screen ({left:.0f}-{right:.0f})"
            assert font >= 14, f"{path}: {what} is set in {font} px"
            assert not is_control or height >= 24, f"{path}: {what} is {height:.0f} px tall, too small to touch"
        assert found["overflow"] <= 1, f"{path}: the explorer is {found['overflow']} px wider than the screen"


# The figure after a move, against the same picture drawn afresh into an empty element: the renderer
# changes only what differs between two pictures, and what it leaves must be the new picture whole.
SAME_AS_FRESH = """async (root) => {
    const ex = window.courseExplorers.explorers.find((e) => e.root === root);
    const { draw } = await import(new URL('../../_static/explorers/render.js', location.href));
    const fresh = document.createElement('div');
    draw(fresh, ex.spec.view, ex.drawn.view, { width: ex.drawn.width });
    const figure = root.querySelector('.course-figure');
    const a = [...figure.childNodes], b = [...fresh.childNodes];
    const differ = (x, y) => {      // the first element that differs, as a path of tags, or null
        if (x.isEqualNode(y)) return null;
        if (x.nodeName !== y.nodeName || x.nodeType !== 1) return `${x.nodeName}: ${x.textContent} != ${y.textContent}`;
        const xa = [...x.attributes].map((t) => `${t.name}=${t.value}`).sort().join(' ');
        const ya = [...y.attributes].map((t) => `${t.name}=${t.value}`).sort().join(' ');
        if (xa !== ya) return `${x.nodeName} [${xa.slice(0, 200)}] != [${ya.slice(0, 200)}]`;
        if (x.childNodes.length !== y.childNodes.length) return `${x.nodeName}: ${x.childNodes.length} children != ${y.childNodes.length}`;
        for (let i = 0; i < x.childNodes.length; i++) { const d = differ(x.childNodes[i], y.childNodes[i]); if (d) return `${x.nodeName} > ${d}`; }
        return null;
    };
    const found = a.length !== b.length ? `${a.length} children != ${b.length}` : a.map((x, i) => differ(x, b[i])).find(Boolean);
    return [found || true, figure.querySelectorAll('*').length];
}"""


@pytest.mark.parametrize("path, prompts", [
    ("chapters/part1/ablation.html", ["<BOS> Paolo chiama", " ".join(["<BOS>", "Pietro", "chiama", "4"] * 12), "<BOS>",
                                      "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama"]),
    ("chapters/part1/circuits.html", [" ".join(["<BOS>", "Paolo", "chiama", "7"] * 12), "<BOS> 7", "<BOS> Paolo chiama 7 <SEP>"]),
])
def test_a_figure_changed_in_place_is_the_picture_drawn_afresh(visit, site_url, path, prompts):
    v = visit(f"{site_url}/{path}")
    explorer = explorers_of(v.page).first
    spec = spec_of(explorer)
    toggles = [c for row in spec["rows"] for c in row if c["kind"] == "toggle"]
    sizes = set()
    for i, prompt in enumerate(prompts):
        before = seen(explorer)
        explorer.get_by_label("prompt", exact=True).fill(prompt)
        wait_for_change(explorer, before, f"{path}: prompt {prompt!r}")
        if toggles:
            before = seen(explorer)
            # A head off, another, the first back on (its faded heatmap must come back whole), ...
            control(explorer, toggles[[0, 3, 0, 5][i % 4] % len(toggles)]).click()
            wait_for_change(explorer, before, f"{path}: a head switched")
        same, nodes = explorer.evaluate(SAME_AS_FRESH)
        assert same is True, f"{path}: after {prompt!r} the figure is not the picture drawn afresh: {same}"
        sizes.add(nodes)
    assert len(sizes) > 1, "the prompts should change how many elements the picture has"
    assert (v.console_errors, v.outside, v.failed) == ([], [], []), (v.console_errors, v.outside, v.failed)


def test_a_word_set_change_resets_the_axes_and_one_bad_axis_holds_nothing_up(visit, site_url):
    """The concept plane switched to MiniLM's words takes that set's own axes (the game's are not its
    points), and "where this sits" (the game model's embedding table) goes; a bad axis is named, and the
    other box still moves the picture."""
    from lib.chapters.part2.three_ways.explorers import AXES

    v = visit(f"{site_url}/chapters/part2/three-ways.html")
    plane = explorers_of(v.page).first
    where = plane.locator(".course-where")
    assert where.is_visible() and "embedding table" in where.inner_text()
    before = seen(plane)
    plane.get_by_label("points", exact=True).select_option(index=1)
    wait_for_change(plane, before, "switching the word set")
    words, message = seen(plane)
    assert message == "" and f"axis 1 = {AXES['real-language'][0]}" in words, (words, message)
    assert [plane.get_by_label(f"axis {i}", exact=True).input_value() for i in (1, 2)] == list(AXES["real-language"])
    assert not where.is_visible()
    axis_1, axis_2 = (plane.get_by_label(f"axis {i}", exact=True) for i in (1, 2))
    axis_1.fill("Paolo")
    wait_for_change(plane, (words, message), "a word of the other set")
    assert seen(plane)[1].startswith("axis 1: 'Paolo' is not a token here") and axis_1.get_attribute("aria-invalid") == "true"
    before = seen(plane)
    axis_2.fill("big - small")
    wait_for_change(plane, before, "the other axis, while axis 1 is wrong")
    assert "axis 2 = big - small" in seen(plane)[0] and seen(plane)[1].startswith("axis 1: 'Paolo'")
    assert (v.console_errors, v.outside, v.failed) == ([], [], []), (v.console_errors, v.outside, v.failed)
