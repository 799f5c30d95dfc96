"""Reader-ready notebooks: what a learner opens in JupyterLab, Binder or a hub, and downloads.

The chapters are written in MyST Markdown for the website. A notebook viewer shows MyST raw, and
it cannot read a glued value, so the notebooks a learner opens are generated from the sources and
from the build's executed copies of them (the jupyter-cache in _build/.jupyter_cache):

- every glued number written into the prose, formatted as on the website; citations, links,
  notes and glossaries as plain Markdown (`myst_markdown`, `citations`);
- each exercise under its own heading, its answer cell right below it, tagged with the
  exercise's label and kind in the cell's metadata (`course.exercise`, `course.kind`);
- each solution under a "Solution" heading that is saved folded (JupyterLab's collapsed-heading
  state), or left out altogether;
- code the website hides is saved with its input collapsed; outputs are those of the build,
  less the glue records and the explorers' widgets (which come alive when the cell runs).

    python scripts/notebooks.py reader [OUT]    reader notebooks, solutions folded, outputs kept (default notebooks/)
    python scripts/notebooks.py student [OUT]   handouts: no solutions, no outputs (default student/)

`reader` executes first whatever chapter the cache lacks. `student` executes nothing: a handout has no
outputs, and the numbers its prose shows are those of the book's last build (its execution cache),
so it is written in seconds; a chapter the cache lacks (the book never built here, or the chapter's
code changed since) stops it with one line that says to run `make book`. A reader notebook that the
learner has changed since it was written is kept, not overwritten (the manifest in OUT remembers what
was written). The website's download button serves the same reader notebooks (`_ext/course_notebooks.py`).
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chapter_cache  # noqa: E402
from citations import Bibliography  # noqa: E402
from myst_markdown import (Exercise, Page, SolutionEnd, SolutionStart, Unrenderable,  # noqa: E402
                           check_rendered, convert, convert_inline, split_directive, _PARSER, DIRECTIVE)

ROOT = chapter_cache.ROOT
READER_DIR = ROOT / "notebooks"
STUDENT_DIR = ROOT / "student"
MANIFEST = ".generated.json"
REFERENCES_DOC = "chapters/references"
BIBFILE = ROOT / "chapters" / "references.bib"
# The cell metadata key JupyterLab saves a folded heading under (packages/cells, MarkdownCell).
FOLDED = "jp-MarkdownHeadingCollapsed"
WIDGET = "application/vnd.jupyter.widget-view+json"
EXPLORER_NOTE = "*The explorer comes alive when this cell runs: run the notebook from the top.*"


# ----------------------------------------------------------------------------- the book
def toc_docnames(root: Path = ROOT) -> list[str]:
    """Every page of the book, in the order of the table of contents (the root page first)."""
    toc = (root / "_toc.yml").read_text()
    root_doc = re.search(r"^root:\s*(\S+)", toc, re.M)
    return ([root_doc[1]] if root_doc else []) + re.findall(r"file:\s*(\S+)", toc)


def title_of(text: str, fallback: str) -> str:
    m = re.search(r"^# (.+)$", text, re.M)
    return m[1].strip() if m else fallback


def directives_in(text: str, names: set[str]):
    """(name, argument, options) of each top-level directive in `names`, in order."""
    for token in _PARSER.parse(text):
        if token.level == 0 and token.type in ("fence", "colon_fence"):
            m = DIRECTIVE.match(token.info.strip())
            if m and m["name"] in names:
                yield m["name"], m["argument"], split_directive(token.content.rstrip("\n"))[0]


@dataclass
class Book:
    """What one page needs to know about the others: titles, exercise and figure numbers."""
    titles: dict
    labels: dict           # exercise label -> (docname, "Exercise N"); section label -> (docname, heading)
    exercise_number: dict  # label -> N, numbered through the book as the website numbers them
    figure_number: dict    # (docname, cell index) -> N
    bibliography: Bibliography

    @classmethod
    def read(cls, root: Path = ROOT) -> "Book":
        titles, labels, numbers, figures = {}, {}, {}, {}
        for doc in toc_docnames(root):
            path = root / (doc + ".md")
            if not path.exists():
                continue
            text = path.read_text()
            titles[doc] = title_of(text, doc)
            for index, cell in enumerate(read_source(path).cells):
                if cell.cell_type == "markdown":
                    # A section target, `(label)=` above a heading: {ref} shows the heading's text.
                    for m in SECTION_TARGET.finditer(cell.source):
                        labels[m["label"]] = (doc, m["heading"].strip())
                    for _, _, options in directives_in(cell.source, {"exercise"}):
                        numbers[options["label"]] = len(numbers) + 1
                        labels[options["label"]] = (doc, f"Exercise {numbers[options['label']]}")
                elif (cell.metadata.get("mystnb", {}).get("figure") or {}).get("caption"):
                    figures[(doc, index)] = len(figures) + 1
        return cls(titles, labels, numbers, figures, Bibliography(BIBFILE, REFERENCES_DOC))


SECTION_TARGET = re.compile(r"^\((?P<label>[\w.:-]+)\)=[ \t]*\n+#+[ \t]+(?P<heading>.+)$", re.M)


# ----------------------------------------------------------------------------- the executed chapters
def read_source(path: Path):
    """A page as myst-nb reads it (so that its cells hash as in the execution cache)."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    return read_myst_markdown_notebook(path.read_text(), MdParserConfig(enable_extensions=chapter_cache.MYST_EXTENSIONS),
                                       add_source_map=True, path=path)


