"""Live: JupyterLab on loopback opens the first chapter, runs it, and the slider recomputes."""
import os
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
CHAPTER = "chapters/part3/search-by-hand.md"
MAPS = "chapters/part2/three-ways.md"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    port, token = free_port(), secrets.token_hex(16)
    home = tmp_path_factory.mktemp("lab-home")
    # Serve a copy of the chapter: JupyterLab autosaves an open notebook, and jupytext would
    # write the source back in its own formatting.
    work = home / "work"
    for chapter in (CHAPTER, MAPS):
        (work / Path(chapter).parent).mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / chapter, work / chapter)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTER_DATA_DIR=str(Path(sys.prefix) / "share" / "jupyter"), PYTHONWARNINGS="ignore")
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
           "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=False",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--allow-root"]
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


def _open_and_run(browser, lab, chapter):
    """JupyterLab in a fresh browser context, `chapter` opened as a notebook and every cell started;
    returns (context, page, outside requests)."""
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
    # Open the MyST source as a notebook (jupytext), run every cell, wait for the explorer.
    page.evaluate(f"""async () => {{
        const app = window.jupyterapp;
        await app.started;
        // No factory named: the chapter opens the way a double click opens it.
        await app.commands.execute('docmanager:open', {{path: '{chapter}'}});
    }}""")
    default = page.evaluate(f"() => window.jupyterapp.docRegistry.defaultWidgetFactory('{chapter}').name")
    assert default == "Jupytext Notebook", "a chapter should open as a notebook (make lab installs the setting)"
    page.wait_for_function("() => { const w = window.jupyterapp.shell.currentWidget;"
                           " return w && w.content && w.content.widgets && w.content.widgets.length > 0; }")
    # Wait until the kernel is ready, then start the run without waiting for it in the page
    # (the waits below, with their own time limits, follow its progress).
    page.evaluate("""async () => {
        const nb = window.jupyterapp.shell.currentWidget;
        await nb.context.ready;
        await nb.sessionContext.ready;
        window.jupyterapp.commands.execute('notebook:run-all-cells');
        return true;
    }""")
    return context, page, outside


def test_the_chapter_runs_live_and_its_slider_recomputes(browser, lab):
    context, page, outside = _open_and_run(browser, lab, CHAPTER)
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
    readout = slider.locator(".widget-readout").inner_text()
    assert readout.strip() != "1.00", "the slider did not move"
    # The kernel answers each of the six steps in turn; the last answer names the final value.
    page.wait_for_function(
        "(t) => { const c = document.querySelector('.course-explorer svg.course-chart');"
        " return c && c.getAttribute('aria-label').includes('temperature ' + t); }",
        arg=readout.strip(), timeout=30000)
    after = _image_of_explorer(page)
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
