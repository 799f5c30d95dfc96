"""The website's side of the reader-ready notebooks, and the class site without solutions.

- The download button's ".ipynb" is the reader-ready notebook (scripts/notebooks.py), not the
  executed MyST source that Jupyter Book copies there: numbers written in, solutions folded.
- The launch buttons (Binder, a JupyterHub) open that same notebook, `notebooks/PAGE.ipynb`,
  which binder/postBuild (and `make lab`) write from the sources.
- With COURSE_SOLUTIONS=hide (`make book SOLUTIONS=hide`) every solution is left out of the
  pages, the search index and the downloads, for a class that should not see them. The switch is
  a Sphinx config value that rebuilds every page when it changes, so a site built one way is
  never half the other. The class site also leaves out the instructors' page (the grader's limits
  are for the instructor, not the class: `FOR_INSTRUCTORS`), and the text of a page that names what
  the class site removed is written for the class site in a `{only} class_site` block (the tag is set
  here) beside its `{only} not class_site` one.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.nodes import process_only_nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)
MODES = ("fold", "hide")
CLASS_SITE_NOTE = ('<div class="admonition note course-class-note"><p class="admonition-title">Answer boxes are for '
                   'practice</p><p>The boxes on this page check your answer in your browser, and anyone can read how '
                   'they do it; they record nothing. Your marks come from the notebook you hand in, graded by your '
                   'instructor.</p></div>')
# The header buttons (sphinx-book-theme's labels) the class site leaves out.
CLASS_SITE_WITHOUT = {"download-source-button", "launch-buttons", "source-buttons", "source-repository-button",
                      "source-file-button", "source-edit-button", "source-issues-button"}
READER_FOLDER = "notebooks"   # where binder/postBuild and `make lab` write the reader notebooks


# Pages for the instructor alone, left out of the class site (the table of contents and the build).
FOR_INSTRUCTORS = ("instructors",)
CLASS_SITE_TAG = "class_site"


def _mode_from_environment(app, config):
    mode = os.environ.get("COURSE_SOLUTIONS", "").strip() or "fold"
    if mode not in MODES:
        raise ValueError(f"COURSE_SOLUTIONS={mode!r}: allowed are {', '.join(MODES)}")
    config.course_solutions = mode
    if mode == "hide":
        app.tags.add(CLASS_SITE_TAG)


def _leave_out_instructors_pages(app, config):
    """On the class site, the instructors' pages are not built and not in the table of contents (after
    sphinx-external-toc has read _toc.yml into `external_site_map`)."""
    if config.course_solutions != "hide":
        return
    site_map = getattr(config, "external_site_map", None)
    if site_map is None:
        return
    for doc in site_map.values():
        for tree in doc.subtrees:
            tree.items = [item for item in tree.items if str(item) not in FOR_INSTRUCTORS]
        doc.subtrees = [tree for tree in doc.subtrees if tree.items]
    for name in FOR_INSTRUCTORS:
        if name in site_map:
            del site_map[name]
    config["exclude_patterns"] = config["exclude_patterns"] + [f"{name}.md" for name in FOR_INSTRUCTORS]


class RemoveSolutions(SphinxTransform):
    """Drop every solution (after sphinx-exercise has gathered a gated one into one node)."""
    default_priority = 11   # sphinx-exercise's MergeGatedSolutions runs at 10

    def apply(self):
        if self.config.course_solutions != "hide":
            return
        from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node

        for kind in (solution_node, solution_start_node, solution_end_node):
            for node in list(self.document.findall(kind)):
                node.parent.remove(node)


class OnlyBeforeReferences(SphinxPostTransform):
    """Sphinx's own `{only}` processing (its OnlyNodeTransform), run before MyST resolves links (its
    resolver's priority is 9): a link in a `{only} not class_site` block to a page the class site leaves
    out is then gone before anything looks for that page."""
    default_priority = 5

    def run(self, **kwargs):
        process_only_nodes(self.document, self.app.builder.tags)


def _buttons(context):
    for group in context.get("header_buttons", []):
        yield group
        yield from group.get("buttons", [])


def _point_at_reader_notebooks(app, pagename, templatename, context, doctree):
    """Launch buttons open notebooks/PAGE.ipynb; downloads are noted for build-finished."""
    source = app.env.doc2path(pagename, base=False) if pagename in app.env.all_docs else None
    if source is None:
        return
    source = str(source).replace(os.sep, "/")
    reader = f"{READER_FOLDER}/{pagename}.ipynb"
    for button in _buttons(context):
        url = button.get("url", "")
        if button.get("text") in ("Binder", "JupyterHub", "Colab") and source in url:
            button["url"] = url.replace(source, reader)
    if context.get("ipynb_source"):
        app.env.course_downloads = getattr(app.env, "course_downloads", set()) | {pagename}
    if app.config.course_solutions == "hide":
        # The class site: no MyST source to download, no launch button (Binder opens the reader
        # notebook, solutions folded in it) and no link to the repository (the sources hold them).
        context["header_buttons"] = [group for group in context.get("header_buttons", [])
                                     if group.get("label") not in CLASS_SITE_WITHOUT]
        for group in context["header_buttons"]:
            if "buttons" in group:
                group["buttons"] = [b for b in group["buttons"] if b.get("label") not in CLASS_SITE_WITHOUT]
        # Its answer boxes check an answer in the reader's browser, where anyone can read how: practice,
        # not marks. A page with an exercise says so above its text.
        if 'class="exercise' in context.get("body", ""):
            context["body"] = CLASS_SITE_NOTE + context["body"]


def _write_downloads(app, exception):
    """Replace each downloadable notebook written in this build with its reader-ready version."""
    if exception is not None or app.builder.format != "html":
        return
    pages = sorted(getattr(app.env, "course_downloads", set()))
    app.env.course_downloads = set()
    sources = Path(app.outdir) / "_sources"
    if app.config.course_solutions == "hide":
        # The MyST sources hold the solutions: the class site publishes only the notebooks.
        for source in sources.rglob("*.md*"):
            source.unlink()
    if not pages:
        return
    scripts = Path(app.srcdir) / "scripts"
    if str(scripts) not in sys.path:
        sys.path.insert(0, str(scripts))
    import notebooks  # deferred: scripts/ joins the path only here, found from the build's app.srcdir
    from myst_markdown import Unrenderable  # deferred: as above

    solutions = "absent" if app.config.course_solutions == "hide" else "fold"
    try:
        notebooks.write_downloads(sources, pages, solutions)
    except Unrenderable as e:
        logger.warning(f"the downloadable notebook: {e}")


def setup(app):
    app.add_config_value("course_solutions", "fold", "env")
    app.connect("config-inited", _mode_from_environment)
    # After sphinx-external-toc has read the table of contents (its handler's priority is 900).
    app.connect("config-inited", _leave_out_instructors_pages, priority=950)
    app.add_transform(RemoveSolutions)
    app.add_post_transform(OnlyBeforeReferences)
    # After sphinx-book-theme has made its buttons (priority 501).
    app.connect("html-page-context", _point_at_reader_notebooks, priority=800)
    app.connect("build-finished", _write_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