def solution_code(path: Path) -> dict[str, str]:
    """Each exercise's worked solution code (its label: the code cells between its solution-start and
    solution-end), read from the chapter's source."""
    code, current = {}, None
    for cell in read_source(path).cells:
        if cell.cell_type == "markdown":
            if "{solution-start}" in cell.source:
                current = cell.source.split("{solution-start}")[1].split()[0]
            if "{solution-end}" in cell.source:
                current = None
        elif current:
            code[current] = code.get(current, "") + cell.source + "\n"
    return code


def has_code(nb) -> bool:
    return any(c.cell_type == "code" for c in nb.cells)


def executed(path: Path, cache_dir: Path = chapter_cache.CACHE):
    """The page with the outputs of its last execution in the cache, or the bare page if it has no code."""
    from jupyter_cache import get_cache

    nb = read_source(path)
    if not has_code(nb):
        return nb
    try:
        return get_cache(str(cache_dir)).merge_match_into_notebook(nb)[1]
    except KeyError:
        raise Unrenderable(f"{path.relative_to(ROOT)} has not been executed: run `make book` "
                           "(or `python scripts/notebooks.py reader`, which executes it)") from None


def ensure_executed() -> None:
    """Execute, into the build's cache, every chapter it lacks (as the book's build would)."""
    key = chapter_cache.library_key()
    if not chapter_cache.KEY_FILE.exists() or chapter_cache.KEY_FILE.read_text() != key:
        # The same rule as the build: a change in lib/ or data/ re-executes every chapter.
        shutil.rmtree(chapter_cache.CACHE, ignore_errors=True)
        shutil.rmtree(chapter_cache.BUILD / ".doctrees", ignore_errors=True)
    ran, seconds = chapter_cache.pre_execute(include_alone=True)
    if ran:
        print(f"executed {ran} chapters in {seconds:.1f} s")
    chapter_cache.BUILD.mkdir(exist_ok=True)
    chapter_cache.KEY_FILE.write_text(key)


# ----------------------------------------------------------------------------- one notebook
# The stub's scaffolding: the line that imports the chapter's checks as `check`. A notebook gives it a
# cell of its own above the answer cell, so that a learner who replaces the whole answer cell keeps it
# (and every later `check.` call still runs).
CHECK_IMPORT = re.compile(r"^(?:from[ \t]+lib\.[\w.]+[ \t]+import[ \t]+checks[ \t]+as[ \t]+check"
                          r"|import[ \t]+lib\.[\w.]+[ \t]+as[ \t]+check)[ \t]*(?:#.*)?$", re.M)


def split_stub(source: str) -> tuple[str, str]:
    """(the stub's `... as check` import lines, the rest of the stub: the learner's answer cell)."""
    setup = [m.group(0).strip() for m in CHECK_IMPORT.finditer(source)]
    if not setup:
        return "", source
    answer = CHECK_IMPORT.sub("", source)
    return "\n".join(setup), re.sub(r"\n{3,}", "\n\n", answer).strip("\n")


def stub_cells(source: str, label: str, kind: str | None = None) -> list:
    """The code cells a notebook gives an exercise's stub: its check's import in a cell of its own
    (role "setup"), then the answer cell (role "answer"), both labelled with the exercise."""
    setup, answer = split_stub(source)
    cells = []
    if setup:
        cells.append(nbformat.v4.new_code_cell(setup, metadata={"course": {"exercise": label, "role": "setup"}}))
    cells.append(nbformat.v4.new_code_cell(answer, metadata={"course": {"exercise": label, "kind": kind,
                                                                         "role": "answer"}}))
    return cells


def glue_records(cell) -> tuple[dict, list]:
    """The values a code cell glued (key -> mime bundle) and its outputs without the glue records."""
    from myst_nb.ext.glue import extract_glue_data_cell

    cell = copy.deepcopy(cell)
    found = extract_glue_data_cell(cell)
    return {key: output["data"] for key, output in found}, cell.get("outputs", [])


