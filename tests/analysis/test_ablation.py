"""Zero, mean and resample ablation, written on the hooks, against what each is defined to do."""
import pytest
import torch

from lib.analysis.ablation import (KINDS, ablated_logits, ablation_hooks, ablation_view, context_blindness, head_effects,
                                   head_name, reference_set, without_attention, zero_W_O)
from lib.analysis.head_survey import Switch, ablation_survey
from lib.content.prompt_sets import prompt_set
from lib.errors import CourseError
from lib.model.readout import last_logits

CEFA = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"
UNSHOWN_SEED = 8807


@pytest.fixture(scope="module")
def prompts():
    return [p.text for p in prompt_set("epithet-later-turn", 6, seed=UNSHOWN_SEED)]


def test_zero_ablation_is_the_ablate_keywords(lm, prompts):
    got = ablated_logits(lm, prompts, [(0, 3), (1, 1)], [1], "zero")
    assert torch.equal(got, last_logits(lm, prompts, ablate=[(0, 3), (1, 1)], ablate_mlps=[1]))


def test_the_reference_means_are_per_position_averages_over_the_rounds_reaching_them(lm):
    ref = reference_set(lm, n=12, seed=UNSHOWN_SEED)
    for name in ("blocks.0.attn.head_out", "blocks.1.mlp_out"):
        sums, counts = {}, {}
        for r in ref.rounds:
            _, cache = lm.model.run_with_cache(list(r))
            for p in range(len(r)):
                sums[p] = sums.get(p, 0) + cache[name][p].double()
                counts[p] = counts.get(p, 0) + 1
        for p in sums:
            assert torch.allclose(ref.means[name][p].double(), sums[p] / counts[p], atol=1e-5), (name, p)
        assert ref.longest == max(len(r) for r in ref.rounds)


@pytest.mark.parametrize("kind", ["mean", "resample"])
def test_the_switched_off_head_writes_the_reference_value_and_the_others_are_kept(lm, kind):
    ref = reference_set(lm, n=12, seed=UNSHOWN_SEED)
    ids = lm.encode("<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo")
    T, name = len(ids), "blocks.0.attn.head_out"
    _, intact = lm.model.run_with_cache(ids)
    _, cache = lm.model.run_with_cache(ids, fwd_hooks=ablation_hooks(lm, [(0, 2)], (), kind, [T], ref, seed=3,
                                                                      match="position"))
    written = cache[name][:, 2]
    if kind == "mean":
        assert torch.allclose(written, ref.means[name][:T, 2])
    else:
        assert any(torch.equal(written, ref.writes[name][i, :T, 2]) for i in range(len(ref.rounds)) if
                   len(ref.rounds[i]) >= T)
    assert torch.equal(cache[name][:, [0, 1, 3]], intact[name][:, [0, 1, 3]])


@pytest.mark.parametrize("kind", ["mean", "resample"])
def test_ablating_to_the_prompts_own_round_changes_nothing(lm, kind):
    """With a reference of one round, the mean and the resample are that round's own writes: a prompt
    cut from it is left as it was, when matched by position (matched by role, a role met twice in the
    round averages its two positions)."""
    ref = reference_set(lm, n=1, seed=UNSHOWN_SEED)
    prompt = " ".join(lm.vocab.decode(ref.rounds[0][:9]))
    everything = [(layer, h) for layer in range(2) for h in range(4)]
    got = ablated_logits(lm, [prompt], everything, [0, 1], kind, ref, match="position")
    assert float((got - last_logits(lm, [prompt])).abs().max()) < 1e-4


@pytest.mark.parametrize("match", ["role", "position"])
def test_mean_ablation_of_a_batch_equals_each_prompt_alone(lm, prompts, match):
    together = ablated_logits(lm, prompts, [(0, 0)], [0], "mean", match=match)
    for row, prompt in zip(together, prompts):
        assert float((row - ablated_logits(lm, [prompt], [(0, 0)], [0], "mean", match=match)[0]).abs().max()) < 1e-4


# ----------------------------------------------------------------------------- role-matched references
# An independent implementation: the roles read by plain rules over the finished rounds of the game
# (no neighbour reading), the reference writes gathered round by round in numpy, the replacement written
# by a hook of the test's own. Tolerance 1e-5 on logits of size ~10 (float32 sums in another order).
def roles_by_turn(tokens):
    """Each token's role, walking a legal round turn by turn (the game's grammar, not its neighbours)."""
    out, i, turn = ["<BOS>"], 1, 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("<SEP>", "<EOS>"):
            out.append(t)
            i += 1
            continue
        if i + 1 < len(tokens) and tokens[i + 1] == "perde":
            out += ["loser", "perde"]
            i += 2
            continue
        turn += 1
        pre = "opening " if turn == 1 else ""
        out += [pre + "caller", pre + "chiama", pre + "callee"][:len(tokens) - i]
        i += 3
        if i < len(tokens) and tokens[i] in ("Tarso", "Cefa", "capo", "vice"):
            out.append(pre + "epithet")
            i += 1
    return out


