"""A claim on its page (lib.claims.glue): the statement with its numbers and how many runs they cover; a fact
about the shipped run carries its mark; a claim that fails on one (run, seed) stops the page, naming it."""
import pytest

from lib.claims import glue, registry, runs
from lib.errors import CourseError

NO_RUN = "why-attention.filters"       # a cheap claim no training decides


def test_a_claim_about_a_trained_run_is_marked_and_no_other():
    this_run = next(c for c in registry.claims() if c.scope == registry.THIS_RUN and c.models)
    assert glue.marked(this_run.id, "It holds.") == "It holds." + glue.THIS_RUN_MARK
    others = [c for c in registry.claims() if not (c.scope == registry.THIS_RUN and c.models)]
    assert others and all(glue.marked(c.id, "It holds.") == "It holds." for c in others)


def test_the_page_prints_the_statement_with_its_numbers_over_one_run():
    numbers, failing = glue.page_numbers(NO_RUN)
    assert failing == [] and numbers[glue.RUNS_FIELD] == registry.Span(1, 1)
    assert glue.page_statement(NO_RUN) == registry.statement(NO_RUN)


def test_a_claim_failing_on_one_run_stops_the_page_and_names_it(monkeypatch):
    rows = runs.over_runs(NO_RUN)
    monkeypatch.setattr(runs, "over_runs", lambda id, seeds: rows + [("seed 3", 0, rows[0][2], False)])
    glued = {}
    import myst_nb
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: glued.setdefault(name, value))
    with pytest.raises(CourseError, match=r"does not hold on 1 \(run, seed\) pair\(s\), the first run seed 3, seed 0"):
        glue.glue_claim(NO_RUN)
    assert not glued, "nothing is printed for a claim that fails"
    glue.glue_claim(NO_RUN, check=False)
    assert glued == {registry.glue_name(NO_RUN): registry.statement(NO_RUN), registry.glue_name(NO_RUN) + "_runs": "2"}
