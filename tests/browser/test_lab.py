"""Live: JupyterLab on loopback opens the reader-ready notebooks, as `make lab` and Binder do.

For a chapter of each part: the notebook runs from top to bottom; what the learner sees reads
like the website (no raw MyST, every number the website page glues into its prose, solutions
folded away, no dialog over the notebook); and the explorers recompute in the kernel. One page is
saved as a picture for a person to look at: _build/test-output/lab-search-by-hand.png.
"""
import html
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from urllib.parse import urlparse
from pathlib import Path

import pytest

from conftest_lab import free_port  # noqa: F401  (kept separate from the site fixtures)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
CHAPTER = "chapters/part3/search-by-hand.ipynb"
MAPS = "chapters/part2/three-ways.ipynb"
PART1 = "chapters/part1/why-attention.ipynb"
MACHINE = "chapters/part1/index.ipynb"
INDUCTION = "chapters/part1/induction.ipynb"
SCREENSHOTS = ROOT / "_build" / "test-output"


@pytest.fixture(scope="module")
def lab(tmp_path_factory, reader_notebooks):
    port, token = free_port(), secrets.token_hex(16)
    home = tmp_path_factory.mktemp("lab-home")
    # The reader notebooks, written as `make lab` writes them (from the build's executed cache),
    # into a folder of the test's own: JupyterLab autosaves what it opens.
    work = home / "work"
    shutil.copytree(reader_notebooks, work)
    # JupyterLab's settings exactly as binder/postBuild and `make install` install them.
    settings = home / "app-settings"
    settings.mkdir()
    shutil.copy(ROOT / "binder" / "jupyterlab-overrides.json", settings / "overrides.json")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTER_DATA_DIR=str(Path(sys.prefix) / "share" / "jupyter"), PYTHONWARNINGS="ignore")
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
           "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=False",
           f"--LabApp.app_settings_dir={settings}", "--allow-root"]
    log = open(home / "lab.log", "wb")  # a file, not a pipe: an unread pipe would block the server
    proc = subprocess.Popen(cmd, env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except Exception:
            if proc.poll() is not None:
                pytest.fail("JupyterLab exited: " + (home / "lab.log").read_text()[-3000:])
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("JupyterLab did not start within 90 s")
    yield base, token, home / "lab.log"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


CHART = ".course-explorer svg.course-chart"


def labelled(root, kind: str, label: str):
    """An ipywidgets control found by its description (the label a reader sees), not its position."""
    return root.locator(f".{kind}:has(> label.widget-label:text-is('{label}'))").first


def _image_of_explorer(page) -> str:
    """The explorer's chart, by its description (which names the temperature and the page)."""
    chart = page.locator(CHART).first
    chart.wait_for(timeout=60000)
    return chart.get_attribute("aria-label")


def _open_and_run(browser, lab, chapter, run_all: bool = True):
    """JupyterLab in a fresh browser context, `chapter` opened as a notebook and (`run_all`) every cell
    started; returns (context, page, outside requests)."""
    base, token, log = lab
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    outside = []

    def route(r):
        if r.request.url.startswith(("data:", "blob:")) or urlparse(r.request.url).hostname == "127.0.0.1":
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(60000)
    # ?reset: start from an empty workspace (not with the notebook an earlier test left open).
    page.goto(f"{base}/lab?reset&token={token}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-LabShell")
    page.evaluate(f"""async () => {{
        const app = window.jupyterapp;
        await app.started;
        await app.commands.execute('docmanager:open', {{path: '{chapter}'}});
    }}""")
    page.wait_for_function("() => { const w = window.jupyterapp.shell.currentWidget;"
                           " return w && w.content && w.content.widgets && w.content.widgets.length > 0; }")
    # Wait until the kernel is ready, then start the run without waiting for it in the page
    # (the waits below, with their own time limits, follow its progress).
    page.evaluate("""async (all) => {
        const nb = window.jupyterapp.shell.currentWidget;
        await nb.context.ready;
        await nb.sessionContext.ready;
        if (all) window.jupyterapp.commands.execute('notebook:run-all-cells');
        return true;
    }""", run_all)
    return context, page, outside


def _website_numbers(notebook: str) -> list[str]:
    """The glued values the website's page of this chapter shows in its prose (not its solutions)."""
    page = (ROOT / "_build" / "html" / notebook.replace(".ipynb", ".html")).read_text()
    page = re.sub(r'<div class="solution.*?</section>\s*</div>', "", page, flags=re.S)
    # The website curls quotes (Sphinx's smart quotes); the notebook keeps them straight.
    return [straight_quotes(html.unescape(v)) for v in re.findall(r'<span class="pasted-text">([^<]+)</span>', page)]


def straight_quotes(text: str) -> str:
    return text.translate(CURLY)


CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _wait_for_the_run(page, seconds=300):
    """Every code cell has run and the kernel is idle."""
    page.wait_for_function("""() => {
        const nb = window.jupyterapp.shell.currentWidget;
        const cells = Array.from(nb.content.model.cells);
        return nb.sessionContext.session.kernel.status === 'idle'
            && cells.every(c => c.type !== 'code' || c.executionCount !== null);
    }""", timeout=seconds * 1000)


def _what_the_learner_sees(page) -> dict:
    """Per cell: its kind, its role in an exercise, whether it is shown, and its rendered text."""
    return page.evaluate("""() => {
        const nb = window.jupyterapp.shell.currentWidget;
        return nb.content.widgets.map(cell => {
            const meta = cell.model.getMetadata('course') || {};
            const rendered = cell.node.querySelector('.jp-RenderedMarkdown');
            const outputs = cell.node.querySelector('.jp-OutputArea');
            // textContent, not innerText: cells scrolled out of view are not laid out.
            return {type: cell.model.type, role: meta.role || null, hidden: cell.isHidden,
                    inputHidden: cell.inputHidden, rendered: !!rendered,
                    text: rendered ? rendered.textContent : '', outputs: outputs ? outputs.textContent : '',
                    source: cell.model.sharedModel.getSource()};
        });
    }""")


def _reads_like_the_website(page, notebook):
    """No raw MyST and no dialog in view, the website's numbers in the prose, solutions folded."""
    cells = _what_the_learner_sees(page)
    shown = [c for c in cells if not c["hidden"]]
    prose = "\n".join(c["text"] for c in shown if c["type"] == "markdown")
    assert all(c["rendered"] for c in shown if c["type"] == "markdown"), "a markdown cell is not rendered"
    visible = "\n".join(c["text"] + c["outputs"] + ("" if c["inputHidden"] or c["type"] == "markdown" else c["source"])
                        for c in shown)
    for raw in ("{glue", ":::{", "{cite", "```{"):
        assert raw not in visible, f"{notebook}: {raw} in view"
    assert "No renderer could be found" not in visible
    numbers = _website_numbers(notebook)
    assert numbers, "the website page glues numbers into its prose"
    missing = [n for n in numbers if n not in straight_quotes(prose)]
    assert not missing, f"{notebook}: the website shows {missing[:5]}, the notebook's prose does not"
    # Each solution: its heading shown and folded, everything under it hidden until the next exercise.
    solutions = [i for i, c in enumerate(cells) if c["role"] == "solution"]
    assert solutions, "the chapter has exercises with solutions"
    folded = set()
    for i in solutions:
        assert not cells[i]["hidden"] and cells[i]["text"].startswith("Solution to Exercise")
        j = i + 1
        while j < len(cells) and cells[j]["role"] not in ("task", "references"):
            assert cells[j]["hidden"], f"{notebook}: solution content in view: {cells[j]['source'][:80]!r}"
            folded.add(j)
            j += 1
    # And in words: no line of a worked solution's code is in view (unless the page has it elsewhere).
    elsewhere = "\n".join(c["source"] for k, c in enumerate(cells) if k not in folded)
    lines = {line.strip() for k in folded if cells[k]["type"] == "code" for line in cells[k]["source"].splitlines()}
    lines = [line for line in lines if len(line) > 20 and line not in elsewhere]
    assert lines, "the solutions have code of their own"
    assert not [line for line in lines if line in visible], f"{notebook}: solution code in view"
    # The answer cell is there, below its task, and reports on the untouched stub.
    answers = [c for c in shown if c["role"] == "answer"]
    assert answers and all("Not answered yet" in c["outputs"] for c in answers)
    # No first-run dialog or notification over the notebook (binder/jupyterlab-overrides.json).
    assert page.locator(".jp-Dialog").count() == 0
    assert page.get_by_text("official Jupyter news").count() == 0


def test_a_part1_chapter_runs_live_and_reads_like_the_website(browser, lab):
    context, page, outside = _open_and_run(browser, lab, PART1)
    _wait_for_the_run(page)
    _reads_like_the_website(page, PART1)
    assert outside == [], outside
    context.close()


def test_the_chapter_runs_live_and_its_slider_recomputes(browser, lab):
    context, page, outside = _open_and_run(browser, lab, CHAPTER)
    _wait_for_the_run(page)
    _reads_like_the_website(page, CHAPTER)
    # A picture for a person: the exercises, the first one's answer, its folded solution.
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("""() => {
        const nb = window.jupyterapp.shell.currentWidget;
        const i = nb.content.widgets.findIndex(c => (c.model.getMetadata('course') || {}).role === 'task');
        nb.content.activeCellIndex = i; nb.content.scrollToItem(i, 'start');
    }""")
    page.wait_for_timeout(1000)
    page.screenshot(path=str(SCREENSHOTS / "lab-search-by-hand.png"))
    before = _image_of_explorer(page)
    slider = labelled(page.locator(".course-explorer").first, "widget-slider", "temperature")
    handle = slider.locator(".noUi-handle, [role=slider]").first
    handle.wait_for(timeout=30000)
    handle.focus()
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "(before) => { const c = document.querySelector('.course-explorer svg.course-chart');"
        " return c && c.getAttribute('aria-label') !== before; }",
        arg=before, timeout=30000)
    after = _image_of_explorer(page)
    assert after != before
    # The kernel answers each of the six steps in turn (writing the box beside the slider); the last
    # answer names the sixth stop above 1.
    from lib.explorers.definition import TEMPERATURES, shown_number

    readout = shown_number(TEMPERATURES[TEMPERATURES.index(1.0) + 6])
    typed = slider.locator("xpath=..").locator(".widget-text input").first   # the box the slider writes
    page.wait_for_function(
        "([box, t]) => { const c = document.querySelector('.course-explorer svg.course-chart');"
        " return box.value === t && c && c.getAttribute('aria-label').includes('temperature ' + t); }",
        arg=[typed.element_handle(), readout], timeout=30000)
    after = _image_of_explorer(page)
    # A temperature typed beyond the slider's range: the kernel computes at it; one it refuses gets
    # the library's sentence and the last chart stays.
    typed.fill("0.02")
    page.wait_for_function("() => document.querySelector('.course-explorer svg.course-chart')"
                           ".getAttribute('aria-label').includes('temperature 0.0200')", timeout=30000)
    typed.fill("-3")
    message = page.locator(".course-explorer .course-error")
    message.wait_for(timeout=30000)
    # The box's sentence, then what the picture keeps (the other controls still answer).
    assert message.inner_text().startswith("temperature must be a finite number of at least 1e-06, got -3. "
                                           "The picture keeps the last temperature that worked (0.02)")
    assert "temperature 0.0200" in _image_of_explorer(page)
    typed.fill(readout)
    message.wait_for(state="detached", timeout=30000)
    page.wait_for_function("(after) => document.querySelector('.course-explorer svg.course-chart')"
                           ".getAttribute('aria-label') === after", arg=after, timeout=30000)
    # A word the model does not know: a message in the widget, the last chart stays.
    box = labelled(page.locator(".course-explorer").first, "widget-text", "prompt").locator("input")
    box.fill("<BOS> Pietro chiamma")
    message = page.locator(".course-explorer .course-error")
    message.wait_for(timeout=30000)
    assert "did you mean 'chiama'" in message.inner_text()
    assert _image_of_explorer(page) == after
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'] pre").all_inner_texts()
    assert not any("Traceback" in e or "Error" in e for e in errors), errors
    assert outside == [], outside
    context.close()


