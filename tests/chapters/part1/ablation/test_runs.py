"""The calling game's jobs found by role on a run (lib.chapters.part1.ablation.runs).

A head's job is found by what it does, never by its name: renumber the heads of a layer and every job
follows its head to its new name, with the same measurements.
"""
import copy

import numpy as np
import pytest
import torch

from lib.chapters.part1.ablation import runs
from lib.model.store import LoadedModel

SMALL = dict(n=8, patched=3)     # a few prompts: the roles' logic, not the chapter's counts


@pytest.fixture(scope="module")
def found(calling_game):
    return runs.roles(calling_game, **SMALL)


def _renumbered(lm, layer: int, order: list[int]) -> LoadedModel:
    """The same model with layer `layer`'s heads renumbered: new head h is old head order[h]."""
    model = copy.deepcopy(lm.model)
    attn = model.blocks[layer].attn
    with torch.no_grad():
        for w in (attn.W_Q, attn.W_K, attn.W_V, attn.W_O):
            w.copy_(w[order].clone())
    return LoadedModel(lm.name, model, lm.vocab, lm.meta)


def test_the_jobs_are_found_and_measured_consistently(found):
    heads = set(found["scores"])
    assert found["copier"] in heads and found["reader"] in heads and found["cefa_head"] in heads
    assert found["copier_layer"] == int(found["copier"][1]) and found["reader_layer"] == int(found["reader"][1])
    recovery = np.array(found["recovery"])
    assert recovery.shape == (2, 4)
    assert found["reader_recovery"] == pytest.approx(recovery[found["reader_layer"], int(found["reader"][3])], abs=1e-12)
    assert 1 <= found["reader_best"] <= found["patched"] <= SMALL["patched"]
    assert 0 <= found["copier_lost"] <= found["copier_held"] <= SMALL["n"]
    assert found["same_head"] == int(found["copier"] == found["reader"])
    assert 0 <= found["suppressors"] <= found["later_heads"] == 4


def test_a_renumbered_model_gives_each_job_to_the_same_head_under_its_new_name(calling_game, found):
    order = [3, 2, 1, 0]
    moved = runs.roles(_renumbered(calling_game, 0, order), **SMALL)

    def rename(name):       # old name -> new name in layer 0
        return f"L0H{order.index(int(name[3]))}" if name[1] == "0" else name
    for job in ("copier", "reader", "cefa_head"):
        assert moved[job] == rename(found[job]), job
    for key in ("copier_score", "reader_recovery", "mlp0", "mlp1", "cefa_drop", "path_mlp0"):
        assert moved[key] == pytest.approx(found[key], abs=1e-4), key
