"""`python -m lib patch`: the contract of the README (JSON keys, defaults, one clear line on bad input)."""
import json
import subprocess
import sys

import numpy as np
import pytest

from lib.analysis.patching import patch

CG = "calling-game"
# A legal pair (lib.content.corruptions): the caller of Paolo changes from Pietro to a number, Tarso becomes vice.
CLEAN = "<BOS> Pietro chiama 2 <SEP> 2 chiama 3 <SEP> 3 chiama Pietro capo <SEP> Pietro chiama Paolo"
CORRUPTED = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama 3 <SEP> 3 chiama 6 <SEP> 6 chiama Paolo"
# The old kind of pair: players swapped, a round no game can begin with, and the model says vice on both.
SWAPPED = ("<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo", "<BOS> 4 chiama Pietro <SEP> Pietro chiama Paolo")
KEYS = {"model", "clean", "corrupted", "target", "against", "clean_diff", "corrupted_diff", "direction", "warnings",
        "heads", "mlps", "resid"}


def test_json_has_every_cell_and_the_librarys_numbers(run_in_process, lm):
    code, out, err = run_in_process("patch", CG, CLEAN, CORRUPTED, "--json")
    assert code == 0 and err == "", err
    got = json.loads(out)
    assert set(got) == KEYS
    want = patch(lm, CLEAN, CORRUPTED)
    # Defaults: the clean run's top token against the corrupted run's.
    assert (got["target"], got["against"]) == ("Tarso", "vice") == (want.target, want.against)
    assert got["warnings"] == [] and got["direction"] == "denoise"
    assert got["clean"] == CLEAN.split() and got["corrupted"] == CORRUPTED.split()
    cfg, T = lm.model.cfg, len(CLEAN.split())
    assert [(c["head"], c["position"]) for c in got["heads"]] == [
        (f"L{layer}H{h}", p) for layer in range(cfg.n_layers) for h in range(cfg.n_heads) for p in range(T)]
    assert [(c["mlp"], c["position"]) for c in got["mlps"]] == [(f"MLP{layer}", p) for layer in range(cfg.n_layers)
                                                                 for p in range(T)]
    assert np.allclose([c["recovered"] for c in got["heads"]], want.heads.ravel(), atol=1e-12)
    assert np.allclose([c["recovered"] for c in got["mlps"]], want.mlps.ravel(), atol=1e-12)
    # The residual stream before each block and after the last, at every position.
    stages = [f"blocks.{layer}.resid_pre" for layer in range(cfg.n_layers)] + ["resid_final"]
    assert [(c["stage"], c["position"]) for c in got["resid"]] == [(s, p) for s in stages for p in range(T)]
    assert np.allclose([c["recovered"] for c in got["resid"]], want.resid.ravel(), atol=1e-12)
    final = [c["recovered"] for c in got["resid"] if c["stage"] == "resid_final"]
    assert abs(final[-1] - 1) < 1e-9 and max(map(abs, final[:-1])) < 1e-9   # only the last position reaches it
    assert abs(got["clean_diff"] - want.clean_diff) < 1e-9 and got["clean_diff"] > got["corrupted_diff"]


def test_target_and_against_are_followed(run_in_process):
    code, out, _ = run_in_process("patch", CG, CLEAN, CORRUPTED, "--target", "Tarso", "--against", "capo", "--json")
    got = json.loads(out)
    assert code == 0 and (got["target"], got["against"]) == ("Tarso", "capo")


def test_the_table_names_every_row(run_in_process):
    code, out, err = run_in_process("patch", CG, CLEAN, CORRUPTED)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "logit(Tarso) - logit(vice)" in lines[0] and "it moves by" in lines[0]
    assert [line.split()[0] for line in lines[3:]] == [f"L{l}H{h}" for l in range(2) for h in range(4)] + \
        ["MLP0", "MLP1", "0", "1", "resid_final"]


def test_noising_is_followed(run_in_process, lm):
    code, out, _ = run_in_process("patch", CG, CLEAN, CORRUPTED, "--direction", "noise", "--json")
    got = json.loads(out)
    want = patch(lm, CLEAN, CORRUPTED, direction="noise")
    assert code == 0 and got["direction"] == "noise"
    assert np.allclose([c["recovered"] for c in got["heads"]], want.heads.ravel(), atol=1e-12)


@pytest.mark.parametrize("args, says", [
    (SWAPPED + ("--target", "vice", "--against", "Tarso"), ["the corrupted prompt is not a legal round",
                                                             "puts vice first after both prompts"]),
    # vice - capo moves from 21.58 to 22.35: by less than 1.
    (("<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo", "<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo", "--target", "vice",
      "--against", "capo"), ["the rules give the same answer, vice, after both prompts",
                             "puts vice first after both prompts", "moves by only -0.7"]),
])
def test_warnings_come_one_line_each_and_the_grid_still_prints(run_in_process, args, says):
    code, out, err = run_in_process("patch", CG, *args)
    lines = err.strip().splitlines()
    assert code == 0 and len(lines) == len(says), err
    for line, want in zip(lines, says):
        assert line.startswith("warning: ") and want in line, line
    assert out.splitlines()[0].startswith("calling-game: logit(vice) - logit(")


@pytest.mark.parametrize("args, says", [
    (("<BOS> Pietro chiama", "<BOS> Pietro chiama Paolo"), "the clean prompt has 3 tokens and the corrupted one 4"),
    (("<BOS> Pietro chiama Pablo", CORRUPTED[:25]), "unknown token 'Pablo'"),
    ((CLEAN, CORRUPTED, "--target", "Tars"), "unknown token 'Tars'"),
    ((CLEAN, CORRUPTED, "--target", "vice", "--against", "vice"), "the target and the rival are both 'vice'"),
    ((CLEAN, CORRUPTED, "--direction", "sideways"), "invalid choice: 'sideways'"),
    (("<BOS> Pietro chiama Paolo", "<BOS> Pietro chiama Paolo"), "are both 'Tarso'"),
    ((CLEAN, CLEAN, "--target", "Tarso", "--against", "Cefa"), "nothing for a patch to recover"),
    ((" ".join(["Pietro"] * 49), " ".join(["Paolo"] * 49)), "at most 48"),
    (("", ""), "prompt is empty"),
])
def test_bad_input_gets_one_clear_line_and_exit_2(run_in_process, args, says):
    code, out, err = run_in_process("patch", CG, *args)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("error: "), (code, out, err)
    assert says in lines[0], lines[0]


def test_unknown_model_in_a_real_process():
    done = subprocess.run([sys.executable, "-m", "lib", "patch", "gpt-2", CLEAN, CORRUPTED], capture_output=True,
                          text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "unknown model 'gpt-2'" in done.stderr
