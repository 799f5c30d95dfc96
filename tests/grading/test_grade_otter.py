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
    (out / "points.csv").write_text("exercise,points\nex-search-page,4\n")
    assert grade.export_main(["--otter", str(out / "assignment"), "--chapters", "search-by-hand",
                              "--points", str(out / "points.csv")]) == 0
    zip_path = out / "assignment" / "search-by-hand" / "autograder.zip"
    worked = solutions()

    def right(nb):
        for label, cell in answer_cells(nb).items():
            cell.source = worked[label]

    def wrong(nb):
        for cell in answer_cells(nb).values():
            cell.source = cell.source.replace("= ...", "= -1").replace("    ...", "    return -1")

    returned = {}
    for learner, change in (("ada", right), ("bob", wrong), ("hal", forge), ("any", any_equal),
                            ("rel", reload_patched)):
        nb = student_notebook()
        change(nb)
        returned[learner] = nb
    return {**otter_scores(zip_path, returned, out, NAME), "zip": zip_path}


def otter_scores(zip_path: Path, returned: dict, out: Path, name: str) -> dict:
    """Each learner's notebook (`returned`: learner -> notebook) graded by `otter run` with the zip, the
    runs side by side (each starts a kernel and runs the notebook in it; one after another they took
    most of this file's time, a kernel's start-up mostly waiting): learner -> {test: score}."""
    running = {}
    for learner, nb in returned.items():
        folder = out / learner
        folder.mkdir()
        nbformat.write(nb, folder / name)
        running[learner] = subprocess.Popen([sys.executable, "-m", "otter", "run", "-a", str(zip_path), "-o", str(folder),
                                             "--no-logo", str(folder / name)], stdout=subprocess.PIPE,
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
    assert scores["ada"] == {**dict.fromkeys(LABELS, 1), "ex-search-page": 4}     # the instructor's points
    assert scores["bob"] == dict.fromkeys(LABELS, 0)


def test_no_forgery_scores_in_otter(scores):
    assert scores["hal"] == dict.fromkeys(LABELS, 0)
    # An answer whose `==` always says yes is read as an answer equal to nothing.
    assert scores["any"] == dict.fromkeys(LABELS, 0)


def test_a_patched_reload_keeps_patched_checks_in_otter(scores):
    """The hole instructors.md states, measured: Otter's tests run in the learner's kernel, so a
    learner who patches importlib.reload and the checks earns every mark (make grade gives 0)."""
    assert scores["rel"] == {**dict.fromkeys(LABELS, 1), "ex-search-page": 4}


def test_the_export_is_a_gradescope_autograder_that_installs_the_course(scores, tmp_path):
    """The zip is Otter's own (`otter generate`: the setup.sh and run_autograder Gradescope runs, and an
    environment.yml), its environment installs the reader's pinned packages and the course from the
    zip, editable (`lib` then finds the shipped models in data/ beside it), and the tests carry the
    instructor's points. The course in the zip builds as pip installs it, and its library, imported
    from there, loads a shipped model from there."""
    import yaml
    import zipfile

    zip_path = scores["zip"]
    with zipfile.ZipFile(zip_path) as z:
        names = set(z.namelist())
        environment = yaml.safe_load(z.read("environment.yml"))
        z.extractall(tmp_path / "unzipped")
    assert {"setup.sh", "run_autograder", "run_otter.py", "otter_config.json"} <= names
    assert {f"tests/{label}.py" for label in LABELS} <= names
    assert {"files/course/pyproject.toml", "files/course/lib/__init__.py",
            "files/course/data/models/calling-game/model.safetensors"} <= names
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert "-e /autograder/source/files/course" in pip and any(r.startswith("torch==") for r in pip)
    assert "points = 4.0" in (tmp_path / "unzipped" / "tests" / "ex-search-page.py").read_text()
    course = tmp_path / "unzipped" / "files" / "course"
    built = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index",
                            "--no-build-isolation", "-q", "-e", str(course), "--report", str(tmp_path / "report.json")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert [i["metadata"]["name"] for i in report["install"]] == ["transformer-course-lib"]
    loaded = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import lib, lib.data; "
                             "print(lib.data.data_dir()); print(len(lib.load('calling-game').vocab))", str(course)],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.stdout.splitlines()[0] == str(course / "data") and int(loaded.stdout.splitlines()[1]) > 10


def test_export_names_its_chapters(tmp_path, capsys):
    assert grade.main(["export", "--otter", str(tmp_path), "--chapters", "no-such-chapter"]) == 2
    err = capsys.readouterr().err
    assert "no exercises in no-such-chapter" in err and len(err.strip().splitlines()) == 1, err