def test_the_maps_explorers_run_live(browser, lab):
    """Part 2 in a kernel: the plane builder takes typed axes (and refuses a zero one), the t-SNE
    explorer's perplexity slider recomputes."""
    context, page, outside = _open_and_run(browser, lab, MAPS)
    _wait_for_the_run(page)
    _reads_like_the_website(page, MAPS)
    notebook = page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    page.wait_for_function("(id) => document.getElementById(id).querySelectorAll('.course-explorer svg').length >= 3",
                           arg=notebook, timeout=120000)
    root = page.locator(f"[id='{notebook}']")
    plane = root.locator(".course-explorer").first
    plane.locator("svg.course-chart").first.wait_for(timeout=90000)
    axis_2 = labelled(plane, "widget-text", "axis 2").locator("input")
    axis_2.fill("Paolo - Paolo")
    axis_2.press("Enter")
    plane.locator(".course-error").wait_for(timeout=30000)
    assert "zero vector" in plane.locator(".course-error").inner_text()
    axis_2.fill("chiama - perde")
    axis_2.press("Enter")
    page.wait_for_function(
        "(id) => { const c = document.getElementById(id).querySelector('.course-explorer svg.course-chart');"
        " return c && c.getAttribute('aria-label').includes('axis 2 = chiama - perde'); }", arg=notebook, timeout=30000)
    tsne = root.locator(".course-explorer").nth(1)
    tsne.locator("svg.course-chart").first.wait_for(timeout=90000)
    before = tsne.locator("svg.course-chart").first.get_attribute("aria-label")
    assert "perplexity 5," in before
    handle = labelled(tsne, "widget-slider", "perplexity").locator(".noUi-handle, [role=slider]").first
    handle.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "([id, before]) => { const c = document.getElementById(id).querySelectorAll('.course-explorer')[1]"
        ".querySelector('svg.course-chart'); return c && c.getAttribute('aria-label') !== before; }",
        arg=[notebook, before], timeout=30000)
    assert "perplexity 8," in tsne.locator("svg.course-chart").first.get_attribute("aria-label")
    assert outside == [], outside
    context.close()


