"""Reader-ready notebooks and the class site.

The notebooks a learner opens must read like the website: no raw MyST, every number the page
shows in its prose, exercises numbered as on the site, solutions folded (or absent). The class
site (`make book SOLUTIONS=hide`) must hold no solution anywhere a browser or a download can reach.
"""
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "scripts"))

import notebooks  # noqa: E402
from myst_markdown import RAW_MYST, Page, Unrenderable, as_markdown_text, convert  # noqa: E402


def site_text(path: Path) -> str:
    """What a file of the site holds as text: tags stripped from HTML, cells and outputs of a notebook."""
    raw = path.read_text(errors="ignore")
    if path.suffix == ".ipynb":
        nb = json.loads(raw)
        parts = []
        for cell in nb["cells"]:
            parts.append("".join(cell["source"]))
            for out in cell.get("outputs", []):
                parts += ["".join(v) if isinstance(v, list) else str(v) for v in out.get("data", {}).values()]
                parts.append("".join(out.get("text", "")))
        raw = "\n".join(parts)
    elif path.suffix == ".html":
        raw = re.sub(r"<[^>]+>", "", raw)
    return " ".join(html.unescape(raw).split())


STRAIGHT = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def pasted_values(page: Path) -> list[str]:
    """The glued values a website page shows in its prose, outside its solutions."""
    text = page.read_text()
    text = re.sub(r'<div class="solution.*?</section>\s*</div>', "", text, flags=re.S)
    return re.findall(r'<span class="pasted-text">([^<]+)</span>', text)


