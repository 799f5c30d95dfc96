"""The Otter-Grader export, graded by the real Otter-Grader (PyPI's otter-grader, requirements-test.txt)
on a sample class of one chapter: a learner with every answer right, one with every answer wrong, and
one who forges (a verdict displayed in place of an answer, the check redefined in an answer cell, the
library's checks patched from a cell above), one who answers with objects whose `==` always says yes
(closed: 0 marks), and one who patches `importlib.reload` with the checks (open, as instructors.md says:
Otter's tests run in the learner's kernel, after the learner's code; the test measures it).
"""
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import otter  # noqa: F401  (the real package: the test is about it)

from .test_grade import LABELS, NAME, ROOT, answer_cells, insert_checks_patch, solutions, student_notebook


def forge(nb):
    cells = answer_cells(nb)
    cells["ex-search-score"].source = ("from IPython.display import HTML, display\n"
                                       "display(HTML('<div data-verdict=\"correct\">Correct</div>'))")
    cells["ex-search-winner"].source = ("from lib.exercises import Feedback\n"
                                        "class check:\n"
                                        "    winner_for_query = staticmethod(lambda a: Feedback(True, 'fine'))\n"
                                        "winner = 'Paolo'\ncheck.winner_for_query(winner)")
    for label in LABELS[2:]:
        cells[label].source = cells[label].source.replace("= ...", "= -1").replace("    ...", "    return -1")
    insert_checks_patch(nb)


ANY_EQUAL = ("class AnyAnswer:\n"
             "    __eq__ = lambda self, other: True\n"
             "    __ne__ = lambda self, other: False\n"
             "    __lt__ = __gt__ = __le__ = __ge__ = __eq__\n"
             "    __sub__ = __rsub__ = __abs__ = lambda self, *other: 0.0\n"
             "    __float__ = lambda self: 0.0\n"
             "    __hash__ = object.__hash__\n")

RELOAD_PATCH = ("import importlib, lib.exercises\n"
                "importlib.reload = lambda module: module\n"
                "lib.exercises.Feedback.verdict = lambda self: 'correct'\n")


def any_equal(nb):
    """Every value answered with an object equal to everything (the functions left as stubs)."""
    cells = answer_cells(nb)
    nb.cells.insert(nb.cells.index(cells[LABELS[0]]), nbformat.v4.new_code_cell(ANY_EQUAL))
    for cell in cells.values():
        cell.source = cell.source.replace("= ...", "= AnyAnswer()")


def reload_patched(nb):
    """Wrong answers, and a cell above that keeps the patched checks through the tests' reload."""
    cells = answer_cells(nb)
    nb.cells.insert(nb.cells.index(cells[LABELS[0]]), nbformat.v4.new_code_cell(RELOAD_PATCH))
    for cell in cells.values():
        cell.source = cell.source.replace("= ...", "= -1").replace("    ...", "    return -1")


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    out = tmp_path_factory.mktemp("otter")
    export = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), "export", "--otter",
                             str(out / "assignment"), "--chapters", "search-by-hand"],
                            capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stderr
    zip_path = out / "assignment" / "search-by-hand" / "autograder.zip"
    worked = solutions()

    def right(nb):
        for label, cell in answer_cells(nb).items():
            cell.source = worked[label]

    def wrong(nb):
        for cell in answer_cells(nb).values():
            cell.source = cell.source.replace("= ...", "= -1").replace("    ...", "    return -1")

    found = {}
    for learner, change in (("ada", right), ("bob", wrong), ("hal", forge), ("any", any_equal),
                            ("rel", reload_patched)):
        nb = student_notebook()
        change(nb)
        folder = out / learner
        folder.mkdir()
        nbformat.write(nb, folder / NAME)
        result = subprocess.run([sys.executable, "-m", "otter", "run", "-a", str(zip_path), "-o", str(folder),
                                 "--no-logo", str(folder / NAME)], capture_output=True, text=True, timeout=600,
                                cwd=folder)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        results = json.loads((folder / "results.json").read_text())
        # One entry per test file (the exercise's label), beside Otter's summary of the public tests.
        found[learner] = {t["name"]: t["score"] for t in results["tests"] if "score" in t}
    return found


def test_otter_grades_the_export_with_the_course_checks(scores):
    assert set(scores["ada"]) == set(LABELS)
    assert scores["ada"] == dict.fromkeys(LABELS, 1)
    assert scores["bob"] == dict.fromkeys(LABELS, 0)


def test_no_forgery_scores_in_otter(scores):
    assert scores["hal"] == dict.fromkeys(LABELS, 0)
    # An answer whose `==` always says yes is read as an answer equal to nothing.
    assert scores["any"] == dict.fromkeys(LABELS, 0)


def test_a_patched_reload_keeps_patched_checks_in_otter(scores):
    """The hole instructors.md states, measured: Otter's tests run in the learner's kernel, so a
    learner who patches importlib.reload and the checks earns every mark (make grade gives 0)."""
    assert scores["rel"] == dict.fromkeys(LABELS, 1)


def test_export_names_its_chapters():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), "export", "--otter", "/tmp/x",
                             "--chapters", "no-such-chapter"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "no exercises in no-such-chapter" in result.stderr
    assert "Traceback" not in result.stderr
