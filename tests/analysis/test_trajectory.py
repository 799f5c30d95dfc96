"""The residual path on a concept plane (lib.analysis.trajectory): the pushes add up to the end of the path,
heads switched off change it only from their layer, and the path view draws both paths on one plane."""
import math

import numpy as np
import pytest

from lib.analysis.trajectory import residual_trajectory


def test_path_view_draws_both_paths_on_the_same_plane(lm):
    from lib.analysis.trajectory import path_view
    v = path_view(lm, "<BOS> Pietro chiama Paolo", mlps_off=[1])
    assert np.allclose(v.intact.coords[:4], v.ablated.coords[:4])          # nothing changes before MLP 1
    assert v.ablated.coords[-1, 0] == pytest.approx(v.ablated.coords[-2, 0])  # MLP 1 writes nothing
    assert v.prob < v.prob_intact
    assert sum(v.ablated.pushes.values()) == pytest.approx(v.ablated.coords[-1, 0], abs=1e-5)

def test_pushes_add_up_to_the_end_of_the_path(lm):
    t = residual_trajectory(lm, "<BOS> Pietro chiama Paolo")
    assert t.stages == ["embed", "blocks.0.attn", "blocks.0.mlp", "blocks.1.attn", "blocks.1.mlp"]
    assert math.isclose(sum(t.pushes.values()), t.coords[-1, 0], abs_tol=1e-5)
    assert 0 < t.spread <= t.best_spread <= 1 + 1e-12
    assert t.largest_push()[0] == "blocks.1.mlp"
    assert t.coords[-1, 0] > t.coords[0, 0], "the path moves toward Tarso"

def test_ablating_heads_changes_the_path_only_from_their_layer(lm):
    base = residual_trajectory(lm, "<BOS> Pietro chiama Paolo")
    off = residual_trajectory(lm, "<BOS> Pietro chiama Paolo", ablate=[(1, h) for h in range(4)])
    assert np.allclose(base.coords[:3], off.coords[:3])
    assert np.allclose(off.coords[3], off.coords[2]), "with every head of block 1 off, its attention writes nothing"
