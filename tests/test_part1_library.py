"""Part 1's library: the inventory of shapes, the KV cache, ablation, circuits, bigrams, and the widgets."""
import math

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")

from lib.chapters.part1.ablation.explorers import ablation_explorer  # noqa: E402
from lib.chapters.part1.circuits.explorers import pattern_viewer  # noqa: E402
from lib.chapters.part1.shapes_and_cache.explorers import kv_cache_calculator  # noqa: E402
from lib.analysis.ablation import (ablation_view, all_heads, context_blindness, head_effects, head_name,  # noqa: E402
                                   without_attention, zero_W_O)
from lib.analysis.bigrams import bigram_table, compare  # noqa: E402
from lib.chapters.part1.circuits.circuits import head_habits, ov_circuit, ov_copies, qk_circuit, token_ov  # noqa: E402
from lib.errors import CourseError  # noqa: E402
from lib.analysis.inventory import (GPT2_SMALL, SEVEN_B, activations, from_config, kv_cache_bytes,  # noqa: E402
                           parameter_count, twelve_L_d2)
from lib.model.store import load, shipped_names  # noqa: E402
from lib.content.worked_examples import ABC_D_K, ABC_KEYS, ABC_QUERY, ABC_VALUES, attend_one  # noqa: E402
from lib.content.prompt_sets import epithet_sets, places, prompt_set  # noqa: E402

CEFA = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"


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


def test_one_head_carries_cefa_and_no_head_or_pair_zeroed_loses_the_opening_tarso(lm):
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
    habits = head_habits(lm)
    assert habits.positions == 160 and all(abs(sum(s.values()) - 1) < 1e-6 for s in habits.shares.values())
    assert max(habits.shares, key=lambda hd: habits.shares[hd]["where the caller was called"]) == (0, 3)
    with pytest.raises(CourseError, match="later-turn epithet prompts"):
        head_habits(lm, prompt_set("next-caller", 3))


def test_the_zero_layer_model_learns_the_bigram_table(zero_layer):
    tokens, counts, probs = bigram_table(n_rounds=2000)
    assert np.allclose(probs[counts.sum(1) > 0].sum(1), 1)
    r = compare(zero_layer, probs, counts)
    assert r["max_gap"] < 0.1 and r["predecessors"] == 26


def test_abc_reproduces_the_sources_weights():
    w = attend_one(ABC_QUERY, ABC_KEYS, ABC_VALUES, ABC_D_K)["weights"]
    assert np.allclose(w, (0.25, 0.25, 0.5), atol=0.01) and math.isclose(w.sum(), 1)


def test_part1_widgets_show_bad_input_as_messages(lm):
    box = ablation_explorer(lm, [CEFA]).widget()
    first = box.figure.data
    box.controls["L0H3"].value = True
    assert box.figure.data["off"] == ["L0H3"] and box.figure.data != first
    box.controls["track"].value = "Cefaa"
    assert "unknown token" in box.message.value
    box.controls["track"].value = ""
    box.controls["prompt"].value = ""
    assert "empty" in box.message.value
    viewer = pattern_viewer(lm, [CEFA]).widget()
    viewer.controls["prompt"].value = "<BOS> " * 60
    assert "at most 48" in viewer.message.value
    calc = kv_cache_calculator().widget()
    assert calc.figure.data["total"] == 17_179_869_184
    calc.controls["bytes"].value = "two"
    assert "bytes per number must be a number" in calc.message.value
    calc.controls["bytes"].value = "-1"
    assert "positive" in calc.message.value


# ------------------------------------------------------------------ claims counted over labelled prompts
from lib.analysis.head_survey import (HOLDS_AT, Switch, ablation_survey, attention_survey, head_disagreement,  # noqa: E402
                                      head_pairs, single_heads, untrained_twin, whole_blocks)
from lib.model.readout import last_logits, prompt_logits  # noqa: E402
from lib.content.corpora.calling_game import PLAYERS  # noqa: E402

NUMBERS = tuple(p for p in PLAYERS if p not in ("Pietro", "Paolo"))


def test_batched_logits_equal_one_prompt_at_a_time(lm):
    prompts = [p.text for p in prompt_set("next-caller", 12, max_tokens=48)] + ["<BOS> Pietro chiama Paolo"]
    batch = last_logits(lm, prompts, ablate=[(0, 3)], ablate_mlps=[1])
    for row, prompt in zip(batch, prompts):
        assert float((row - prompt_logits(lm, prompt, ablate=[(0, 3)], ablate_mlps=[1])).abs().max()) < 1e-4
    with pytest.raises(CourseError, match="at least one prompt"):
        last_logits(lm, [])
    with pytest.raises(CourseError, match="unknown token"):
        last_logits(lm, ["<BOS> Pietro chiama Pablo"])