def test_the_game_roles_agree_with_a_walk_through_the_grammar():
    import random
    from lib.content.corpora.calling_game import sample_round, token_roles
    rng = random.Random(UNSHOWN_SEED)
    for _ in range(300):
        r = sample_round(rng)
        assert token_roles(r) == roles_by_turn(r), r


def test_role_matched_mean_ablation_equals_a_numpy_reference(lm, prompts):
    import numpy as np
    ref = reference_set(lm, n=15, seed=UNSHOWN_SEED)
    name, head = "blocks.0.attn.head_out", 1
    sums, counts = {}, {}
    for r in ref.rounds:
        toks = lm.vocab.decode(r)
        _, cache = lm.model.run_with_cache(list(r))
        w = cache[name][:, head].double().numpy()
        for p, role in enumerate(roles_by_turn(toks)):
            sums[role] = sums.get(role, 0) + w[p]
            counts[role] = counts.get(role, 0) + 1
    for prompt in prompts:
        toks = prompt.split()
        value = torch.tensor(np.stack([sums[r] / counts[r] for r in roles_by_turn(toks)]))

        def hook(x, _):
            out = x.clone()
            out[:, head] = value.to(x.dtype)
            return out
        want = lm.model.run_with_hooks(lm.encode(prompt), fwd_hooks=[(name, hook)])[-1].double()
        got = ablated_logits(lm, [prompt], [(0, head)], (), "mean", ref, match="role")[0]
        assert float((got - want).abs().max()) < 1e-5


def test_role_matched_resample_writes_values_met_at_the_same_role(lm):
    ref = reference_set(lm, n=15, seed=UNSHOWN_SEED)
    prompt = "<BOS> Pietro chiama 6 <SEP> 6 chiama 2 <SEP> 2 chiama Paolo"
    ids, name = lm.encode(prompt), "blocks.1.attn.head_out"
    hooks = ablation_hooks(lm, [(1, 2)], (), "resample", None, ref, seed=5, match="role", tokens=[prompt.split()])
    _, cache = lm.model.run_with_cache(ids, fwd_hooks=hooks)
    for p, role in enumerate(roles_by_turn(prompt.split())):
        seen = [ref.writes[name][i, q, 2] for i, r in enumerate(ref.rounds)
                for q, rr in enumerate(roles_by_turn(lm.vocab.decode(r))) if rr == role]
        assert any(torch.equal(cache[name][p, 2], v) for v in seen), (p, role)


def test_the_survey_reports_the_logit_difference_it_moves(lm):
    ps = prompt_set("epithet-later-turn", 8, seed=UNSHOWN_SEED)
    s = ablation_survey(lm, ps, {"L0H3": Switch(heads=((0, 3),))}, kind="mean")
    logits = last_logits(lm, [p.text for p in ps])
    rivals = {"Tarso": "vice", "vice": "Tarso", "Cefa": "capo", "capo": "Cefa"}
    for i, p in enumerate(ps):
        want = float(logits[i, lm.vocab.id(p.target)] - logits[i, lm.vocab.id(rivals[p.target])])
        assert abs(s.intact_diff[i] - want) < 1e-9
    off = ablated_logits(lm, ps, [(0, 3)], (), "mean")
    drops = [s.intact_diff[i] - float(off[i, lm.vocab.id(p.target)] - off[i, lm.vocab.id(rivals[p.target])])
             for i, p in enumerate(ps)]
    assert abs(s.drop("L0H3") - sum(drops) / len(drops)) < 1e-9


def test_the_three_kinds_differ_on_a_survey(lm):
    ps = prompt_set("epithet-later-turn", 10, seed=UNSHOWN_SEED)
    probs = {kind: ablation_survey(lm, ps, {"L0H0": Switch(heads=((0, 0),))}, kind=kind).off["L0H0"] for kind in KINDS}
    assert all(abs(probs[a] - probs[b]).max() > 1e-3 for a in KINDS for b in KINDS if a < b)


@pytest.mark.parametrize("kwargs, message", [
    (dict(kind="half"), "unknown kind of ablation 'half': choose one of zero, mean, resample"),
    (dict(kind="mean", prompts=[" ".join(["<BOS>"] + ["Pietro"] * 44)]), "its longest round has"),
    (dict(kind="mean", heads=[(2, 0)]), r"head \(2, 0\) does not exist"),
    (dict(kind="resample", mlps=[3]), "layer 3 does not exist"),
])
def test_bad_ablation_input_gets_one_clear_message(lm, kwargs, message):
    kwargs = {"prompts": ["<BOS> Pietro chiama Paolo"], "heads": [(0, 0)], **kwargs}
    with pytest.raises(CourseError, match=message):
        ablated_logits(lm, **kwargs)


# ------------------------------------------------------------------ zeroing: heads, attention, the view
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

def test_context_reaches_a_position_only_through_attention(lm):
    r = context_blindness(lm, prompt_set("epithet-later-turn", 10, max_tokens=48))
    assert r["prompts"] == 10 and r["ablate_vs_zero_W_O"] == 0.0 and r["prefix_effect_off"] == 0.0
    assert r["prefix_effect_on"] > 1
