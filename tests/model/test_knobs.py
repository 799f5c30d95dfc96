"""lib.model.knobs: the read-out's and decoding's knobs, checked in plain Python before anything loads.

Each knob's edges are allowed and just past them refused in one line saying what is allowed, with the
sentence lib.messages gives it (the page says the same); nothing here needs torch, so the command line
checks its arguments first (lib.model.readout and lib.model.decoding run the same functions: their
tests hold the knobs' effects).
"""
import subprocess
import sys

import pytest

from lib.errors import CourseError
from lib.model import knobs
from lib.messages import say


@pytest.mark.parametrize("check, good, bad", [
    (knobs.check_temperature, [knobs.MIN_TEMPERATURE, 1, "0.7", 1e6], [0, -1, knobs.MIN_TEMPERATURE / 2, "warm", True,
                                                                        float("inf"), float("nan")]),
    (knobs.check_seed, [0, 11, knobs.MAX_SEED], [-1, knobs.MAX_SEED + 1, 1.5, "3", True]),
    (knobs.check_top_k, [None, 1, 10**9], [0, -3, 2.0, "5", True]),
    (knobs.check_top_p, [None, knobs.TOP_P_FLOOR, 0.5, 1], [0, 1.01, knobs.TOP_P_FLOOR / 2, "most", True, float("nan")]),
    (knobs.check_min_p, [None, 1e-9, 0.05, 1], [0, -0.1, 1.5, "some", False, float("inf")]),
    (knobs.check_repetition_penalty, [None, 1, 1.3, knobs.MAX_PENALTY], [0.9, knobs.MAX_PENALTY + 1, "x", True]),
    (knobs.check_beams, [1, knobs.MAX_BEAMS], [0, knobs.MAX_BEAMS + 1, 2.0, True]),
    (knobs.check_length_penalty, [0, 1, 2], [-0.1, 2.1, "mean", float("nan")]),
    (knobs.check_max_new, [0, 40], [-1, 2.5, True]),
])
def test_each_knob_takes_its_range_and_refuses_the_rest_in_one_line(check, good, bad):
    for value in good:
        check(value)
    for value in bad:
        with pytest.raises(CourseError) as e:
            check(value)
        message = str(e.value)
        assert "\n" not in message and len(message) < 250 and message.split()[0] in (
            "temperature", "a", "top-k", "top-p", "min-p", "the", "max_new_tokens"), message


def test_top_k_is_capped_at_the_vocabulary():
    assert knobs.check_top_k(500, vocab_size=40) == 40 and knobs.check_top_k(5, vocab_size=40) == 5


def test_min_p_says_the_shared_sentence():
    """min-p's sentence is lib.messages' (the page's box says it word for word)."""
    with pytest.raises(CourseError) as e:
        knobs.check_min_p(1.5)
    assert str(e.value) == say("min_p", got="1.5")
    with pytest.raises(CourseError) as e:
        knobs.check_min_p("lots")
    assert str(e.value) == say("min_p", got="'lots'")


def test_the_knobs_and_the_catalog_import_no_torch():
    code = ("import sys, lib.model.knobs, lib.model.catalog, lib.model.gguf_header; "
            "print(sorted(m for m in ('torch', 'numpy', 'gguf') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr + r.stdout
