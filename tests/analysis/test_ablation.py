"""Zero, mean and resample ablation, written on the hooks, against what each is defined to do."""
import pytest
import torch

from lib.analysis.ablation import KINDS, ablated_logits, ablation_hooks, reference_set
from lib.analysis.head_survey import Switch, ablation_survey
from lib.content.prompt_sets import prompt_set
from lib.errors import CourseError
from lib.model.readout import last_logits

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
    _, cache = lm.model.run_with_cache(ids, fwd_hooks=ablation_hooks(lm, [(0, 2)], (), kind, [T], ref, seed=3))
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
    cut from it is left as it was."""
    ref = reference_set(lm, n=1, seed=UNSHOWN_SEED)
    prompt = " ".join(lm.vocab.decode(ref.rounds[0][:9]))
    everything = [(layer, h) for layer in range(2) for h in range(4)]
    got = ablated_logits(lm, [prompt], everything, [0, 1], kind, ref)
    assert float((got - last_logits(lm, [prompt])).abs().max()) < 1e-4


def test_mean_ablation_of_a_batch_equals_each_prompt_alone(lm, prompts):
    together = ablated_logits(lm, prompts, [(0, 0)], [0], "mean")
    for row, prompt in zip(together, prompts):
        assert float((row - ablated_logits(lm, [prompt], [(0, 0)], [0], "mean")[0]).abs().max()) < 1e-4


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
