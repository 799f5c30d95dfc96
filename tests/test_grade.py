"""The gradebook on a fabricated class: every verdict, and no learner's notebook stops the others.

One chapter (search-by-hand, five exercises, a write among them) handed back by seven learners:
all right, all wrong, a notebook that kills its kernel, one that loops forever in an answer cell,
one with an answer cell deleted (and the rest moved around), one not returned, one not a notebook.
"""
import csv
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import notebooks  # noqa: E402

CHAPTER = "chapters/part3/search-by-hand"
NAME = "search-by-hand.ipynb"
# In the chapter's order: a verdict after a dead kernel depends on what came before.
LABELS = ["ex-search-score", "ex-search-winner", "ex-search-page", "ex-search-scale", "ex-search-temperature"]


def answer_cells(nb):
    return {c.metadata["course"]["exercise"]: c for c in nb.cells
            if c.metadata.get("course", {}).get("role") == "answer"}


def solutions(folded) -> dict:
    """Each exercise's worked solution code, from the reader notebook (solutions folded)."""
    code, current = {}, None
    for cell in folded.cells:
        role = cell.metadata.get("course", {}).get("role")
        if role == "solution":
            current = cell.metadata["course"]["exercise"]
        elif role == "task":
            current = None
        elif current and cell.cell_type == "code":
            code[current] = code.get(current, "") + cell.source + "\n"
    return code


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    info = notebooks.Book.read()
    source = notebooks.executed(ROOT / (CHAPTER + ".md"))
    student = notebooks.reader_notebook(CHAPTER, source, info, solutions="absent", outputs=False)
    worked = solutions(notebooks.reader_notebook(CHAPTER, source, info, solutions="fold", outputs=False))
    assert set(worked) == set(LABELS)
    class_dir = tmp_path_factory.mktemp("class")

    def hand_in(learner, change=None, subfolder=""):
        nb = nbformat.reads(nbformat.writes(student), 4)
        if change:
            change(nb)
        folder = class_dir / learner / subfolder
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / NAME)

    def right(nb):
        for label, cell in answer_cells(nb).items():
            cell.source = worked[label]

    def wrong(nb):
        for cell in answer_cells(nb).values():     # a value of -1, and a function that returns -1
            cell.source = cell.source.replace("= ...", "= -1").replace("    ...", "    return -1")

    def kernel_dies(nb):
        right(nb)
        answer_cells(nb)["ex-search-scale"].source = "import os\nos._exit(1)"

    def loops(nb):
        right(nb)
        answer_cells(nb)["ex-search-score"].source += "\nwhile True:\n    pass\n"

    def deleted_and_moved(nb):
        right(nb)
        cells = answer_cells(nb)
        nb.cells.remove(cells["ex-search-scale"])
        # Grading goes by the label in the cell's metadata, not by position: the last answer cell
        # moves to the very end, after a cell the learner added.
        nb.cells.remove(cells["ex-search-temperature"])
        nb.cells.append(nbformat.v4.new_code_cell("scratch = 1 + 1"))
        nb.cells.append(cells["ex-search-temperature"])

    hand_in("ada", right, subfolder="search-by-hand-assignment")   # a hub's collected layout
    hand_in("bob", wrong)
    hand_in("cat", kernel_dies)
    hand_in("dan", loops)
    hand_in("eve", deleted_and_moved)
    (class_dir / "fay").mkdir()                                     # returned nothing
    (class_dir / "gus").mkdir()
    (class_dir / "gus" / NAME).write_text("{ this is not a notebook")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), str(class_dir),
                             "--cell-timeout", "30", "--notebook-timeout", "240"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    with (class_dir / "gradebook.csv").open() as f:
        rows = {row["learner"]: row for row in csv.DictReader(f)}
    return rows, result.stdout


def test_the_gradebook_has_a_row_per_learner_and_a_column_per_exercise(graded):
    rows, out = graded
    assert sorted(rows) == ["ada", "bob", "cat", "dan", "eve", "fay", "gus"]
    assert all(label in rows["ada"] for label in LABELS)
    assert f"ada: {len(LABELS)}/{len(LABELS)} correct" in out and "gradebook.csv" in out


def test_every_verdict(graded):
    rows, _ = graded
    verdicts = {name: {label: row[label] for label in LABELS} for name, row in rows.items()}
    every = dict.fromkeys(LABELS, "correct")
    assert verdicts["ada"] == every
    assert verdicts["bob"] == dict.fromkeys(LABELS, "not yet")
    # The kernel dies in ex-search-scale's answer: what came before stands, what follows did not run.
    dies_at = LABELS.index("ex-search-scale")
    assert verdicts["cat"] == {label: "correct" if i < dies_at else "error" for i, label in enumerate(LABELS)}
    assert "kernel died" in rows["cat"]["notes"]
    # The loop is stopped by the cell's time limit; the rest of the notebook still runs.
    assert verdicts["dan"] == {**every, "ex-search-score": "error"}
    assert "ran too long" in rows["dan"]["notes"]
    assert verdicts["eve"] == {**every, "ex-search-scale": "missing"}
    assert verdicts["fay"] == dict.fromkeys(LABELS, "missing") and "not returned" in rows["fay"]["notes"]
    assert verdicts["gus"] == dict.fromkeys(LABELS, "error") and "not a readable notebook" in rows["gus"]["notes"]
    assert rows["ada"]["correct"] == str(len(LABELS)) and rows["bob"]["correct"] == "0"


def test_bad_input_gets_one_line(tmp_path):
    for args, message in (([str(tmp_path / "nowhere")], "is not a folder"),
                          ([str(tmp_path)], "no learner's folder"),
                          ([str(tmp_path), "--jobs", "0"], "at least 1")):
        (tmp_path / "x").mkdir(exist_ok=True) if "--jobs" in args else None
        result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), *args],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr, result.stderr
