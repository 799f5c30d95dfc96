"""Part 1's library: the inventory of shapes, the KV cache, ablation, circuits, bigrams, and the widgets."""
import math

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")

from lib.explorers import catalogue  # noqa: E402
from lib.analysis.ablation import ablation_view, all_heads, head_effects, head_name, without_attention, zero_W_O  # noqa: E402
from lib.analysis.bigrams import bigram_table, compare  # noqa: E402
from lib.analysis.circuits import head_habits, ov_circuit, qk_circuit, token_ov  # noqa: E402
from lib.errors import CourseError  # noqa: E402
from lib.analysis.inventory import (GPT2_SMALL, SEVEN_B, activations, from_config, kv_cache_bytes,  # noqa: E402
                           parameter_count, twelve_L_d2)
from lib.model.store import load, shipped_names  # noqa: E402
from lib.content.worked_examples import ABC_D_K, ABC_KEYS, ABC_QUERY, ABC_VALUES, attend_one  # noqa: E402

CEFA = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"


@pytest.fixture(scope="module")
def lm():
    return load("calling-game")


def test_parameter_counts_match_the_published_figures_and_the_models():
    assert parameter_count(GPT2_SMALL) == 124_439_808
    assert parameter_count(SEVEN_B) == 6_738_415_616
    for name in shipped_names():
        m = load(name).model
        assert parameter_count(from_config(name, m.cfg)) == m.n_params(), name
    assert twelve_L_d2(GPT2_SMALL) == 12 * 12 * 768 ** 2


def test_activation_shapes_follow_the_forward_pass(lm):
    rows = {r.name: r.shape for r in activations(from_config("cg", lm.model.cfg), 4)}
    _, cache = lm.model.run_with_cache(lm.encode("<BOS> Pietro chiama Paolo"))
    assert rows["attention pattern (after mask and softmax)"] == tuple(cache["blocks.0.attn.pattern"].shape)
    assert rows["logits"] == tuple(cache["logits"].shape)


def test_kv_cache_formula_matches_the_note_and_the_model(lm):
    assert kv_cache_bytes(32, 32768, 32, 128, 2) == 17_179_869_184
    from lib.model.generate import generate
    run = generate(lm.model, lm.encode("<BOS> Pietro chiama"), 5)
    cfg = lm.model.cfg
    assert run.kv_bytes == kv_cache_bytes(cfg.n_layers, len(run.tokens) - 1, cfg.n_heads, cfg.d_head, 4)
    for bad in ((0, 1, 1, 1, 2), (1, 1.5, 1, 1, 2), (1, 1, 1, 1, 0), (1, 1, 1, 1, "2")):
        with pytest.raises(CourseError):
            kv_cache_bytes(*bad)


def test_switching_attention_off_two_ways_gives_one_per_position_model(lm):
    r = without_attention(lm, "<BOS> Pietro chiama Paolo", "<BOS> 4 chiama")
    assert r["ablate_vs_zero_W_O"] == 0.0 and r["prefix_effect_off"] == 0.0 and r["prefix_effect_on"] > 1
    assert float(zero_W_O(lm.model).blocks[0].attn.W_O.abs().max()) == 0.0
    assert float(lm.model.blocks[0].attn.W_O.abs().max()) > 0, "the original is untouched"


def test_one_head_carries_cefa_and_none_carries_tarso(lm):
    cefa = head_effects(lm, CEFA, "Cefa")
    worst = min((g for g in cefa if g), key=cefa.get)
    assert head_name(worst[0]) == "L0H3" and cefa[worst] < 0.5 < cefa[()]
    tarso = head_effects(lm, "<BOS> Pietro chiama Paolo", "Tarso", pairs=True)
    assert min(tarso.values()) > 0.95 and len(tarso) == 1 + 8 + 28


def test_ablation_view_reports_patterns_and_the_followed_token(lm):
    v = ablation_view(lm, CEFA, [(0, 3)], "Cefa")
    assert v.off == ((0, 3),) and v.track == "Cefa" and v.track_prob < v.track_prob_intact
    assert len(v.patterns) == 8 and all(abs(sum(row) - 1) < 1e-5 for p in v.patterns.values() for row in p)
    with pytest.raises(CourseError, match="does not exist"):
        ablation_view(lm, CEFA, [(2, 0)])


def test_circuits_have_the_rank_of_a_head(lm):
    for M in (qk_circuit(lm.model, 0, 1), ov_circuit(lm.model, 1, 2)):
        s = np.linalg.svd(M, compute_uv=False)
        assert int((s > s[0] * 1e-5).sum()) == lm.model.cfg.d_head
    assert token_ov(lm.model, 0, 0).shape == (28, 28)
    habits = head_habits(lm, n_rounds=20)
    assert all(abs(sum(s.values()) - 1) < 1e-6 for s in habits.shares.values())


def test_the_zero_layer_model_learns_the_bigram_table():
    tokens, counts, probs = bigram_table(n_rounds=2000)
    assert np.allclose(probs[counts.sum(1) > 0].sum(1), 1)
    r = compare(load("zero-layer"), probs, counts)
    assert r["max_gap"] < 0.1 and r["predecessors"] == 26


def test_abc_reproduces_the_sources_weights():
    w = attend_one(ABC_QUERY, ABC_KEYS, ABC_VALUES, ABC_D_K)["weights"]
    assert np.allclose(w, (0.25, 0.25, 0.5), atol=0.01) and math.isclose(w.sum(), 1)


def test_part1_widgets_show_bad_input_as_messages(lm):
    box = catalogue.ablation_explorer(lm, [CEFA]).widget()
    first = box.figure.data
    box.controls["L0H3"].value = True
    assert box.figure.data["off"] == ["L0H3"] and box.figure.data != first
    box.controls["track"].value = "Cefaa"
    assert "unknown token" in box.message.value
    box.controls["track"].value = ""
    box.controls["prompt"].value = ""
    assert "empty" in box.message.value
    viewer = catalogue.pattern_viewer(lm, [CEFA]).widget()
    viewer.controls["prompt"].value = "<BOS> " * 60
    assert "at most 48" in viewer.message.value
    calc = catalogue.kv_cache_calculator().widget()
    assert calc.figure.data["total"] == 17_179_869_184
    calc.controls["bytes"].value = "two"
    assert "bytes per number must be a number" in calc.message.value
    calc.controls["bytes"].value = "-1"
    assert "positive" in calc.message.value
