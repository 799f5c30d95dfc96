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
        if not isinstance(garbage, str):       # a text is read as a learner writes a number (test_reading.py)
            fb = check_number(garbage, 1.2345, tol=1e-3, what="x")
            assert not fb and "single finite number" in fb.message and len(fb.message) < 200
        fb = check_choice(garbage, ["Tarso", "Cefa"], "Tarso", right="yes", wrong="no")
        assert not fb and "one of" in fb.message and len(fb.message) < 200
    assert check_number("1,2345", 1.2345, tol=1e-3, what="x") and not check_number("one", 1.2345, tol=1e-3, what="x")
    # A right verdict carries the interval it accepts (for the page test); a wrong one never does.
    assert 'data-accepts="1.2335' in check_number(1.2345, 1.2345, tol=1e-3, what="x")._repr_html_()
    assert "data-accepts" not in check_number(2.0, 1.2345, tol=1e-3, what="x")._repr_html_()


def test_feedback_renders_in_a_notebook():
    html = Feedback(False, "a <b> c").__repr__(), Feedback(True, "x")._repr_html_()
    assert html[0].startswith("Not yet") and "Correct" in html[1]


def test_a_choice_reads_a_word_as_a_person_writes_it():
    """Case, quotes and spaces aside (the page's own labels: MLP0 and MLP 0); never when two options
    are spelled alike; the allowed words listed closest first."""
    from lib.exercises import check_choice, closest_first, edit_distance

    options = ["Tarso", "Cefa", "vice", "capo", "MLP 0", "L0H3"]
    for typed, meant in [("Vice", "vice"), ("tarso", "Tarso"), ("'vice'", "vice"), ('"Cefa"', "Cefa"),
                         ("MLP0", "MLP 0"), ("mlp 0", "MLP 0"), ("l0h3", "L0H3"), (" L0 H3 ", "L0H3")]:
        assert check_choice(typed, options, meant, right="yes", wrong="no").ok, typed
        assert not check_choice(typed, options, "capo", right="yes", wrong="no").ok, typed
    alike = check_choice("ab", ["AB", "Ab"], "AB", right="yes", wrong="no")
    assert not alike.ok and "one of" in alike.message
    assert check_choice("AB", ["AB", "Ab"], "AB", right="yes", wrong="no").ok
    assert edit_distance("kitten", "sitting") == 3 and edit_distance("", "abc") == 3
    many = [f"w{i}" for i in range(20)] + ["vice"]
    told = check_choice("vise", many, "vice", right="yes", wrong="no").message
    assert told.index("'vice'") < told.index("'w0'"), told
    assert closest_first(3, ["b", "a"]) == ["b", "a"]