def test_places_name_the_roles_of_the_last_call():
    where = places("<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice <SEP> Paolo chiama Pietro".split())
    assert where == {"<BOS>": 0, "the caller": 10, "chiama": 11, "the callee": 12, "where the caller was called": 7,
                     "the epithet the caller earned": 8}
    closed = places("<BOS> Pietro chiama Paolo Tarso <SEP>".split())
    assert closed["the callee"] == 3 and closed["the epithet the callee earned"] == 4 and "where the caller was called" not in closed
    with pytest.raises(CourseError, match="no call"):
        places(["<BOS>", "Pietro"])


def test_sets_by_target_hold_only_those_targets():
    sets = epithet_sets(10, max_tokens=48)
    assert set(sets) == {"Tarso", "Cefa", "capo", "vice"}
    assert all(p.target == e and p.kind == "epithet-later-turn" for e, group in sets.items() for p in group)
    numbers = prompt_set("next-caller", 15, target=NUMBERS)
    assert len(numbers) == 15 and all(p.target in NUMBERS for p in numbers)
    assert prompt_set("next-caller", 5, target="Paolo")[0].target == "Paolo"


def test_one_head_reads_the_caller_on_later_calls_and_copies_the_next_caller(lm):
    sets = epithet_sets(40, max_tokens=48)
    cefa = ablation_survey(lm, sets["Cefa"])
    assert cefa.held() == 40 and cefa.most_damaging() == "L0H3" and cefa.lost("L0H3") == 40
    assert cefa.replacements("L0H3") == {"capo": 40}
    for subordinate in ("capo", "vice"):
        assert ablation_survey(lm, sets[subordinate]).lost("L0H3") == 0
    copying = ablation_survey(lm, prompt_set("next-caller", 40, max_tokens=48, target=NUMBERS))
    assert copying.most_damaging() == "L0H3" and copying.lost("L0H3") >= 30
    looks = attention_survey(lm, prompt_set("next-caller", 40, max_tokens=48, target=NUMBERS), ["the callee"])
    assert looks[(0, 3)]["the callee"].largest >= 36 and looks[(0, 3)]["the callee"].present == 40
    assert sum(ov_copies(lm.model, 0, 3, [lm.vocab.id(p) for p in NUMBERS])) == len(NUMBERS)
    # On the opening call no single zeroed head is needed (what reads the caller there is patching's
    # question: lib.claims, ablation.opening-reads-caller).
    opening = ablation_survey(lm, prompt_set("epithet-first-turn"))
    assert opening.n == 1 and all(opening.lost(name) == 0 for name in opening.off)


def test_switch_groups_and_survey_messages(lm):
    assert len(single_heads(lm.model)) == 8 and len(head_pairs(lm.model)) == 28
    assert set(whole_blocks(lm.model)) == {"attention 0", "MLP 0", "attention 1", "MLP 1"}
    group = prompt_set("number-call", 6)
    survey = ablation_survey(lm, group, {"all": Switch(heads=tuple(all_heads(lm.model))), "none": Switch()})
    assert np.allclose(survey.off["none"], survey.intact) and survey.lost("none") == 0
    assert 0 <= HOLDS_AT <= 1
    with pytest.raises(CourseError, match="empty"):
        ablation_survey(lm, [])
    with pytest.raises(CourseError, match="empty"):
        attention_survey(lm, [], ["the callee"])


def test_training_made_the_heads_differ(lm):
    group = prompt_set("epithet-later-turn", 20, max_tokens=48)
    trained, fresh = head_disagreement(lm, group, 0), head_disagreement(untrained_twin(lm), group, 0)
    assert trained > 0.3 > 0.01 > fresh
    twin = untrained_twin(lm).model
    assert twin.W_E.shape == lm.model.W_E.shape and not torch.equal(twin.W_E, lm.model.W_E)
    assert torch.equal(untrained_twin(lm, seed=3).model.W_E, untrained_twin(lm, seed=3).model.W_E), "seeded"


def test_context_reaches_a_position_only_through_attention(lm):
    r = context_blindness(lm, prompt_set("epithet-later-turn", 10, max_tokens=48))
    assert r["prompts"] == 10 and r["ablate_vs_zero_W_O"] == 0.0 and r["prefix_effect_off"] == 0.0
    assert r["prefix_effect_on"] > 1


# ------------------------------------------------------------------ order and positions
from lib.analysis.positions import lag_similarity, offset_preference, order_test, shuffle_middle, without_positions  # noqa: E402