def markdown_of(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_every_page_reads_like_the_website(reader_notebooks):
    """No raw MyST anywhere; each number glued into a page's prose is in its notebook's prose."""
    if not SITE.exists():
        pytest.fail("the site is not built: run `make book`")
    pages = 0
    for path in sorted(reader_notebooks.rglob("*.ipynb")):
        doc = str(path.relative_to(reader_notebooks).with_suffix(""))
        nb = nbformat.read(path, as_version=4)
        prose = markdown_of(nb)
        assert not RAW_MYST.search(prose), (doc, RAW_MYST.search(prose)[0])
        html_page = SITE / (doc + ".html")
        for value in pasted_values(html_page):
            # "<SEP>" is written "&lt;SEP&gt;"; the website curls quotes (Sphinx's smart quotes), the notebook does not.
            shown = as_markdown_text(html.unescape(value).translate(STRAIGHT))
            assert shown in prose, f"{doc}: the website shows {value!r}, the notebook does not"
        pages += 1
    assert pages == len(notebooks.toc_docnames())


def test_exercises_and_figures_are_numbered_as_on_the_website(reader_notebooks):
    for doc in ("chapters/part1/one-head", "chapters/part3/search-by-hand", "chapters/part2/three-ways"):
        site = (SITE / (doc + ".html")).read_text()
        nb = nbformat.read(reader_notebooks / (doc + ".ipynb"), as_version=4)
        prose = markdown_of(nb)
        assert re.findall(r'caption-number">Exercise (\d+)', site) == re.findall(r"^### Exercise (\d+)", prose, re.M)
        assert re.findall(r'caption-number">Fig. (\d+)', site) == re.findall(r"^\*Fig\. (\d+)\.", prose, re.M)


def test_solutions_are_folded_under_their_own_heading(reader_notebooks):
    nb = nbformat.read(reader_notebooks / "chapters/part3/search-by-hand.ipynb", as_version=4)
    roles = [c.metadata.get("course", {}).get("role") for c in nb.cells]
    from lib.exercises.catalogue import catalogue
    n = sum(e.chapter == "chapters/part3/search-by-hand" for e in catalogue())
    assert roles.count("task") == roles.count("answer") == roles.count("solution") == n == 5
    for i, cell in enumerate(nb.cells):
        if roles[i] == "solution":
            # JupyterLab hides every cell below a folded heading up to the next heading of its level
            # or above: the next exercise (###) or section (##) ends the fold.
            assert cell.metadata[notebooks.FOLDED] is True and cell.source.startswith("#### Solution to Exercise")
            assert roles[i - 1] == "answer"
            following = [c for c in nb.cells[i + 1:] if c.metadata.get("course", {}).get("role") == "task"]
            end = nb.cells.index(following[0]) if following else len(nb.cells)
            assert all(not (c.cell_type == "markdown" and re.match(r"#{1,4} ", c.source)) for c in nb.cells[i + 1:end])
    # The website hides this code behind "Show code cell source"; the notebook saves it collapsed.
    assert nb.cells[1].metadata["jupyter"]["source_hidden"] is True
    assert not any("application/papermill.record" in json.dumps(c.get("outputs", [])) for c in nb.cells)


def test_the_download_button_serves_the_reader_notebook():
    page = (SITE / "chapters/part3/search-by-hand.html").read_text()
    assert "_sources/chapters/part3/search-by-hand.ipynb" in page
    assert "urlpath=lab/tree/notebooks/chapters/part3/search-by-hand.ipynb" in page  # Binder opens it too
    nb = nbformat.read(SITE / "_sources/chapters/part3/search-by-hand.ipynb", as_version=4)
    assert nb.metadata["course"]["solutions"] == "fold"
    assert not RAW_MYST.search(markdown_of(nb))


def test_what_the_converter_cannot_render_is_refused_by_name():
    page = Page("chapters/part9/x", glue={"n": {"text/plain": "3"}}, titles={"chapters/part9/x": "X"})
    assert convert(page, "There are {glue:text}`n` of them.") == ["There are 3 of them."]
    for source, named in (("{glue:text}`missing`", "'missing'"), ("```{figure} a.png\n```", "{figure}"),
                          ("{eq}`x`", "{eq}"), ("{doc}`nowhere`", "nowhere")):
        with pytest.raises(Unrenderable, match=re.escape(named)):
            convert(page, source)


def test_a_section_target_links_and_leaves_no_trace():
    from notebooks import SECTION_TARGET
    source = "Some text.\n\n(class-plan)=\n## The plan, week by week\n\nMore."
    m = SECTION_TARGET.search(source)
    assert (m["label"], m["heading"]) == ("class-plan", "The plan, week by week")
    page = Page("chapters/part9/x", titles={"chapters/part9/x": "X", "instructors": "Teaching"},
                labels={"class-plan": ("instructors", m["heading"])})
    [out] = convert(page, source + " See {ref}`class-plan`.")
    assert "(class-plan)=" not in out and "## The plan, week by week" in out
    assert "[The plan, week by week](../../instructors.ipynb)" in out
    assert not any(RAW_MYST.search(line) for line in out.split("\n"))


def test_a_learners_edited_notebook_is_kept(tmp_path):
    first = notebooks.write(tmp_path, "fold", outputs=False, keep_edited=True)
    mine = tmp_path / "chapters/part3/search-by-hand.ipynb"
    nb = nbformat.read(mine, as_version=4)
    nb.cells[0].source += "\n\nMy own note."
    nbformat.write(nb, mine)
    again = notebooks.write(tmp_path, "fold", outputs=False, keep_edited=True)
    assert mine not in again and len(again) == len(first) - 1
    assert "My own note." in mine.read_text()


# ----------------------------------------------------------------------------- the class site
SOLUTION_MARK = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ,.;:()=+\-]{40,}")  # no quotes: the site curls them


