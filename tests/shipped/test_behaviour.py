"""What each shipped model does, measured, and its targets (lib.shipped.behaviour).

The targets judge figures, so they are tested on figures made up to sit either side of each line; the
recorded figures are held to FIGURE_TOLERANCE (within it passes, beyond it or missing fails); `check`
fails a run whose weights no longer give their recorded figures (weights that do not match their checksum
are refused on loading: tests/test_bad_input.py). That every shipped run passes is `python -m lib check`'s
(tests/cli/test_commands.py)."""
import json

import numpy as np
import pytest

from lib.content.prompts import CONFIDENT
from lib.model import store
from lib.shipped import behaviour
from lib.shipped.behaviour import (BEHAVIOUR, EPITHET_CORNERS, FIGURE_TOLERANCE, _targets_calling_game,
                                   _targets_calling_game_shipped, _targets_induction, _targets_recorded, check,
                                   epithet_plane)
from lib.shipped.presets import PRESETS


def calling_game_figures(tarso=0.995, legal=0.11, first_top="Tarso", last_prob=0.999, valid=0.8):
    lens = [{"stage": "embed", "top": "Paolo", "tarso_prob": 0.1},
            {"stage": "blocks.0.mlp", "top": first_top, "tarso_prob": 0.6},
            {"stage": "blocks.1.mlp", "top": "Tarso", "tarso_prob": last_prob}]
    return {"confident": {"tarso_prob": tarso}, "uncertain": {"legal_probs": {p: legal for p in "123456789"}},
            "lens": lens, "sampled_rounds_valid": valid,
            "epithet_plane": {"corners": {w: list(xy) for w, xy in EPITHET_CORNERS.items()}}}


def verdicts(lines):
    return [ok for ok, _ in lines]


def test_the_calling_games_targets_sit_where_they_say():
    assert all(verdicts(_targets_calling_game(calling_game_figures())))
    for change, line in ((dict(tarso=0.98), 0), (dict(last_prob=0.98), 3)):
        got = verdicts(_targets_calling_game(calling_game_figures(**change)))
        assert not got[line] and sum(got) == len(got) - 1, change
    # the figures on which the recipe's runs differ are reported for a run of the panel, targets for the pages'
    # run only
    for change, shown in ((dict(legal=0.07), "0.070"), (dict(first_top="vice"), "'vice'"), (dict(valid=0.4), "40.0%")):
        lines = _targets_calling_game(calling_game_figures(**change))
        assert all(verdicts(lines)) and any(shown in text for _, text in lines), change
    assert CONFIDENT in _targets_calling_game(calling_game_figures())[0][1], "the line names the prompt it measured"


def test_the_pages_run_has_each_epithet_in_its_corner():
    good = calling_game_figures()
    assert all(verdicts(_targets_calling_game_shipped(good)))
    swapped = calling_game_figures()
    swapped["epithet_plane"]["corners"]["Cefa"] = list(EPITHET_CORNERS["Tarso"])
    assert verdicts(_targets_calling_game_shipped(swapped)) == [False, True, True, True]
    assert verdicts(_targets_calling_game_shipped(calling_game_figures(valid=0.7))) == [True, False, True, True]
    assert verdicts(_targets_calling_game_shipped(calling_game_figures(legal=0.15))) == [True, True, False, True]
    assert verdicts(_targets_calling_game_shipped(calling_game_figures(first_top="vice"))) == [True, True, True, False]


def test_the_epithet_plane_puts_the_shipped_epithets_in_their_corners(lm):
    plane, corners = epithet_plane(lm)
    assert set(corners) == set(EPITHET_CORNERS) and 0 < plane.spread <= 1
    for w, (sx, sy) in EPITHET_CORNERS.items():
        assert (np.sign(corners[w][0]), np.sign(corners[w][1])) == (sx, sy), w
    assert np.allclose(sum(corners.values()), 0, atol=1e-9), "the corners are centred"


def test_the_induction_target_is_the_second_copys_loss():
    at = behaviour.INDUCTION_MAX_LOSS
    assert verdicts(_targets_induction({"second_copy_loss": at, "first_copy_loss": 3.0})) == [True]
    assert verdicts(_targets_induction({"second_copy_loss": at + 1e-3, "first_copy_loss": 3.0})) == [False]


def test_recorded_figures_are_held_to_the_tolerance():
    recorded = {"loss": 0.5, "tops": ["Tarso", "vice"], "count": 7, "nested": {"share": 0.25}}
    assert verdicts(_targets_recorded(json.loads(json.dumps(recorded)), recorded)) == [True]
    near = dict(recorded, loss=0.5 * (1 + FIGURE_TOLERANCE["rel_tol"] / 2))
    assert verdicts(_targets_recorded(near, recorded)) == [True]
    for changed in (dict(recorded, loss=0.5 * (1 + 10 * FIGURE_TOLERANCE["rel_tol"])), dict(recorded, count=8),
                    dict(recorded, tops=["Tarso", "capo"]), {k: v for k, v in recorded.items() if k != "nested"}):
        (ok, line), = _targets_recorded(changed, recorded)
        assert not ok and line.startswith("figures that changed: "), changed


def test_every_shipped_model_is_measured_beside_its_recipe():
    assert set(BEHAVIOUR) == set(PRESETS)
    assert behaviour.measure("no such model", None) == {}


def test_check_fails_a_run_whose_recorded_figures_changed(course_data):
    """The zero-layer model (cheap to measure): its shipped copy passes; with a recorded figure moved, it
    fails and names the figure."""
    folder = course_data / "models" / "zero-layer"
    assert check("zero-layer", folder).passed
    meta = json.loads((folder / "meta.json").read_text())
    meta["behaviour"]["bigram"]["max_gap"] += 0.01
    (folder / "meta.json").write_text(json.dumps(meta))
    store._LOADED.clear()
    r = check("zero-layer", folder)
    assert not r.passed and any(line.startswith("FAIL  figures that changed: bigram.max_gap") for line in r.lines)