def test_a_click_on_the_machines_map_shows_that_part_in_a_kernel(browser, lab):
    """Part 1's map live: a click on a part of the machine's figure (drawn by the renderer in the
    kernel's anywidget) sets the "show" menu in the kernel, and the picture shows that part."""
    context, page, outside = _open_and_run(browser, lab, MACHINE)
    _wait_for_the_run(page, 120)
    explorer = page.locator(".course-explorer").first
    explorer.locator("svg.course-chart").first.wait_for(timeout=60000)
    show = labelled(explorer, "widget-dropdown", "show").locator("select")
    pictures = "(el) => [...el.querySelectorAll('svg.course-chart')].map((s) => s.getAttribute('aria-label')).join(' | ')"
    for part, shown in (("readout", "read-out"), ("L1H2", "L1H2")):
        before = explorer.evaluate(pictures)
        explorer.locator(f'[data-choose="part={part}"]').first.click()
        page.wait_for_function("([s, shown]) => s.options[s.selectedIndex].textContent === shown",
                               arg=[show.element_handle(), shown], timeout=30000)
        page.wait_for_function(f"([el, before]) => ({pictures})(el) !== before",
                               arg=[explorer.element_handle(), before], timeout=30000)
    assert "head L1H2" in explorer.evaluate(pictures)
    assert explorer.locator(".course-error").count() == 0
    assert outside == [], outside
    context.close()


