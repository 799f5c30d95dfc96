"""Part 3's library: the trajectory, the conveyor belt, the signs of a weak search, the cost of the search."""
import math

import numpy as np
import pytest
import torch

from lib.content.conveyor import always, current_turn, referee, run_belt
from lib.content.corpora.calling_game import check_round
from lib.errors import CourseError
from lib.analysis.scale import search_cost
from lib.analysis.signs import random_prompts, read_signs, rules_say
from lib.analysis.trajectory import residual_trajectory


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


def test_referee_rounds_obey_the_rules_and_tools_write_after_every_request(lm):
    belt = run_belt(lm, "<BOS>", referee(seed=0))
    assert check_round(belt.words()) == (True, "valid")
    words = belt.words()
    for i, t in enumerate(belt.tokens):
        if t.writer == "tool":
            assert words[i - 1] == "chiama" and belt.tokens[i - 1].writer == "model"
    assert belt.tool_calls == sum(t.writer == "tool" for t in belt.tokens) == 8


def test_a_tools_answer_is_just_more_text(lm):
    """The model's next-word page after a belt equals its page after the same words typed as a prompt."""
    belt = run_belt(lm, "<BOS>", always("Paolo"), max_new_tokens=3)   # counts the model's tokens only
    assert belt.words() == ["<BOS>", "Pietro", "chiama", "Paolo", "Tarso"]
    assert [t.writer for t in belt.tokens] == ["prompt", "model", "model", "tool", "model"]

    def page(prompt):
        return torch.softmax(lm.model(lm.encode(prompt))[-1].double(), -1)

    assert math.isclose(belt.tokens[3].prob, float(page("<BOS> Pietro chiama")[lm.vocab.id("Paolo")]), rel_tol=1e-5)
    assert math.isclose(belt.tokens[4].prob, float(page("<BOS> Pietro chiama Paolo")[lm.vocab.id("Tarso")]),
                        rel_tol=1e-5)


def test_bad_tools_get_a_clear_message(lm):
    with pytest.raises(CourseError, match="cannot read"):
        run_belt(lm, "<BOS>", always("Giovanni"))
    with pytest.raises(CourseError, match="trigger"):
        run_belt(lm, "<BOS>", always("1"), trigger="calls")
    with pytest.raises(CourseError, match="no call yet"):
        current_turn(["<BOS>"])


def test_the_belt_stops_at_the_context(lm):
    belt = run_belt(lm, "<BOS>", referee(1), max_new_tokens=1000)
    assert len(belt.tokens) <= lm.model.cfg.n_ctx


def test_signs_set_the_page_beside_the_rules(lm):
    s = read_signs(lm, "<BOS> Pietro chiama")
    assert s.on_distribution and s.top_allowed and math.isclose(s.entropy_bits, 3.17, abs_tol=0.05)
    bad = read_signs(lm, "<BOS> Pietro chiama Pietro")
    assert not bad.on_distribution and "opening call cannot be wrong" in bad.why_impossible
    assert rules_say("<BOS> Pietro chiama Paolo") == ({"Tarso": 1.0}, "")
    prompts = random_prompts(lm, 20, seed=3)
    assert prompts == random_prompts(lm, 20, seed=3) and all(p.startswith("<BOS> ") for p in prompts)


def test_search_cost_counts_and_checks():
    c = search_cost(5000, 64, repeats=1)
    assert c.multiply_adds == 320000 and c.dictionary_bytes == 1280000 and c.seconds > 0
    with pytest.raises(CourseError, match="vocab_size"):
        search_cost(0, 64)
    with pytest.raises(CourseError, match="d_model"):
        search_cost(10, 2.5)


# --- Claims over prompt sets: the open callee choice, the rules' verdict, flatness as a detector ---

def test_callee_choice_prompts_stop_where_the_rules_leave_a_choice():
    from lib.content.corpora.calling_game import next_token_distribution
    from lib.content.prompt_sets import KINDS, OPEN_KINDS, prompt_set, prompt_sets

    assert "callee-choice" in OPEN_KINDS and "callee-choice" not in KINDS
    assert set(prompt_sets(3, max_tokens=48)) == set(KINDS), "prompt_sets holds only the kinds the rules fix"
    prompts = prompt_set("callee-choice", 30, seed=2, max_tokens=48)
    assert len(prompts) == 30 and prompts[0].text == "<BOS> Pietro chiama"
    for p in prompts:
        rules = next_token_distribution(p.tokens)
        assert p.tokens[-1] == "chiama" and len(rules) >= 8, p.text
        assert rules[p.target] == max(rules.values())


