"""The induction chapter's unit (lib/chapters/part1/induction/): its self-checks accept the right answer and
name the typical mistakes without giving the answer away; its explorer's sequence is what the page draws;
its pitfalls file was measured with the recipes the module derives now."""
import numpy as np
import pytest

from lib.analysis import induction
from lib.chapters.part1.induction import checks, explorers, pitfalls
from lib.errors import CourseError


# A learner's solutions, as written on the page. tests/exercises/test_writing.py gathers every chapter's
# WRITE_CHECKS (name -> (the check, a right function, [(a typical wrong function, words its diagnosis must
# contain), ...])) and runs each check on its right function, its wrong ones and garbage.
def prefix_matching_score(pattern, tokens):
    a = np.asarray(pattern, dtype=float)
    shares = []
    for i, t in enumerate(tokens):
        after = [j + 1 for j in range(i) if tokens[j] == t]
        if after:
            shares.append(a[i, after].sum())
    return float(np.mean(shares)) if shares else 0.0


def _only_the_latest(pattern, tokens):
    a = np.asarray(pattern, dtype=float)
    shares = []
    for i, t in enumerate(tokens):
        after = [j + 1 for j in range(i) if tokens[j] == t]
        if after:
            shares.append(a[i, after[-1]])
    return float(np.mean(shares)) if shares else 0.0


WRITE_CHECKS = {
    "prefix_matching_score": (checks.prefix_matching_score, prefix_matching_score, [
        (checks._prefix_shifted, "earlier occurrence of the query's token itself"),
        (checks._prefix_all_queries, "every query"),
        (_only_the_latest, "too low"),
    ]),
}


def test_the_prefix_matching_score_is_the_induction_score_on_repeated_segments(induction_model):
    batches = induction.sequences(4242, per_period=2)
    want = induction.pattern_scores(induction_model.model, batches)["induction"]
    got = np.zeros_like(want)
    n = 0
    import torch
    for b in batches:
        for row in b.ids:
            _, cache = induction_model.model.run_with_cache(torch.as_tensor(row))
            for layer in range(2):
                for h in range(4):
                    # each sequence counts its p second-copy queries, as pattern_scores does
                    got[layer, h] += b.period * induction.prefix_matching_score(
                        cache[f"blocks.{layer}.attn.pattern"][h].numpy(), row.tolist())
            n += b.period
    assert np.allclose(got / n, want, atol=1e-6)


def test_the_value_checks(induction_model):
    lm = induction_model
    right = checks.ABLATE_INDUCTION.computed(lm).expected
    assert checks.ablate_induction_heads(lm, right)
    wrong = next(o for o in checks.ABLATION_OPTIONS if o != right)
    fb = checks.ablate_induction_heads(lm, wrong)
    assert not fb and right not in fb.message
    assert "one of" in checks.ablate_induction_heads(lm, "it goes up").message
    name = checks.K_READER.computed(lm).expected
    assert checks.k_reader(lm, name)
    fb = checks.k_reader(lm, next(h for h in ("L1H0", "L1H1") if h != name))
    assert not fb and name not in fb.message
    from lib.model.store import load
    assert "reads the induction model" in checks.k_reader(load("calling-game"), name).message


def test_the_drawn_sequence_is_a_segment_of_distinct_letters_twice():
    for seed in (0, 1, 99, 123456):
        s = explorers.drawn_sequence(seed)
        p = len(s) // 2
        assert 4 <= p <= 12 and s[:p] == s[p:] and len(set(s[:p])) == p
    assert explorers.drawn_sequence(5) == explorers.drawn_sequence(5)
    assert len({tuple(explorers.drawn_sequence(s)) for s in range(30)}) == 30


@pytest.mark.parametrize("values, says", [({"sequence": "a B c"}, "'B' is not one"),
                                          ({"sequence": " ".join("abcdefghijklmnopqrstuvwxy")}, "at most 24"),
                                          ({"sequence": "", "seed": "x"}, "whole number from 0"),
                                          ({"sequence": "", "seed": "-1"}, "whole number from 0")])
def test_bad_input_in_the_explorer_is_one_clear_line(values, says):
    e = explorers.training_explorer()
    with pytest.raises(CourseError, match=says):
        e.compute({**e.defaults(), **values})


def test_the_explorer_moves_with_the_checkpoints():
    e = explorers.training_explorer()
    first = e.compute({**e.defaults(), "step": e.args["steps"][0]})
    last = e.compute(e.defaults())
    # before training nothing is copied; at the end the second copy is nearly free
    assert first["loss"]["second"] > 2.5 and last["loss"]["second"] < 0.2
    assert max(max(r) for r in last["prefix"]) > induction.FORMED > max(max(r) for r in first["prefix"])
    typed = e.compute({**e.defaults(), "sequence": "a b c d a b"})
    assert typed["loss"]["second"] is None and typed["tokens"][0] == "<BOS>"


def test_the_pitfalls_were_measured_with_todays_recipes():
    stored = pitfalls.read()      # refuses a file measured with another recipe
    assert set(stored) == {"fixed-period", "small-init"}


def test_the_smollm2_figures_were_measured_with_todays_recipe():
    from lib.chapters.part1.induction import real

    stored = real.read()      # refuses a file measured with another recipe
    ind = np.array(stored["induction"])
    heads = {tuple(hd) for hd in stored["heads"]}
    assert heads == {tuple(hd) for hd in np.argwhere(ind >= induction.FORMED).tolist()}
    assert len(stored["random"]) == real.DRAWS
    for draw in stored["random"]:
        picked = {tuple(hd) for hd in draw["heads"]}
        assert len(picked) == len(heads) and not picked & heads


def test_smollm2s_induction_heads_found_again_on_other_tokens(smollm2_model):
    """Other random tokens (seed 7), two sequences, three random draws: the best induction head is one the
    stored measurement found, and ablating the heads found costs the copy more than each random set."""
    from lib.chapters.part1.induction import real

    got = real.measure(smollm2_model, seed=7, draws=3, n=2)
    stored = {tuple(hd) for hd in real.read()["heads"]}
    assert tuple(got["heads"][0]) in stored
    assert got["previous_head"] == real.read()["previous_head"]
    assert got["previous_ablated"]["accuracy"] < got["clean"]["accuracy"] - 0.2
    assert got["ablated"]["accuracy"] < got["clean"]["accuracy"] - 0.2
    assert all(r["accuracy"] > got["ablated"]["accuracy"] for r in got["random"])
