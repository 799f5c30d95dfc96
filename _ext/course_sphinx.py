"""Small fixes to the HTML that Jupyter Book 1 writes, so a page loads with a clean console.

sphinx-thebe adds its inline configuration script twice to pages that contain code cells, and
the second copy fails with "Identifier 'THEBE_JS_URL' has already been declared". This drops
exact duplicates from a page's script list.
"""


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


def setup(app):
    # Late, after the extensions that add page scripts; in place, as they share the list.
    app.connect("html-page-context", _dedupe_scripts, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