def reader_outputs(page: Page, outputs: list) -> list:
    """The build's outputs as a notebook shows them: widgets replaced by a note (they need a
    kernel), Markdown outputs rewritten like the prose."""
    kept = []
    for output in outputs:
        data = output.get("data", {})
        if WIDGET in data:
            kept.append(nbformat.v4.new_output("display_data", data={"text/markdown": EXPLORER_NOTE}))
            continue
        if "text/markdown" in data:
            output = copy.deepcopy(output)
            output["data"]["text/markdown"] = convert_inline(page, data["text/markdown"])
        kept.append(output)
    return kept


def hidden_input(tags: list) -> bool:
    return bool({"hide-input", "remove-input", "remove-cell", "hide-cell"} & set(tags))


def reader_notebook(doc: str, nb, bookinfo: Book, *, solutions: str = "fold", outputs: bool = True):
    """The executed page `nb` as a notebook that reads like the website.

    solutions: "fold" (under a heading saved folded) or "absent" (left out, prose and code).
    outputs: keep the build's outputs (True), or save every code cell unexecuted (False).
    """
    assert solutions in ("fold", "absent")
    cited: list[str] = []
    # A notebook without solutions is the class's (a handout, the class site's download): its pages'
    # text for the class site (`{only} class_site`), as that site shows it.
    page = Page(doc, titles=bookinfo.titles, labels=bookinfo.labels,
                bibliography=lambda: bookinfo.bibliography.listing(),
                tags=frozenset({"class_site"}) if solutions == "absent" else frozenset())
    page.cite = bookinfo.bibliography.citer(page.link(REFERENCES_DOC), cited)
    for cell in nb.cells:
        if cell.cell_type == "code":
            page.glue.update(glue_records(cell)[0])

    cells = []
    solving = None          # the label of the exercise whose solution is being read
    exercise = None         # the exercise whose answer cell comes next
    closed = None           # the label of a folded solution that just ended

    def add(cell, *, starts_section: bool = False):
        """Append a cell; right after a folded solution only a heading may come (it ends the fold)."""
        nonlocal closed
        if closed and not starts_section:
            raise Unrenderable(f"{doc}: text after the solution of {closed} must start with a "
                               "heading (a notebook folds a solution up to the next heading)")
        closed = None
        cells.append(cell)

    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for part in convert(page, cell.source):
                if isinstance(part, Exercise):
                    if solving:
                        raise Unrenderable(f"{doc}: exercise {part.label} starts inside a solution")
                    exercise = part
                    kind = f" ({part.kind})" if part.kind else ""
                    md = nbformat.v4.new_markdown_cell(
                        f"### Exercise {bookinfo.exercise_number[part.label]}{kind}\n\n{part.text}",
                        metadata={"course": {"exercise": part.label, "kind": part.kind, "role": "task"}})
                    add(md, starts_section=True)
                elif isinstance(part, SolutionStart):
                    solving = part.label
                    if solutions == "fold":
                        number = bookinfo.exercise_number.get(part.label)
                        if number is None:
                            raise Unrenderable(f"{doc}: a solution to {part.label!r}, which is no exercise")
                        add(nbformat.v4.new_markdown_cell(
                            f"#### Solution to Exercise {number}",
                            metadata={FOLDED: True, "course": {"exercise": part.label, "role": "solution"}}),
                            starts_section=True)
                elif isinstance(part, SolutionEnd):
                    if not solving:
                        raise Unrenderable(f"{doc}: a solution-end without its solution-start")
                    closed = solving if solutions == "fold" else None
                    solving = None
                elif not (solving and solutions == "absent"):
                    add(nbformat.v4.new_markdown_cell(part),
                        starts_section=bool(re.match(r"#{1,4} ", part)))
            continue
        if solving and solutions == "absent":
            continue
        tags = list(cell.metadata.get("tags", []))
        metadata = {}
        source = cell.source
        if "exercise-stub" in tags:
            if exercise is None:
                raise Unrenderable(f"{doc}: an answer cell (exercise-stub) before any exercise")
            *setup, answer = stub_cells(cell.source, exercise.label, exercise.kind)
            for c in setup:
                add(c)
            source, metadata = answer.source, dict(answer.metadata)
            tags = [t for t in tags if t != "remove-cell"]
            exercise = None
        elif hidden_input(tags):
            metadata["jupyter"] = {"source_hidden": True}
        if tags:
            metadata["tags"] = tags
        code = nbformat.v4.new_code_cell(source, metadata=metadata)
        if outputs:
            code.outputs = reader_outputs(page, glue_records(cell)[1])
            code.execution_count = cell.get("execution_count")
        add(code)
        caption = (cell.metadata.get("mystnb", {}).get("figure") or {}).get("caption")
        if caption:
            number = bookinfo.figure_number[(doc, index)]
            add(nbformat.v4.new_markdown_cell(f"*Fig. {number}. {convert_inline(page, caption)}*",
                                              metadata={"course": {"role": "caption"}}))
    if solving:
        raise Unrenderable(f"{doc}: the solution to {solving} has no solution-end")
    if cited and doc != REFERENCES_DOC:
        cells.append(nbformat.v4.new_markdown_cell(
            "## Works cited\n\n" + bookinfo.bibliography.listing(cited), metadata={"course": {"role": "references"}}))

    for c in cells:
        if c.cell_type == "markdown":
            check_rendered(doc, c.source)
        for output in c.get("outputs", []):
            check_rendered(doc, output.get("data", {}).get("text/markdown", ""))
    out = nbformat.v4.new_notebook(cells=cells)
    out.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python"},
        "course": {"source": doc + ".md", "solutions": solutions, "outputs": outputs},
    }
    return out


