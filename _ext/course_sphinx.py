"""Small fixes to the HTML that Jupyter Book 1 writes, so a page loads with a clean console.

sphinx-thebe adds its inline configuration script twice to pages that contain code cells, and
the second copy fails with "Identifier 'THEBE_JS_URL' has already been declared". This drops
exact duplicates from a page's script list.

The theme loads fontawesome.js (1.49 MB, every icon of Font Awesome as SVG drawn by script) on every
page, for about fifteen icons; its own stylesheet already draws the same icons from Font Awesome's web
fonts (the <i class="fa-solid fa-sun"> the theme writes). The script is dropped from every page and
from the site: the icons come from the fonts, fetched only by a page that shows one of their glyphs.

sphinx-exercise gives every exercise's body id="exercise-content" (and every solution's
id="solution-content"): an id must be unique in a page, so they are numbered.

The bibliography's entries carry role="doc-biblioentry", which ARIA 1.3 deprecates (an
accessibility checker reports each one); inside their role="list" they are list items, and say so.
"""
import re
from pathlib import Path

# Roles deprecated by DPUB-ARIA 1.1 / ARIA 1.3, and what each becomes.
DEPRECATED_ROLES = {"doc-biblioentry": "listitem", "doc-endnote": "listitem"}
_ROLE = re.compile(r'role="(' + "|".join(DEPRECATED_ROLES) + r')"')


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        # Sphinx's script objects have no equality of their own: compare what they render.
        # An inline script's filename is None or "" depending on who added it.
        key = (getattr(js, "filename", str(js)) or "", repr(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    # In place: later handlers add their own scripts to this very list.
    scripts[:] = unique


def _current_roles(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body and "role=\"doc-" in body:
        context["body"] = _ROLE.sub(lambda m: f'role="{DEPRECATED_ROLES[m[1]]}"', body)


# sphinx-exercise gives every exercise's and solution's body the same id: numbered, one id per page.
_SHARED_ID = re.compile(r'<section id="(exercise|solution)-content">')


def _unique_ids(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body and '-content">' in body:
        counts = {}

        def number(m):
            counts[m[1]] = counts.get(m[1], 0) + 1
            return f'<section id="{m[1]}-content-{counts[m[1]]}">'

        context["body"] = _SHARED_ID.sub(number, body)


# The theme's tag (pydata-sphinx-theme's webpack-macros.html), with its digest and relative path.
_FONTAWESOME_JS = re.compile(r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>')


def _drop_fontawesome_js(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if "fontawesome.js" in text:
            page.write_text(_FONTAWESOME_JS.sub("", text), encoding="utf-8")
    for name in ("fontawesome.js", "fontawesome.js.map", "fontawesome.js.LICENSE.txt"):
        (out / "_static" / "scripts" / name).unlink(missing_ok=True)


def setup(app):
    app.connect("html-page-context", _current_roles)
    app.connect("html-page-context", _unique_ids)
    # Late, after the extensions that add page scripts; in place, as they share the list.
    app.connect("html-page-context", _dedupe_scripts, priority=999)
    app.connect("build-finished", _drop_fontawesome_js)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
