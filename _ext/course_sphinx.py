"""Small fixes to the HTML that Jupyter Book 1 writes, so a page loads with a clean console.

sphinx-thebe adds its inline configuration script twice to pages that contain code cells, and
the second copy fails with "Identifier 'THEBE_JS_URL' has already been declared". This drops
exact duplicates from a page's script list.

The theme loads fontawesome.js (1.49 MB, every icon of Font Awesome as SVG drawn by script) on every
page, for about fifteen icons; its own stylesheet already draws the same icons from Font Awesome's web
fonts (the <i class="fa-solid fa-sun"> the theme writes). The script is dropped from every page and
from the site: the icons come from the fonts, fetched only by a page that shows one of their glyphs.
Those fonts hold every icon too (the solid and brands fonts a page fetches: 274 KB): they are cut to the
glyphs the site shows (`_subset_icon_fonts`: the icons named by a class in a page or a script, and those
the stylesheets draw themselves, an admonition's or a link's), written as WOFF, and the stylesheet's
@font-face rules point at the cut fonts.

sphinx-exercise gives every exercise's body id="exercise-content" (and every solution's
id="solution-content"): an id must be unique in a page, so they are numbered.

The bibliography's entries carry role="doc-biblioentry", which ARIA 1.3 deprecates (an
accessibility checker reports each one); inside their role="list" they are list items, and say so.
"""
import html
import re
import urllib.parse
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


# A rule of Font Awesome's table of icons: `.fa-sun:before{content:"\f185"}` (several selectors may share one).
_ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+::?before,?)+)\{content:"\\([0-9a-f]{4,5})"\}')
_ICON_CLASS = re.compile(r"\bfa-[a-z0-9]+(?:-[a-z0-9]+)*\b")
# An icon a stylesheet draws itself: an escaped or a literal private-use character in a content or a variable.
_PRIVATE = re.compile(r'\\([ef][0-9a-f]{3})\b|([\ue000-\uf8ff])')
_FACE = re.compile(r'@font-face\{([^}]*?)src:url\(\.\./vendor/fontawesome/webfonts/(fa-[a-z]+-\d+)\.woff2\) format\("woff2"\),'
                   r'url\(\.\./vendor/fontawesome/webfonts/\2\.ttf\) format\("truetype"\)\}')


def icons_shown(out: Path) -> set[int]:
    """The code points of every icon the built site can show: each icon class a page or a script names
    (looked up in the theme's table), and each glyph a stylesheet draws outside that table."""
    table, drawn = {}, set()
    for css in (out / "_static").rglob("*.css"):
        text = css.read_text(encoding="utf-8", errors="replace")
        for selectors, code in _ICON_RULE.findall(text):
            for name in re.findall(r"\.(fa-[a-z0-9-]+)::?before", selectors):
                table[name] = int(code, 16)
        rest = _ICON_RULE.sub("", text)
        drawn |= {int(esc, 16) if esc else ord(lit) for esc, lit in _PRIVATE.findall(rest)}
    named = set()
    for path in list(out.rglob("*.html")) + list((out / "_static").rglob("*.js")):
        named |= set(_ICON_CLASS.findall(path.read_text(encoding="utf-8", errors="replace")))
    return drawn | {table[n] for n in named if n in table}


def _subset_icon_fonts(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    try:
        from fontTools import subset   # deferred: only the HTML build cuts the fonts (fontTools comes with matplotlib)
    except ImportError:
        return
    out = Path(app.outdir)
    fonts = out / "_static" / "vendor" / "fontawesome" / "webfonts"
    css = out / "_static" / "styles" / "pydata-sphinx-theme.css"
    if not fonts.is_dir() or not css.is_file():
        return
    codes = icons_shown(out)
    for woff2 in fonts.glob("fa-*.woff2"):
        options = subset.Options()
        options.flavor, options.layout_features, options.name_IDs = "woff", ["*"], ["*"]
        font = subset.load_font(str(fonts / (woff2.stem + ".ttf")), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codes)
        subsetter.subset(font)
        subset.save_font(font, str(fonts / (woff2.stem + ".woff")), options)
        woff2.unlink()
        (fonts / (woff2.stem + ".ttf")).unlink(missing_ok=True)
    text = css.read_text(encoding="utf-8")
    css.write_text(_FACE.sub(lambda m: f'@font-face{{{m[1]}src:url(../vendor/fontawesome/webfonts/{m[2]}.woff) format("woff")}}',
                             text), encoding="utf-8")


def _index_page(app, exception):
    """The site's root, index.html: a page that sends the reader on to the book's first page, with a head of its own
    (the site's icon above all). sphinx-external-toc writes a bare redirect when none exists (it runs after this, at
    the default priority, and leaves this one); with no icon named, a browser asks for /favicon.ico, which the site
    does not serve: a 404 in the console of the site's front door, whenever it asks before the redirect. The icon
    is written into the page (a data: address): a request for a file would be cut off by the redirect."""
    if exception is not None or app.builder.format != "html" or app.config.root_doc == "index":
        return
    first = f"{app.config.root_doc}.html"
    title = html.escape(str(app.config.html_title or app.config.project))
    svg = Path(app.outdir) / "_static" / "favicon.svg"
    icon = "data:image/svg+xml," + urllib.parse.quote(svg.read_text(encoding="utf-8")) if svg.is_file() else "data:,"
    (Path(app.outdir) / "index.html").write_text(
        f"""<!doctype html>
<html lang="{html.escape(app.config.language or 'en')}">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="icon" href="{html.escape(icon)}">
<meta http-equiv="Refresh" content="0; url={first}">
</head>
<body><p><a href="{first}">{title}</a></p></body>
</html>
""", encoding="utf-8")


def setup(app):
    app.connect("html-page-context", _current_roles)
    app.connect("html-page-context", _unique_ids)
    # Late, after the extensions that add page scripts; in place, as they share the list.
    app.connect("html-page-context", _dedupe_scripts, priority=999)
    app.connect("build-finished", _drop_fontawesome_js)
    app.connect("build-finished", _subset_icon_fonts)
    app.connect("build-finished", _index_page, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
