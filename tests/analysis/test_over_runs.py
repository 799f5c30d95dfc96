"""One measurement on every shipped training run of a model (lib.analysis.over_runs): the runs in the order of
their training seeds, the run in use first; a run named by `use_run` takes the place of the shipped run of its
seed; each value measured once and, when asked, kept on disk."""
import json

import pytest

from lib.analysis.over_runs import each_run, run_folders, runs_of
from lib.model import store
from lib.model.store import run_label, shipped_runs


def test_the_runs_come_in_seed_order_the_run_in_use_first():
    folders = run_folders("zero-layer")
    assert list(folders) == [f"seed {s}" for s in range(len(shipped_runs("zero-layer")))]
    assert list(folders.values()) == shipped_runs("zero-layer")
    other = shipped_runs("zero-layer")[2]
    with store.use_run("zero-layer", other):
        inside = run_folders("zero-layer")
        assert list(inside)[0] == "seed 2" and inside["seed 2"] == other and len(inside) == len(folders)
        assert runs_of("zero-layer")["seed 2"] is store.load("zero-layer")


def test_a_run_trained_elsewhere_takes_the_pages_runs_place(fresh_runs):
    with store.use_run("zero-layer", fresh_runs["zero-layer"]):
        folders = run_folders("zero-layer")
    assert list(folders)[0] == run_label(fresh_runs["zero-layer"]) and "seed 0" not in folders
    assert len(folders) == len(shipped_runs("zero-layer"))


def test_each_run_is_measured_and_kept_once(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CLAIMS_CACHE", str(tmp_path))
    sizes = each_run("zero-layer", lambda lm: float(lm.model.W_E.abs().sum()))
    assert len(set(sizes.values())) == len(sizes), "each run its own weights"
    calls = []

    def counted(lm):
        calls.append(1)
        return float(lm.model.W_E.abs().sum())
    first = each_run("zero-layer", counted, keep="embedding size")
    again = each_run("zero-layer", counted, keep="embedding size")
    assert first == again == pytest.approx(sizes) and len(calls) == len(sizes)
    json.dumps(first)
