"""The student notebooks (`make student`) and the built book's exercises: no solution in a handout, every
handout runs and reports its exercises unanswered, and the book shows every solution as correct."""

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import book  # noqa: E402  (scripts/, put on the path above)
import notebooks  # noqa: E402


@pytest.fixture(scope="module")
def student_notebooks(tmp_path_factory):
    """The handouts `make student` writes: the chapters with exercises (other pages come along)."""
    out = tmp_path_factory.mktemp("student")
    book.student(out)
    return [p for p in sorted(out.rglob("*.ipynb"))
            if any(c.get("metadata", {}).get("course", {}).get("role") == "answer"
                   for c in nbformat.read(p, as_version=4).cells)]


def stub_checks(nb) -> int:
    """How many verdicts the answer cells of a notebook print: one per `check.` call."""
    return sum(len(re.findall(r"^check\.\w+\(", c.source, re.M)) for c in nb.cells
               if c.cell_type == "code" and c.metadata.get("course", {}).get("role") == "answer")


def answer_stubs(text: str) -> int:
    """The learner's places to answer: a value left as `...`, or a function whose body is `...`."""
    return text.count("= ...") + len(re.findall(r"^def \w+\(.*\):\n    \.\.\.", text, re.M))


def test_student_notebooks_have_no_solutions(student_notebooks):
    names = [p.stem for p in student_notebooks]
    for chapter in ("what-an-embedding-is", "hand-wired", "three-ways", "residual-path", "real-language", "gram-schmidt-by-hand", "why-attention", "bigrams", "one-head", "many-heads", "shapes-and-cache", "circuits", "ablation",
                    "search-by-hand", "mechanism", "results-page", "hallucination", "lever", "scale", "tools",
                    "practice"):
        assert chapter in names, f"no student notebook for {chapter}"
    for path in student_notebooks:
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        assert "Solution to" not in text and "solution-start" not in text, path.stem
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
        tasks = [c for c in nb.cells if c.metadata.get("course", {}).get("role") == "task"]
        answers = [c for c in nb.cells if c.metadata.get("course", {}).get("role") == "answer"]
        assert len(tasks) >= 2, f"{path.stem}: every chapter ends with exercises"
        assert [c.metadata["course"]["exercise"] for c in answers] == [c.metadata["course"]["exercise"] for c in tasks]
        assert answer_stubs(text) >= len(tasks), f"{path.stem}: every answer stub stays in the student notebook"
    nb = nbformat.read(student_notebooks[names.index("search-by-hand")], as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "answer = float(" not in text and "lo, hi = 1.0, 100.0" not in text
    assert text.count("= ...") == 4 and stub_checks(nb) == 5


# A student notebook is its chapter without the solutions. Executing all 21 again took 700 s of CI;
# instead each is read with the outputs of the build's own execution (solutions left out, outputs
# kept), and what could make the two runs differ is ruled out: a solution that binds or changes a
# name a later cell of the handout reads. One handout is still executed for real, in a fresh kernel
# in its own folder (and the grader's test runs handouts with answers).
def top_level_bindings(tree) -> tuple[set, set]:
    """(names a cell binds at its top level, names it changes in place: x.a = ..., x[i] = ..., x += ...)."""
    import ast

    bound, changed = set(), set()
    scoped = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
              ast.DictComp, ast.GeneratorExp)

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            return
        if isinstance(node, scoped):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            root = node
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name):
                changed.add(root.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return bound, changed


def names_read(tree) -> set:
    import ast
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def solution_leaks(nb) -> list[str]:
    """Names a solution's code binds or changes that a later cell outside the solutions reads before
    binding them again: the handout, which has no solutions, would run differently there."""
    import ast

    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager()
    leaked, found, inside, imported = {}, [], False, set()
    for cell in nb.cells:
        role = cell.metadata.get("course", {}).get("role")
        if role == "solution":
            inside = True
            continue
        if cell.cell_type == "markdown":
            if re.match(r"#{1,4} ", cell.source):
                inside = False
            continue
        # Statement by statement: a name the cell binds before it reads it is its own.
        for statement in ast.parse(python.transform_cell(cell.source)).body:
            bound, changed = top_level_bindings(statement)
            is_import = isinstance(statement, (ast.Import, ast.ImportFrom))
            if inside:
                # An import the handout has already made binds the same module again: harmless.
                if not (is_import and ast.dump(statement) in imported):
                    leaked.update({name: cell.source.splitlines()[0] for name in bound | changed})
                continue
            if is_import:
                imported.add(ast.dump(statement))
            found += [f"{name!r} (from the solution cell starting {leaked[name]!r})"
                      for name in sorted(names_read(statement) & set(leaked))]
            for name in bound:
                leaked.pop(name, None)
    return sorted(set(found))


def test_student_notebooks_run_and_report_unanswered():
    """Every handout, with its build's outputs: each answer cell says it is not answered yet, no cell
    shows an error, and no solution (absent from the handout) feeds a later cell."""
    info = notebooks.Book.read()
    checked = 0
    for doc in notebooks.toc_docnames():
        path = ROOT / (doc + ".md")
        if not path.exists():
            continue
        ran = notebooks.executed(path)
        handout = notebooks.reader_notebook(doc, ran, info, solutions="absent", outputs=True)
        expected = stub_checks(handout)
        if not expected:
            continue
        outputs = " ".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                           for c in handout.cells if c.cell_type == "code" for o in c.outputs)
        assert outputs.count("Not answered yet") == expected, (doc, outputs[-2000:])
        assert "error" not in [o.get("output_type") for c in handout.cells for o in c.get("outputs", [])], doc
        leaks = solution_leaks(notebooks.reader_notebook(doc, ran, info, solutions="fold", outputs=False))
        assert not leaks, f"{doc}: a later cell reads what a solution made: {leaks}"
        checked += 1
    assert checked >= 21


