"""The Otter-Grader export, graded by the real Otter-Grader (PyPI's otter-grader, requirements-test.txt)
on a sample class of one chapter: a learner with every answer right, one with every answer wrong, and
one who forges (a verdict displayed in place of an answer, the check redefined in an answer cell, the
library's checks patched from a cell above).
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
    for learner, change in (("ada", right), ("bob", wrong), ("hal", forge)):
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


def test_export_names_its_chapters():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), "export", "--otter", "/tmp/x",
                             "--chapters", "no-such-chapter"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "no exercises in no-such-chapter" in result.stderr
    assert "Traceback" not in result.stderr
