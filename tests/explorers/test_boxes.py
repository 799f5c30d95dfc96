"""What a reader types in a box, read (lib.explorers.boxes): top-k, top-p, seeds and positions say what is
allowed; blank means no limit or the last position; a typed number is read as Python's float reads it and
finds its nearest stop."""
import math

import pytest

from lib.errors import CourseError
from lib.explorers.boxes import nearest_stop, parse_number, parse_position, parse_seed, parse_top_k, parse_top_p
from lib.explorers.definition import TEMPERATURES, Control


@pytest.mark.parametrize("text, message", [("0", "at least 1"), ("2.5", "whole number"), ("abc", "whole number")])
def test_parse_top_k_says_what_is_allowed(text, message):
    with pytest.raises(CourseError, match=message):
        parse_top_k(text)

@pytest.mark.parametrize("text", ["0", "1.5", "-0.2", "nan", "x"])
def test_parse_top_p_says_what_is_allowed(text):
    with pytest.raises(CourseError, match=r"top-p"):
        parse_top_p(text)

@pytest.mark.parametrize("parse, text", [(parse_seed, "-1"), (parse_seed, "1e3"),
                                         (parse_seed, str(2**63)),
                                         (lambda t: parse_position(t, 4), "4"),
                                         (lambda t: parse_position(t, 4), "x")])
def test_seeds_and_positions_say_what_is_allowed(parse, text):
    with pytest.raises(CourseError, match="whole number from 0 to"):
        parse(text)

def test_blank_means_no_limit_or_the_last_position():
    assert parse_top_k(" ") is None and parse_top_p("") is None
    assert parse_top_k("5") == 5 and parse_top_p("0.9") == 0.9
    assert parse_position("", 4) == 3 and parse_position("0", 4) == 0
    assert parse_seed(" 7 ") == 7

def test_a_typed_number_is_read_as_pythons_float_reads_it_and_finds_its_stop():
    assert [parse_number(t) for t in ("0.02", " 1e-4 ", "1_000", "-1", "abc", "")] == [0.02, 1e-4, 1000.0, -1.0, "abc", ""]
    assert math.isnan(parse_number("nan")) and parse_number("inf") == math.inf and parse_number(2) == 2.0
    stops = TEMPERATURES
    assert stops[nearest_stop(stops, 1.0)] == 1.0 and stops[nearest_stop(stops, 2.0)] == 2.0
    assert nearest_stop(stops, 0.02) == 0 and nearest_stop(stops, 50.0) == nearest_stop(stops, math.inf) == len(stops) - 1
    assert [nearest_stop(stops, v) for v in ("abc", 0.0, -3.0, math.nan)] == [0, 0, 0, 0]
    near = stops[nearest_stop(stops, 0.5123)]
    assert all(abs(math.log(near / 0.5123)) <= abs(math.log(s / 0.5123)) for s in stops), "the nearest in the log"
    with pytest.raises(ValueError, match="increasing positive stops"):
        Control("t", "t", "a number", "number", 1.0, options=(2.0, 1.0))
