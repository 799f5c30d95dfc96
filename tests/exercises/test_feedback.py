"""Exercises' feedback (lib.exercises): a verdict never contains the expected answer, reads numpy and torch
answers, and renders in a notebook."""

import numpy as np
import torch

from lib.exercises import Feedback, check_number


def test_feedback_never_contains_the_expected_answer():
    expected = 1.2345
    for answer in (..., 0.0, 5.0, "abc", float("nan")):
        fb = check_number(answer, expected, tol=1e-3, what="x")
        assert not fb and "1.234" not in fb.message and "1.235" not in fb.message
    assert check_number(1.2346, expected, tol=1e-3, what="x")
    assert "too high" in check_number(2, expected, tol=1e-3, what="x").message
    assert "too low" in check_number(0, expected, tol=1e-3, what="x").message


def test_value_checks_read_numpy_and_torch_answers():
    from lib.exercises import check_choice, check_whole_number
    assert check_number(np.float64(1.2345), 1.2345, tol=1e-3, what="x")
    assert check_number(np.array([1.2345]), 1.2345, tol=1e-3, what="x")
    assert check_number(torch.tensor(1.2345), 1.2345, tol=1e-3, what="x")
    assert check_whole_number(np.int64(3), 3, what="n") and check_whole_number(torch.tensor(3), 3, what="n")
    assert check_choice(np.str_("Tarso"), ["Tarso", "Cefa"], "Tarso", right="yes", wrong="no")
    for garbage in (np.array([1.0, 2.0]), torch.tensor([1.0, 2.0]), 10 ** 400, float("inf"), "1.2345", True):
        fb = check_number(garbage, 1.2345, tol=1e-3, what="x")
        assert not fb and "single finite number" in fb.message and len(fb.message) < 200
        fb = check_choice(garbage, ["Tarso", "Cefa"], "Tarso", right="yes", wrong="no")
        assert not fb and "one of" in fb.message and len(fb.message) < 200
    # A right verdict carries the interval it accepts (for the page test); a wrong one never does.
    assert 'data-accepts="1.2335' in check_number(1.2345, 1.2345, tol=1e-3, what="x")._repr_html_()
    assert "data-accepts" not in check_number(2.0, 1.2345, tol=1e-3, what="x")._repr_html_()


def test_feedback_renders_in_a_notebook():
    html = Feedback(False, "a <b> c").__repr__(), Feedback(True, "x")._repr_html_()
    assert html[0].startswith("Not yet") and "Correct" in html[1]
