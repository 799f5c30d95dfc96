"""The explorers in the built book: page-only assets, starting pictures, and the site's shared files.

- A page that shows an explorer (a chapter output written by lib/explorers/page.py) gets the
  explorers' script and style sheet; no other page loads them.
- Each explorer's figure is filled with its starting picture, drawn by the explorers' own renderer
  (lib/explorers/js/render.js, run by Node.js), so the page reads the same without JavaScript.
- The widget state that notebook execution stores (and the widget manager it would load) is left
  out: the website's explorers are the page's own, not ipywidgets.
- The shipped models and the maps' point sets are written once, for every page, to
  _static/explorers/ (lib.explorers.page.export_site).
- A change to the explorers' scripts or to this file rewrites every page (their starting pictures,
  their script's address and their preload tags change with it).
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

from lib.exercises import site
from lib.explorers import web
from lib.explorers.page import export_site

HERE = Path(__file__).resolve().parent
SPEC = re.compile(r'<script type="application/json" class="course-explorer-spec">(.*?)</script>'
                  r'<div class="course-figure" aria-live="polite"></div>', re.S)
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


class ExplorerBuildError(RuntimeError):
    pass


def prerender(specs: list[dict], folder: Path) -> list[str]:
    """The starting pictures, drawn by the renderer installed in `folder` (the site's _static/explorers)."""
    node = shutil.which("node")
    if node is None:
        raise ExplorerBuildError("Node.js is needed to draw the explorers' starting pictures: install it (see README)")
    pairs = [[s["view"], s.get("default")] for s in specs]
    result = subprocess.run([node, str(HERE / "prerender.mjs"), str(folder / "render.js")], input=json.dumps(pairs), capture_output=True,
                            text=True, check=False)
    if result.returncode != 0:
        raise ExplorerBuildError(f"drawing the explorers' starting pictures failed:\n{result.stderr}")
    return json.loads(result.stdout)


def _page(app, pagename, templatename, context, doctree):
    body = context.get("body") or ""
    # Notebook execution stores ipywidgets' state; the website draws its own explorers.
    scripts = context.get("script_files")
    if scripts is not None:
        scripts[:] = [s for s in scripts if getattr(s, "attributes", {}).get("type") != WIDGET_STATE]
    found = list(SPEC.finditer(body))
    if not found:
        return
    specs = [json.loads(m.group(1)) for m in found]
    pictures = iter(prerender(specs, Path(app.outdir) / "_static" / "explorers"))
    context["body"] = SPEC.sub(lambda m: m.group(0).replace('aria-live="polite"></div>',
                                                            f'aria-live="polite">{next(pictures)}</div>'), body)
    app.add_css_file("explorers/explorers.css")
    # Everything the explorers need is asked for at once, first in the page's head, while the rest
    # is still being read: their script (the explorers start when the document is parsed only if it
    # has run by then; among the theme's scripts at the end of the head it arrived late), the modules
    # it imports, and the weights of the models it runs.
    static = lambda name: context["pathto"](f"_static/explorers/{name}", 1)  # noqa: E731
    links = [f'<script type="module" async fetchpriority="high" src="{static("page.js")}?v={web.digest()}"></script>']
    links += [f'<link rel="modulepreload" href="{static(m)}">' for m in web.MODULES]
    for model in sorted({s["model"] for s in specs if s.get("model")}):
        links += [f'<link rel="preload" as="fetch" crossorigin="anonymous" href="{static(f"models/{model}.{ext}")}">'
                  for ext in ("json", "safetensors")]
    # The index of the real model's stored patterns (lib.chapters.part1.ablation.explorers), read before its first
    # picture (each sentence's patterns are a file of their own, fetched when it is shown).
    for data in sorted({s["args"]["data"] for s in specs if s.get("args", {}).get("data")}):
        links.append(f'<link rel="preload" as="fetch" crossorigin="anonymous" href="{static(f"{data}.json")}">')
    # The point set a map starts with (its "points" control), read before its first picture.
    for name in sorted({c["default"] for s in specs for row in s["rows"] for c in row if c["name"] == "points"}):
        links.append(f'<link rel="preload" as="fetch" crossorigin="anonymous" href="{static(f"points/{name}.json")}">')
    context["metatags"] = context.get("metatags", "") + "\n".join(links)


def _export(app, exception):
    if exception is None and app.builder.format == "html":
        export_site(Path(app.outdir) / "_static" / "explorers")


def _renderer_hash() -> str:
    return hashlib.sha256(web.digest().encode() + Path(__file__).read_bytes()).hexdigest()


def _outdated(app, env, added, changed, removed):
    """Every page again when the explorers' scripts or this extension changed: the starting pictures are
    drawn by the renderer, page.js's address carries the scripts' digest, and the tags are written here."""
    now = _renderer_hash()
    if getattr(env, "course_renderer", None) != now:
        env.course_renderer = now
        return sorted(env.found_docs)
    return []


def _install(app):
    """The page's modules and the generated constants, in place before any page is drawn; the table of
    the exercises the page checks (lib.exercises.site), told whether this is the class site."""
    if app.builder.format == "html":
        folder = Path(app.outdir) / "_static" / "explorers"
        web.install(folder)
        site.install(folder, getattr(app.config, "course_solutions", "fold"))


EXERCISE = re.compile(r'<div class="exercise [^"]*" id="')


def _checks(app, pagename, templatename, context, doctree):
    """A page with exercises gets the answer boxes' script (lib/explorers/js/checks.js)."""
    if not EXERCISE.search(context.get("body") or ""):
        return
    static = context["pathto"]("_static/explorers/checks.js", 1)
    if not any("explorers/explorers.css" in str(getattr(c, "filename", c)) for c in context.get("css_files", [])):
        app.add_css_file("explorers/explorers.css")
    context["metatags"] = context.get("metatags", "") + f'\n<script type="module" async src="{static}?v={web.digest()}"></script>'


def setup(app):
    app.connect("builder-inited", _install)
    app.connect("html-page-context", _page, priority=900)
    app.connect("html-page-context", _checks, priority=901)
    app.connect("env-get-outdated", _outdated)
    app.connect("build-finished", _export)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
