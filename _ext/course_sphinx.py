"""Small fixes to the HTML that Jupyter Book 1 writes, so a page loads with a clean console.

sphinx-thebe adds its inline configuration script twice to pages that contain code cells, and
the second copy fails with "Identifier 'THEBE_JS_URL' has already been declared". This drops
exact duplicates from a page's script list.

The bibliography's entries carry role="doc-biblioentry", which ARIA 1.3 deprecates (an
accessibility checker reports each one); inside their role="list" they are list items, and say so.
"""
import re

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


def setup(app):
    app.connect("html-page-context", _current_roles)
    # Late, after the extensions that add page scripts; in place, as they share the list.
    app.connect("html-page-context", _dedupe_scripts, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
