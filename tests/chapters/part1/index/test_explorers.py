"""Part 1's map: the whole machine's view adds up, its switches act through the hook points, every
explorer says where it sits on it; the rules checker's explorer in a kernel."""
import random

import pytest

import lib
from lib.chapters.part1.index.explorers import machine_explorer
from lib.chapters.part1.the_game.explorers import rules_explorer
from lib.explorers.registry import entries, where_it_sits


def test_the_writes_add_up_to_the_answers_logit(lm):
    """No LayerNorm before the read-out: the answer's logit is every part's write along its
    unembedding plus the bias, at any position, with any parts switched off (float32: 1e-4)."""
    ex = machine_explorer(lm, ["<BOS> Pietro chiama Paolo"])
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

    ex = machine_explorer(lm, ["<BOS> Pietro chiama Paolo"])
    v = ex.compute(dict(ex.defaults(), MLP1=True, L0H2=True))
    logits = prompt_logits(lm, "<BOS> Pietro chiama Paolo", [(0, 2)], [1])
    assert lm.vocab.tokens[int(logits.argmax())] == v["answer"]
    assert abs(float(logits.max()) - v["logit"]) < 1e-4
