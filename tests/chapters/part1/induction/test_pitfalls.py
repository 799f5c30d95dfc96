"""The two ways the induction recipe fails (lib/chapters/part1/induction/pitfalls.py): each recipe is the shipped
one with one thing changed, and the stored figures are read only when they were measured with today's recipes."""
import dataclasses
import json

import pytest

from lib.chapters.part1.induction import pitfalls
from lib.errors import CourseError
from lib.shipped.presets import get_preset


def test_the_pitfalls_were_measured_with_todays_recipes():
    stored = pitfalls.read()      # refuses a file measured with another recipe
    assert set(stored) == {"fixed-period", "small-init"}


def test_each_recipe_is_the_shipped_one_with_one_thing_changed():
    shipped = get_preset("induction")
    changed = {}
    for name, (mcfg, tcfg) in pitfalls.recipes().items():
        diff = {f.name for f in dataclasses.fields(mcfg) if getattr(mcfg, f.name) != getattr(shipped.model, f.name)}
        diff |= {f.name for f in dataclasses.fields(tcfg) if getattr(tcfg, f.name) != getattr(shipped.train, f.name)}
        changed[name] = diff
    assert changed == {"fixed-period": {"corpus_options"}, "small-init": {"init_std", "steps", "stop_below"}}
    mcfg, tcfg = pitfalls.recipes()["fixed-period"]
    assert tcfg.corpus_options == {"min_period": pitfalls.FIXED_PERIOD, "max_period": pitfalls.FIXED_PERIOD}
    assert pitfalls.recipes()["small-init"][0].init_std == pitfalls.SMALL_INIT_STD


def test_figures_measured_with_another_recipe_or_missing_are_refused(course_data):
    stored = json.loads(pitfalls.path().read_text())
    stored["small-init"]["train"]["steps"] += 1
    pitfalls.path().write_text(json.dumps(stored))
    with pytest.raises(CourseError, match="measured with another recipe for small-init"):
        pitfalls.read()
    pitfalls.path().unlink()
    with pytest.raises(CourseError, match="is missing: run `python -m lib.chapters.part1.induction.pitfalls`"):
        pitfalls.read()