# ----------------------------------------------------------------------------- writing them
def notebooks(solutions: str, outputs: bool, root: Path = ROOT):
    """(docname, notebook) for every page of the chapter_cache."""
    info = Book.read(root)
    for doc in toc_docnames(root):
        path = root / (doc + ".md")
        if path.exists():
            yield doc, reader_notebook(doc, executed(path), info, solutions=solutions, outputs=outputs)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write(out: Path, solutions: str, outputs: bool, keep_edited: bool) -> list[Path]:
    """Write every page's notebook under `out` (mirroring the book's folders, so links work).

    With `keep_edited`, a notebook changed since this function wrote it is left alone.
    """
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    written, kept = [], []
    for doc, nb in notebooks(solutions, outputs):
        target = out / (doc + ".ipynb")
        rel = doc + ".ipynb"
        if keep_edited and target.exists() and manifest.get(rel) != digest(target):
            kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        manifest[rel] = digest(target)
        written.append(target)
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    print(f"wrote {len(written)} notebooks in {out}")
    for target in kept:
        print(f"  kept {target.relative_to(out)}: changed since it was written (delete it to get the new one)")
    return written


def write_downloads(sources: Path, docnames: list[str], solutions: str) -> None:
    """The website's downloadable notebooks (its _sources folder), for the pages just written."""
    info = Book.read(ROOT)
    for doc in docnames:
        nb = reader_notebook(doc, executed(ROOT / (doc + ".md")), info, solutions=solutions, outputs=True)
        nbformat.write(nb, sources / (doc + ".ipynb"))


def reader(out: Path = READER_DIR) -> list[Path]:
    ensure_executed()
    return write(out, "fold", outputs=True, keep_edited=True)


def student(out: Path = STUDENT_DIR) -> list[Path]:
    """Handouts: every page, solutions and outputs left out (the answer cells stay, labelled). Nothing
    is executed: the prose's numbers come from the book's last build, and a chapter it lacks stops
    this with one line (`make book` executes it)."""
    missing = not_executed()
    if missing:
        raise Unrenderable(f"{len(missing)} chapters have no executed copy from a build of the book here (never built, "
                           f"or changed since): run `make book`, then `make student` again: {', '.join(missing[:5])}"
                           + (", ..." if len(missing) > 5 else ""))
    if not chapter_cache.KEY_FILE.exists() or chapter_cache.KEY_FILE.read_text() != chapter_cache.library_key():
        print("note: lib/, data/ or the installed packages changed since the book was last built: the handouts' "
              "prose shows that build's numbers (`make book` brings them up to date)", file=sys.stderr)
    return write(out, "absent", outputs=False, keep_edited=False)


def not_executed(cache_dir: Path = chapter_cache.CACHE) -> list[str]:
    """The pages with code that the build's execution cache has no copy of (as they are now)."""
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_dir))
    missing = []
    for path in chapter_cache.chapters():
        try:
            cache.match_cache_notebook(read_source(path))
        except KeyError:
            missing.append(str(path.relative_to(ROOT)))
    return missing


def main(argv: list[str]) -> int:
    tasks = {"reader": reader, "student": student}
    if not argv or argv[0] not in tasks:
        print(f"usage: python scripts/notebooks.py {{{','.join(tasks)}}} [OUT]", file=sys.stderr)
        return 2
    try:
        tasks[argv[0]](*(Path(a).resolve() for a in argv[1:2]))
    except Unrenderable as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
