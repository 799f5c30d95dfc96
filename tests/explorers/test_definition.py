"""An explorer's definition (lib.explorers.definition): every registered one is JSON and computes its defaults; a
slider shows the value it uses; a control refuses a default outside its options."""
import json

import pytest

from lib.explorers.definition import TEMPERATURES, Control, log_stops, shown_number
from lib.explorers.registry import every_example


def test_every_definition_is_json_and_computes_its_defaults():
    for ex in every_example():
        spec = json.loads(json.dumps(ex.spec()))
        assert spec["view"] == ex.view and all(c["description"] for row in spec["rows"] for c in row), ex.view
        view = ex.compute(ex.defaults())
        assert json.loads(json.dumps(view, allow_nan=False)) == json.loads(json.dumps(view)), ex.view

def test_a_slider_shows_the_value_it_uses():
    assert TEMPERATURES[0] == 0.1 and TEMPERATURES[-1] == 10.0 and 1.0 in TEMPERATURES
    assert all(float(shown_number(t)) == t for t in TEMPERATURES)
    assert len(TEMPERATURES) == len(set(TEMPERATURES)) > 300, "continuous to the eye: hundreds of stops"
    assert shown_number(0.1) == "0.100" and shown_number(1.0) == "1.00" and shown_number(10.0) == "10.0"
    assert log_stops(1, 100, 2, 2) == (1.0, 10.0, 100.0)

def test_a_control_refuses_a_default_outside_its_options():
    with pytest.raises(ValueError, match="not one of its options"):
        Control("p", "perplexity", "how many neighbours", "choice", 7, options=(2, 5))
    with pytest.raises(ValueError, match="unknown control kind"):
        Control("p", "perplexity", "how many neighbours", "dial", 7)