def test_hand_wired_prompts_are_distinct_prefixes_of_its_sentences():
    import random

    from lib.content.corpora.hand_wired import sample_sentence
    from lib.content.prompt_sets import hand_wired_prompts

    prompts = hand_wired_prompts(50, seed=1)
    assert len(prompts) == len(set(prompts)) == 50 and prompts == hand_wired_prompts(50, seed=1)
    assert all(p.startswith("<BOS> ") and len(p.split()) >= 2 and "<EOS>" not in p for p in prompts)
    rng = random.Random(1)
    sentences = [" ".join(sample_sentence(rng)) for _ in range(50)]
    assert all(any(s.startswith(p + " ") for s in sentences) for p in prompts), "each is a sentence cut short"
    with pytest.raises(CourseError, match="n must be"):
        hand_wired_prompts(0)


def test_the_verdict_holds_the_top_word_to_the_rules(lm):
    from lib.analysis.signs import Signs, epithet_rule

    assert epithet_rule("<BOS> Pietro chiama Pietro") == "capo"      # the epithet still follows a wrong call
    assert epithet_rule("Pietro chiama Paolo") == "Tarso" and epithet_rule("<BOS> banana chiama Paolo") is None
    assert epithet_rule("<BOS> Pietro chiama 4") is None
    s = read_signs(lm, "<BOS> Pietro chiama Pietro")
    assert not s.on_distribution and s.top == "capo" and s.verdict == "epithet rule"
    assert read_signs(lm, "<BOS> Tarso Tarso Tarso").verdict == "no rule"
    assert read_signs(lm, "<BOS> Pietro chiama Paolo").verdict == "allowed"
    wrong = Signs("<BOS> Pietro chiama Paolo", "vice", 0.9, 0.5, 0.8, {"Tarso": 1.0})
    assert wrong.verdict == "mistake" and wrong.rules_want == "Tarso"
    stray = Signs("Pietro chiama Paolo", "perde", 0.9, 0.5, 0.8, None, "no <BOS>", "Tarso")
    assert stray.verdict == "mistake" and stray.rules_want == "Tarso"
    open_page = Signs("<BOS> Pietro chiama", "3", 0.12, 3.2, 0.01, {"3": 0.5, "4": 0.5})
    assert open_page.verdict == "allowed" and open_page.rules_want is None


def test_the_flatness_detector_counts_flags_per_group():
    from lib.analysis.flatness import detector_report
    from lib.analysis.signs import Signs

    def page(bits, rules):
        return Signs("p", "x", 0.5, bits, 0.1, rules)

    groups = {"impossible": [page(0.2, None), page(1.5, None), page(1.0, None)],
              "legal_open": [page(3.2, {"a": 0.5, "b": 0.5})],
              "legal_fixed": [page(0.0, {"a": 1.0}), page(2.0, {"a": 1.0})]}
    r = detector_report(groups, threshold_bits=1.0)
    assert (r.impossible.flagged, r.impossible.total) == (1, 3), "a page flags only above the threshold"
    assert (r.legal_open.flagged, r.legal_fixed.flagged, r.legal_fixed.total) == (1, 1, 2)
    assert math.isclose(r.impossible.share, 1 / 3)
    assert detector_report(groups, threshold_bits=0.0).impossible.flagged == 3
    with pytest.raises(CourseError, match="bits"):
        detector_report(groups, threshold_bits=-1)


def test_the_model_is_flat_where_the_rules_leave_a_choice(lm):
    from lib.analysis.flatness import detector_report, labelled_signs

    groups = labelled_signs(lm, n=10, n_random=60)
    assert all(not s.on_distribution for s in groups["impossible"]) and len(groups["legal_open"]) == 10
    r = detector_report(groups, 1.0)
    assert r.legal_open.flagged == 10, "every open callee choice carries more than one bit"
    assert r.legal_fixed.flagged <= 1


# --- The lever in logits ---

