"""Part 1's map: the whole machine's view adds up, its switches act through the hook points, every
"where this sits" names a registered view; the rules checker's explorer in a kernel."""
import random

import pytest

import lib
from lib.explorers import machine
from lib.explorers.definition import registered_views


@pytest.fixture(scope="module")
def lm():
    return lib.load("calling-game")


def test_the_writes_add_up_to_the_answers_logit(lm):
    """No LayerNorm before the read-out: the answer's logit is every part's write along its
    unembedding plus the bias, at any position, with any parts switched off (float32: 1e-4)."""
    ex = machine.machine_explorer(lm, ["<BOS> Pietro chiama Paolo"])
    rng = random.Random(3)
    for _ in range(25):
        words = ["<BOS>"] + [rng.choice(lm.vocab.tokens) for _ in range(rng.randint(0, 40))]
        values = dict(ex.defaults(), prompt=" ".join(words), position=str(rng.randrange(len(words))),
                      part=rng.choice(ex.rows[1][0].options))
        values.update({c.name: rng.random() < 0.3 for c in ex.controls if c.kind == "toggle"})
        v = ex.compute(values)
        assert abs(sum(v["dla"]) + v["bias"] - v["logit"]) < 1e-4 * max(1, abs(v["logit"])), values
        assert v["page"][0][0] == v["answer"]
        for name in v["off"]:
            i = v["parts"].index(name)
            assert v["dla"][i] == 0 and v["norm"][i] == 0, (name, values)
        d = v["detail"]
        assert (d["pattern"] is not None) == values["part"].startswith("L")
        assert (d["lens"] is None) == (values["part"] == "readout")


def test_switching_a_part_off_changes_the_answer_as_ablation_does(lm):
    from lib.model.readout import prompt_logits

    ex = machine.machine_explorer(lm, ["<BOS> Pietro chiama Paolo"])
    v = ex.compute(dict(ex.defaults(), MLP1=True, L0H2=True))
    logits = prompt_logits(lm, "<BOS> Pietro chiama Paolo", [(0, 2)], [1])
    assert lm.vocab.tokens[int(logits.argmax())] == v["answer"]
    assert abs(float(logits.max()) - v["logit"]) < 1e-4


def test_every_where_this_sits_names_a_registered_view():
    assert set(machine.WHERE) <= registered_views(), sorted(set(machine.WHERE) - registered_views())
    assert machine.where_it_sits("machine") == ""
    # Every other explorer says where it sits (the map and the game's checker are the map and its rules).
    missing = registered_views() - set(machine.WHERE) - {"machine", "rules"}
    assert not missing, f"explorers with no 'where this sits' sentence: {sorted(missing)}"


def test_the_rules_checker_in_a_kernel_reads_a_round_and_says_what_is_wrong(lm):
    box = machine.rules_explorer(lm, ["<BOS> Pietro chiama Paolo Tarso"]).widget()
    assert box.figure.data["status"] == "unfinished" and box.figure.data["allowed"] == ["<SEP>"]
    box.controls["prompt"].value = "<BOS> Pietro chiama Paolo vice"
    assert box.figure.data["status"] == "broken" and box.figure.data["position"] == 4
    assert "must say 'Tarso'" in box.figure.data["message"] and box.message.value == ""
    box.controls["prompt"].value = "<BOS> Pietro chiamma"
    assert "unknown token" in box.message.value and box.figure.data["position"] == 4