def test_the_induction_training_slider_recomputes_in_a_kernel(browser, lab):
    """The training explorer live: only the two cells it needs run (the chapter's first code cell and the
    explorer's own), and its slider, moved with the keyboard, draws another checkpoint in the kernel (the
    loss curves' mark, every head's pattern and the scores: the picture's description names the step)."""
    context, page, outside = _open_and_run(browser, lab, INDUCTION, run_all=False)
    page.evaluate("""async () => {
        const app = window.jupyterapp, nb = app.shell.currentWidget, cells = nb.content.widgets;
        const source = (c) => c.model.sharedModel.getSource();
        const setup = cells.findIndex((c) => c.model.type === 'code' && source(c).includes('import lib'));
        const explorer = cells.findIndex((c) => c.model.type === 'code' && source(c).trim() === 'training_explorer()');
        for (const i of [setup, explorer]) {
            nb.content.activeCellIndex = i;
            await app.commands.execute('notebook:run-cell');
        }
    }""")
    explorer = page.locator(".course-explorer:has(.widget-slider)").first
    handle = labelled(explorer, "widget-slider", "training step").locator(".noUi-handle, [role=slider]").first
    handle.wait_for(timeout=120000)
    chart = explorer.locator("svg.course-chart").first
    chart.wait_for(timeout=60000)
    from lib.model.store import load

    steps = load("induction").meta["checkpoints"]["steps"]
    assert f"step {steps[-1]}" in chart.get_attribute("aria-label")       # the last checkpoint, the default
    handle.focus()
    page.keyboard.press("Home")
    page.wait_for_function(
        "([el, s]) => { const c = el.querySelector('svg.course-chart');"
        " return c && c.getAttribute('aria-label').includes('at step ' + s + ','); }",
        arg=[explorer.element_handle(), steps[0]], timeout=30000)
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "([el, s]) => { const c = el.querySelector('svg.course-chart');"
        " return c && c.getAttribute('aria-label').includes('at step ' + s + ','); }",
        arg=[explorer.element_handle(), steps[1]], timeout=30000)
    assert explorer.locator(".course-error").count() == 0
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'] pre").all_inner_texts()
    assert not any("Traceback" in e or "Error" in e for e in errors), errors
    assert outside == [], outside
    context.close()
