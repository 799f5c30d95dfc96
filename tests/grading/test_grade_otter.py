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

from .test_grade import LABELS, NAME, answer_cells, grade, insert_checks_patch, solutions, student_notebook


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
    assert grade.export_main(["--otter", str(out / "assignment"), "--chapters", "search-by-hand"]) == 0
    zip_path = out / "assignment" / "search-by-hand" / "autograder.zip"
    worked = solutions()

    def right(nb):
        for label, cell in answer_cells(nb).items():
            cell.source = worked[label]

    def wrong(nb):
        for cell in answer_cells(nb).values():
            cell.source = cell.source.replace("= ...", "= -1").replace("    ...", "    return -1")

    # The five `otter run`s side by side (each starts a kernel and runs the chapter in it; one after
    # another they took most of this file's time, a kernel's start-up mostly waiting).
    running = {}
    for learner, change in (("ada", right), ("bob", wrong), ("hal", forge), ("any", any_equal),
                            ("rel", reload_patched)):
        nb = student_notebook()
        change(nb)
        folder = out / learner
        folder.mkdir()
        nbformat.write(nb, folder / NAME)
        running[learner] = subprocess.Popen([sys.executable, "-m", "otter", "run", "-a", str(zip_path), "-o", str(folder),
                                             "--no-logo", str(folder / NAME)], stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True, cwd=folder)
    found = {}
    try:
        for learner, process in running.items():
            stdout, stderr = process.communicate(timeout=900)
            assert process.returncode == 0, stdout[-2000:] + stderr[-2000:]
            results = json.loads((out / learner / "results.json").read_text())
            # One entry per test file (the exercise's label), beside Otter's summary of the public tests.
            found[learner] = {t["name"]: t["score"] for t in results["tests"] if "score" in t}
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
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


def test_export_names_its_chapters(tmp_path, capsys):
    assert grade.main(["export", "--otter", str(tmp_path), "--chapters", "no-such-chapter"]) == 2
    err = capsys.readouterr().err
    assert "no exercises in no-such-chapter" in err and len(err.strip().splitlines()) == 1, err