def test_the_leak_check_can_fail():
    cells = [nbformat.v4.new_code_cell("lm = 1"),
             nbformat.v4.new_markdown_cell("#### Solution", metadata={"course": {"role": "solution"}}),
             nbformat.v4.new_code_cell("answer = 2\nlm.model.x = 3\nimport numpy as np\ndef helper():\n    inner = 1"),
             nbformat.v4.new_markdown_cell("### Exercise 2"),
             nbformat.v4.new_code_cell("print(answer, lm, np, [inner for inner in range(2)])\nhelper()")]
    found = solution_leaks(nbformat.v4.new_notebook(cells=cells))
    assert sorted(f.split()[0] for f in found) == ["'answer'", "'helper'", "'lm'", "'np'"], found
    cells[-1].source = "answer = 0\nprint(answer)"
    assert solution_leaks(nbformat.v4.new_notebook(cells=cells)) == []


def test_a_student_notebook_runs_in_a_fresh_kernel(student_notebooks):
    """One handout, executed for real from its own folder, as a learner opens it."""
    from nbclient import NotebookClient

    path = next(p for p in student_notebooks if p.stem == "search-by-hand")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = " ".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                       for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert outputs.count("Not answered yet") == stub_checks(nb) == 5
    assert "error" not in [o.get("output_type") for c in nb.cells for o in c.get("outputs", [])]


def built_chapters():
    site = ROOT / "_build" / "html" / "chapters"
    return sorted(site.rglob("*.html")) if site.exists() else []


def test_the_book_shows_every_solution_as_correct():
    pages = built_chapters()
    if not pages:
        pytest.fail("the site is not built: run `make book`")
    with_exercises = 0
    for html in pages:
        text = html.read_text()
        assert "Not yet" not in text and "Not answered yet" not in text, f"{html.name}: a solution does not pass its check"
        exercises = len(re.findall(r'class="exercise (?:\w+ )?admonition"', text))
        if exercises:
            with_exercises += 1
            assert text.count("<strong>Correct</strong>") >= exercises, html.name
    assert with_exercises >= 15
    text = (ROOT / "_build" / "html" / "chapters" / "part3" / "search-by-hand.html").read_text()
    from lib.exercises.catalogue import catalogue
    in_chapter = [e for e in catalogue() if e.chapter == "chapters/part3/search-by-hand"]
    assert text.count("<strong>Correct</strong>") == len(in_chapter) == 5


def test_make_student_executes_nothing(tmp_path, monkeypatch):
    """The handouts are written from the sources and the numbers of the book's last build: no chapter is
    executed (a chapter the build has no copy of stops it, with one line that says to run make book)."""
    import chapter_cache

    monkeypatch.setattr(chapter_cache, "pre_execute", lambda *a, **k: pytest.fail("make student executed a chapter"))
    assert len(notebooks.student(tmp_path / "student")) >= 21
    assert notebooks.not_executed(tmp_path / "no-build") == [str(p.relative_to(ROOT)) for p in chapter_cache.chapters()]
    monkeypatch.setattr(notebooks, "not_executed", lambda: ["chapters/part3/lever.md"])
    with pytest.raises(notebooks.Unrenderable, match="run `make book`, then `make student` again: chapters/part3/lever.md"):
        notebooks.student(tmp_path / "again")
