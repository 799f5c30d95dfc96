"""The panel of shipped training runs (lib/claims/panel.py, `python -m lib panel`): every lesson about a recipe
measured on every shipped run of its models (20 per trainable model when the panel is complete), kept as data, and measured again here on runs chosen afresh each
time and on a run this test trains itself.

The kept numbers were measured on another machine; this one may be another x86-64, whose arithmetic differs
in the last bits, so numbers are compared with `panel.REL_TOL` and `panel.ABS_TOL`, whole numbers and text
exactly."""
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from safetensors.numpy import load_file

from lib.claims import panel, registry
from lib.model import store

# How many of the panel's runs are measured again on each test run: chosen at random, printed, so that over
# many runs of the suite every run of the panel is measured again.
RECHECKED = 2


def test_every_shipped_run_of_the_panel_is_the_run_of_its_seed():
    assert len(panel.PANEL_SEEDS) >= 20 and panel.PANEL_SEEDS[0] == 0
    for name in panel.panel_models():
        shipped = panel.seeds([name])
        assert shipped[0] == 0 and len(shipped) >= 5, (name, shipped)
        folders = [panel.folder_of(name, s) for s in shipped]
        seeds = [json.loads((f / store.META).read_text())["train"]["seed"] for f in folders]
        assert seeds == list(shipped), (name, seeds)
        for f in folders:
            store.read_model(name, f)           # whole: checksum, shapes, finite numbers


def test_every_trainable_model_ships_a_panel_of_20_runs():
    assert all(not seeds for seeds in panel.missing().values()), panel.missing()


def test_the_kept_panel_covers_every_lesson_on_every_run_and_matches_the_weights():
    assert panel.stale() == []
    kept = panel.read()
    assert kept["seeds"] == {m: list(panel.seeds([m])) for m in panel.panel_models()}
    assert kept["prompt_seed"] == panel.PROMPT_SEED


def test_every_claim_holds_on_some_run_and_says_what_the_others_do():
    """A statement over the panel: "every one of the n runs" exactly when it holds on all, else "k of the n
    runs" and what the other runs do (the claim's `others`, or why a run lacks the role it looks for); n is the
    number of runs shipped for the claim's models."""
    for id in panel.every_run_ids():
        k, n = panel.count(id)
        text = panel.statement(id)
        assert k >= 1 and n == len(panel.claim_seeds(id)), id
        if k == n:
            # no sentence on the runs where it fails ("On seed 7, ..."); "seed" may be a word of the lesson itself
            assert f"every one of the {n} runs" in text and "On seed" not in text, (id, text)
        else:
            assert f"{k} of the {n} runs" in text and "every one of the" not in text, (id, text)
            assert "On seed" in text or "On seeds" in text, (id, text)


def test_no_statement_splits_numbers_that_go_together():
    """"Catches 19 to 78 of the 28 to 93": two ranges taken apart hide which goes with which. A statement
    prints a ratio's range, or one range beside fixed numbers, never a range of a count beside a range of what
    it counts."""
    import re

    split = re.compile(r"[\d.,%]+ to [\d.,%]+%? (?:of|to|out of|against) (?:the |its |their )?[\d.,%]+ to [\d.,%]+")
    for id in panel.every_run_ids():
        text = panel.statement(id)
        assert not split.search(text), (id, split.search(text).group(0))


def _measured_again(seeds):
    diff = panel.check_runs(seeds)
    assert not diff, f"measured again on the panel's runs of seeds {seeds}, {len(diff)} numbers differ: {diff[:5]}"


def test_runs_of_the_panel_chosen_afresh_measure_as_kept(capsys):
    seeds = sorted(random.SystemRandom().sample(list(panel.seeds()[1:]), RECHECKED))
    with capsys.disabled():
        print(f"\n[panel] measuring the runs of seeds {seeds} again")
    _measured_again(seeds)


# The zero-layer model: its training reproduces the same weights from the same seed on any x86-64 processor, to
# float32 rounding (bit for bit on a processor with the same vector unit; about 1e-6 apart between AVX2 and AVX-512,
# tests/model/test_train.py), so what it measures can be held to the kept numbers within panel.py's tolerances; the
# calling game's float32 training, summed in another order on another processor, grows into another run.
@pytest.mark.parametrize("name, partner", [("zero-layer", "calling-game")])
def test_a_run_of_the_panel_trained_here_measures_as_kept(name, partner, tmp_path, capsys, run_process):
    """One run of the panel trained again from its seed on this machine (a seed chosen afresh each time) and
    measured, as a user does, by `python -m lib train` and `python -m lib claims --runs`, beside the panel's
    run of the same seed of the other model its claims read: its weights are the shipped run's, and every claim
    that reads it measures as kept."""
    seed = random.SystemRandom().choice(panel.seeds([name])[1:])
    with capsys.disabled():
        print(f"\n[panel] training {name} seed {seed} again")
    out = tmp_path / name
    r = subprocess.run([sys.executable, "-m", "lib", "train", name, "--seed", str(seed), "--out", str(out), "--quiet"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=600)
    assert r.returncode == 0, r.stderr
    shipped = load_file(str(panel.folder_of(name, seed) / "model.safetensors"))
    here = load_file(str(out / "model.safetensors"))
    assert here.keys() == shipped.keys()
    for key in shipped:
        gap = float(np.abs(here[key] - shipped[key]).max())
        assert gap < 1e-4, f"{name} seed {seed}: {key} differs from the shipped run's by {gap:.2e}"
    # the claims that read this model alone (a claim that reads the partner too may sample its prompts by the
    # run's label, which --runs names otherwise); the same weights above stand for the others. Measured chapter by
    # chapter (`--chapter`): every claim that reads either model took 135 s, these take a few.
    reads = {i for i in panel.every_run_ids() if tuple(registry.get(i).models) == (name,)}
    assert reads
    claims = []
    for chapter in sorted({registry.get(i).chapter for i in reads}):
        r = run_process("claims", "--runs", f"{out},{panel.folder_of(partner, seed)}", "--seeds", str(panel.PROMPT_SEED),
                        "--chapter", chapter, "--json")
        claims += json.loads(r.stdout)["claims"]
    assert reads <= {c["id"] for c in claims}
    diff = [d for c in claims if c["id"] in reads
            for d in panel.differences(panel.per_run(c["id"])[seed], c["numbers"][str(out)][str(panel.PROMPT_SEED)],
                                       f"{c['id']}: ")]
    assert not diff, f"{name} seed {seed} trained here: {diff[:5]}"


def test_numbers_agree_within_the_stated_tolerances():
    assert panel.differences({"a": 1.0, "n": 3, "t": "L0H1"}, {"a": 1.0005, "n": 3, "t": "L0H1"}) == []
    assert panel.differences({"a": 1.0}, {"a": 1.01})
    assert panel.differences({"n": 3}, {"n": 4}) and panel.differences({"t": "L0H1"}, {"t": "L1H1"})
    assert panel.differences({"a": 0.0}, {"a": 5e-5}) == [] and panel.differences({"a": 0.0}, {"a": 5e-4})
    assert panel.differences({"a": 1.0}, {}) and panel.differences({}, {"a": 1.0})
