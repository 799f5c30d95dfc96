"""Exercises: the self-checks judge without giving answers away, and the student notebooks run."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import book  # noqa: E402
from lib.exercises import Feedback, check_number  # noqa: E402
from lib.exercises import search_by_hand as check  # noqa: E402
from lib.store import load  # noqa: E402


def test_feedback_never_contains_the_expected_answer():
    expected = 1.2345
    for answer in (..., 0.0, 5.0, "abc", float("nan")):
        fb = check_number(answer, expected, tol=1e-3, what="x")
        assert not fb and "1.234" not in fb.message and "1.235" not in fb.message
    assert check_number(1.2346, expected, tol=1e-3, what="x")
    assert "too high" in check_number(2, expected, tol=1e-3, what="x").message
    assert "too low" in check_number(0, expected, tol=1e-3, what="x").message


def test_search_by_hand_checks():
    assert not check.logit_of_cefa(...).answered
    assert check.logit_of_cefa(0.2 * 0.3 + 1.0 * 1.0 + 0.4 * 0.2)
    assert "chapter's query" in check.logit_of_cefa(0.3 + 0.5 - 0.04).message
    assert not check.winner_for_query("Tarso") and check.winner_for_query("Cefa")
    assert "one of" in check.winner_for_query("banana").message
    assert check.smallest_scale(5) and not check.smallest_scale(6) and not check.smallest_scale(4)
    assert "whole number" in check.smallest_scale(2.5).message
    lm = load("calling-game")
    assert "raise" in check.temperature_for_half(lm, 1.0).message
    assert "positive" in check.temperature_for_half(lm, -1).message


def test_feedback_renders_in_a_notebook():
    html = Feedback(False, "a <b> c").__repr__(), Feedback(True, "x")._repr_html_()
    assert html[0].startswith("Not yet") and "Correct" in html[1]


@pytest.fixture(scope="module")
def student_notebooks(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    return book.student(out)


def test_student_notebooks_have_no_solutions(student_notebooks):
    import nbformat

    assert [p.stem for p in student_notebooks] == ["search-by-hand"]
    nb = nbformat.read(student_notebooks[0], as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "solution-start" not in text and "solution-end" not in text
    assert "answer = float(" not in text and "lo, hi = 1.0, 100.0" not in text
    assert text.count("= ...") == 4, "every answer stub stays in the student notebook"
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert text.count(":::{exercise}") == 3


def test_student_notebooks_run_and_report_unanswered(student_notebooks):
    import nbformat
    from nbclient import NotebookClient

    for path in student_notebooks:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT / "chapters" / "part3")}}).execute()
        outputs = " ".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                           for c in nb.cells if c.cell_type == "code" for o in c.outputs)
        assert outputs.count("Not answered yet") == 4, outputs[-2000:]
        assert "Error" not in [o.get("output_type") for c in nb.cells for o in c.get("outputs", [])]


def test_the_book_shows_every_solution_as_correct():
    html = (ROOT / "_build" / "html" / "chapters" / "part3" / "search-by-hand.html")
    if not html.exists():
        pytest.fail("the site is not built: run `make book`")
    text = html.read_text()
    assert text.count("<strong>Correct</strong>") == 4
    assert "Not yet" not in text and "Not answered yet" not in text