def solution_fragments() -> list[str]:
    """Runs of at least 40 plain characters from the solutions' prose and code (reader notebooks)."""
    info = notebooks.Book.read()
    fragments = []
    for doc in ("chapters/part3/search-by-hand", "chapters/part1/one-head", "chapters/part2/hand-wired"):
        nb = notebooks.reader_notebook(doc, notebooks.executed(ROOT / (doc + ".md")), info, solutions="fold")
        inside = False
        for cell in nb.cells:
            role = cell.metadata.get("course", {}).get("role")
            # A solution runs to the next cell with a role or the next heading (an exercise set in the
            # text, before the explorer that checks it, is followed by the chapter's own cells).
            heading = cell.cell_type == "markdown" and re.match(r"#{1,4} ", cell.source)
            inside = role == "solution" or (inside and role is None and not heading)
            if inside and role != "solution":
                for line in cell.source.split("\n"):
                    fragments += [m.strip() for m in SOLUTION_MARK.findall(line)]
    return [f for f in fragments if len(f) >= 40]


@pytest.fixture(scope="module")
def class_site(tmp_path_factory):
    """`make book SOLUTIONS=hide`, built into a folder of its own from the executed cache."""
    out = tmp_path_factory.mktemp("class-site")
    env = dict(os.environ, COURSE_SOLUTIONS="hide")
    cmd = [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
           "build", str(ROOT), "-W", "-n", "--keep-going", "--path-output", str(out)]
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out / "_build" / "html"


def test_the_class_site_holds_no_solution(class_site):
    fragments = solution_fragments()
    assert len(fragments) >= 5
    default = " ".join(site_text(p) for p in (SITE / "chapters").rglob("*.html"))
    # The check can fail: every fragment is on the default site, where the solutions are folded.
    missing = [f for f in fragments if f not in default]
    assert not missing, missing[:3]
    files = [p for p in class_site.rglob("*") if p.suffix in (".html", ".js", ".ipynb", ".txt", ".md")]
    everything = " ".join(site_text(p) for p in files)
    leaked = [f for f in fragments if f in everything]
    assert not leaked, leaked[:3]
    chapter = (class_site / "chapters/part3/search-by-hand.html").read_text()
    assert len(re.findall(r'class="exercise (?:\w+ )?admonition"', chapter)) == 5 and 'class="solution' not in chapter
    assert "download-source-button" not in chapter
    # Its boxes are for practice, and a page with an exercise says so; the default site does not.
    assert "Answer boxes are for practice" in chapter
    assert "Answer boxes are for practice" not in (SITE / "chapters/part3/search-by-hand.html").read_text()
    # No launch button (Binder opens the reader notebook, solutions folded) and no link to the sources.
    assert "mybinder.org" in (SITE / "chapters/part3/search-by-hand.html").read_text()    # the default site has it
    assert "mybinder.org" not in chapter and "launch-buttons" not in chapter
    assert "source-repository-button" not in chapter and "source-issues-button" not in chapter
    nb = nbformat.read(class_site / "_sources/chapters/part3/search-by-hand.ipynb", as_version=4)
    assert nb.metadata["course"]["solutions"] == "absent"


def test_the_class_site_names_nothing_it_removed(class_site):
    """The class site leaves out the instructors' page (what grading does not protect against is for the
    instructor) and the launch button, and no page of it points to either: no rocket, no Binder, no
    link to the page. The default site has all of them (the test can fail)."""
    default_intro, intro = site_text(SITE / "intro.html"), site_text(class_site / "intro.html")
    assert "rocket icon" in default_intro and "instructor guide" in default_intro
    assert (SITE / "instructors.html").exists() and "does not protect against" in site_text(SITE / "instructors.html")
    assert not (class_site / "instructors.html").exists()
    assert "download icon" in intro
    for path in class_site.rglob("*"):
        if path.suffix == ".html":         # what a page shows
            text, words = site_text(path), ("rocket", "Binder", "instructors.html", "does not protect against",
                                            "Teaching with the course")
        elif path.suffix in (".js", ".txt"):  # the search index among them (the pages' scripts hold both sites' texts)
            text, words = path.read_text(errors="replace"), ("instructors.html", "does not protect against")
        else:
            continue
        for word in words:
            assert word not in text, (path.relative_to(class_site), word)
