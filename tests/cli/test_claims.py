"""`python -m lib panel` (lib/cli/claims.py): on how many runs each lesson holds, per model the runs shipped,
and bad input as one line."""
import json

import pytest

from lib.claims import panel


def test_the_panel_command_says_on_how_many_runs_each_lesson_holds(run_in_process):
    code, out, err = run_in_process("panel", "--json")
    data = json.loads(out)
    assert code == 0, err
    assert data["seeds"] == {m: list(panel.seeds([m])) for m in panel.panel_models()}
    assert data["prompt_seed"] == panel.PROMPT_SEED
    rows = {r["id"]: r for r in data["claims"]}
    assert set(rows) == set(panel.every_run_ids())
    for id, r in rows.items():
        assert (r["holds_on"], r["runs"]) == panel.count(id)
        assert len(r["not_on"]) == r["runs"] - r["holds_on"] and all(r["not_on"].values()), r


@pytest.mark.parametrize("args, says", [(("panel", "--check", "--seeds", "99"), "no run of the panel"),
                                        (("panel", "--write", "--models", "smollm2"), "no model the claims"),
                                        (("panel", "--chapter", "nowhere"), "no claims for chapter")])
def test_bad_input_to_the_panel_command_is_one_line(run_in_process, args, says):
    code, out, err = run_in_process(*args)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