def test_the_logit_difference_adds_up_stage_by_stage(lm):
    from lib.chapters.part3.lever.logit_difference import difference_view, rival_epithet, summarise

    assert [rival_epithet(w) for w in ("Tarso", "vice", "Cefa", "capo")] == ["vice", "Tarso", "capo", "Cefa"]
    with pytest.raises(CourseError, match="not an epithet"):
        rival_epithet("Paolo")
    v = difference_view(lm, "<BOS> Pietro chiama Paolo", "Tarso")
    logits = lm.model(lm.encode(v.prompt))[-1].double()
    final = float(logits[lm.vocab.id("Tarso")] - logits[lm.vocab.id("vice")])
    assert math.isclose(v.final, final, abs_tol=1e-4), "the lens's last stage is the model's output"
    assert math.isclose(sum(v.pushes.values()), final, abs_tol=1e-4), "without LayerNorm the pushes add up"
    # Each stage's difference is the previous one plus what that stage wrote.
    assert math.isclose(v.differences[2] - v.differences[1], v.pushes["blocks.0.mlp"], abs_tol=1e-4)
    assert v.tops[-1] == "Tarso" and v.probs[-1] > 0.99
    s = summarise([v, difference_view(lm, "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo", "vice")])
    assert s.n == 2 and s.on_top[-1] == 2 and s.ahead[-1] == 2 and sum(s.largest.values()) == 2
    with pytest.raises(CourseError):
        summarise([])


# --- The query's length, the bias and the final LayerNorm ---

def test_without_the_bias_scaling_the_query_never_changes_the_winner(lm):
    from lib.chapters.part3.mechanism.query_length import scaled_logits, temperature_vs_length, tie_scale, winner_flips, winners
    from lib.content.prompt_sets import prompt_set

    prompts = [p.text for p in prompt_set("callee-choice", 15, max_tokens=48)]
    assert winner_flips(lm, prompts, bias=False) == 0
    page = winners(lm, "<BOS> Pietro chiama")
    assert len(page.distinct_winners) == 2 and page.flip_scale() is not None, "the bias swaps two near-tied players"
    assert winners(lm, "<BOS> Pietro chiama", bias=False).flip_scale() is None
    first, last = page.distinct_winners
    tie = tie_scale(lm, "<BOS> Pietro chiama", first, last)
    at_tie = scaled_logits(lm, "<BOS> Pietro chiama", [tie])[0]
    assert math.isclose(at_tie[lm.vocab.id(first)], at_tie[lm.vocab.id(last)], abs_tol=1e-9)
    assert tie < page.flip_scale(), "the sweep sees the swap at its first point past the tie"
    with_bias, without = temperature_vs_length(lm, "<BOS> Pietro chiama", 0.25)
    assert without < 1e-12 < with_bias
    with pytest.raises(CourseError, match="temperature"):
        temperature_vs_length(lm, "<BOS> Pietro chiama", 0)


def test_a_final_layernorm_squeezes_the_query_length_into_a_band(hand_wired):
    from lib.chapters.part3.mechanism.query_length import length_and_confidence, rank_correlation
    from lib.content.prompt_sets import hand_wired_prompts

    assert math.isclose(rank_correlation([1, 2, 3], [10, 20, 30]), 1.0)
    assert math.isclose(rank_correlation([1, 2, 3], [3, 2, 1]), -1.0)
    hw = hand_wired
    r = length_and_confidence(hw, hand_wired_prompts(60))
    # The band is much narrower than the raw spread, but not a single length: the gain stretches
    # some directions more than others (the chapter reports both correlations, whichever is larger).
    squeezed, raw = (v.max() / v.min() for v in (r.query_lengths, r.raw_lengths))
    assert 1.0 < squeezed < raw / 2
    assert r.top_probs.min() < 0.5 < r.top_probs.max()
    assert all(-1 <= r.correlation_with(name) <= 1 for name in ("alignments", "query_lengths", "raw_lengths"))
    with pytest.raises(CourseError, match="at least two"):
        length_and_confidence(hw, ["<BOS> the"])


def test_show_puts_the_description_on_the_image():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from lib.pictures.figures import show

    InteractiveShell.instance()
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    with capture_output() as captured:
        show(fig, 'a "line"\n   <rising>')
    data = captured.outputs[0].data
    assert 'alt="a &quot;line&quot; &lt;rising&gt;"' in data["text/html"]
    assert data["text/plain"] == 'a "line" <rising>' and data["image/png"].startswith("iVBOR")
    assert not plt.get_fignums(), "the figure is closed, so it is not drawn a second time"