def test_without_positions_one_layer_sees_a_bag_and_the_causal_mask_leaks_order(lm):
    sequences = [lm.encode(p.text) for p in prompt_set("epithet-later-turn", 10, max_tokens=48)]
    flat = without_positions(lm)
    blind = order_test(flat.model, sequences, shuffles=3)
    assert blind.shuffles > 0 and blind.largest["blocks.0.attn_out"] < 1e-5
    assert blind.largest["blocks.1.attn_out"] > 0.1, "layer 1 reads keys that saw different prefixes"
    assert order_test(lm.model, sequences, shuffles=3).largest["blocks.0.attn_out"] > 0.1
    assert float(lm.model.W_pos.abs().max()) > 0, "the shipped model keeps its positions"
    from lib.content.worked_examples import cat_sat
    ex = cat_sat()
    swap = order_test(ex.model, [ex.tokens], shuffles=4, stages=("logits",), keep_first=False)
    assert swap.largest["logits"] == 0.0
    with pytest.raises(CourseError, match="two tokens"):
        order_test(ex.model, [ex.tokens[:2]], keep_first=True)


def test_shuffling_keeps_the_ends_and_the_tokens():
    import random
    ids = list(range(10))
    out = shuffle_middle(ids, random.Random(1))
    assert out[0] == 0 and out[-1] == 9 and sorted(out) == ids
    assert sorted(shuffle_middle(ids, random.Random(1), keep_first=False)) == ids


def test_learned_positions_keep_the_rhythm_of_a_turn(lm):
    lags = lag_similarity(lm.model, 10)
    assert int(np.argmax(lags)) + 1 == 4
    pref = offset_preference(lm.model, 0, 3)
    assert pref.shape == (11,) and set(np.argsort(-pref[1:])[:2] + 1) == {1, 5}
    with pytest.raises(CourseError, match="lags"):
        lag_similarity(lm.model, 100)


# ------------------------------------------------------------------ the notes' arithmetic, and the inventory
from lib.content.note_slips import NOTE_TEN_PROBS, cat_sat_steps, ten_column_readout  # noqa: E402
from lib.analysis.inventory import weights_table  # noqa: E402


def test_the_notes_slips_are_found_where_they_are():
    steps = {c.step: c for c in cat_sat_steps()}
    assert steps["V"].follows and steps["scaled"].follows
    assert not steps["QK"].follows and not steps["pattern"].follows and not steps["Q"].follows
    assert round(float(steps["QK"].from_note[1, 0]), 3) == 0.123
    assert np.allclose(steps["pattern"].from_note[2], (0.286, 0.315, 0.399), atol=5e-4)
    assert steps["pattern"].computed[2, 0] > steps["pattern"].computed[2, 1], "computed, sat takes more from the"
    assert steps["pattern"].printed[2, 0] < steps["pattern"].printed[2, 1], "printed, more from cat"
    ten = ten_column_readout()
    assert ten.printed_sum == pytest.approx(1.0) and ten.gap < 0.006 and len(NOTE_TEN_PROBS) == 10


def test_every_weight_table_adds_up(lm):
    archs = [from_config("cg", lm.model.cfg), GPT2_SMALL, SEVEN_B]
    table = weights_table(archs)
    assert [sum(r.totals[i] for r in table) for i in range(3)] == [parameter_count(a) for a in archs]
    rows = {r.name: r for r in table}
    assert rows["unembedding W_U"].totals == (0, 0, 131_072_000)
    assert rows["MLP W_gate"].totals[2] == 32 * 4096 * 11008
    assert rows["norm before attention: bias"].cells[2] is None, "RMSNorm has no bias"
    names = [r.name for r in table]
    assert names.index("W_Q") < names.index("MLP W_in") < names.index("unembedding W_U")


def test_a_tied_toy_prefers_the_word_it_just_read():
    from lib.content.worked_examples import cat_sat, echo_count
    hits, tried = echo_count(cat_sat())
    assert tried == 20 and hits > 5, "far above the one word a blind guess would get"


def test_figures_carry_a_computed_description():
    import matplotlib.pyplot as plt
    from lib.pictures.figures import with_alt
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    html = with_alt(fig, 'P(Tarso) 0.99 & "quoted" <BOS>').data
    assert html.startswith("<img") and 'alt="P(Tarso) 0.99 &amp; &quot;quoted&quot; &lt;BOS&gt;"' in html
    assert not plt.get_fignums(), "the figure is closed, not drawn twice"


def test_part1_states_its_conclusions_as_registered_claims_and_picks_no_head_by_name():
    import re
    from pathlib import Path
    from lib import claims
    chapters = {"why-attention", "bigrams", "one-head", "many-heads", "circuits", "ablation"}
    found = [c for c in claims.claims() if c.chapter in chapters]
    assert len(found) >= 18 and {c.chapter for c in found} == chapters
    # No ranking leaves a head out by name (`n != "L0H0"`): the evidence is every head.
    by_name = re.compile(r"""(!=|not in|==)\s*\(?\s*["']L\d+H\d+["']""")
    for path in sorted((Path(__file__).resolve().parents[1] / "chapters" / "part1").glob("*.md")):
        code = "\n".join(re.findall(r"```\{code-cell\}.*?```", path.read_text(encoding="utf-8"), re.S))
        assert not by_name.search(code), (path.name, by_name.search(code).group(0))
