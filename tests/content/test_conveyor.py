"""The conveyor belt (lib.content.conveyor): a harness that lets a tool write into the prompt. The referee's rounds
obey the rules, a tool's answer is just more text to the model, bad tools get one clear line, the belt stops
at the context."""
import math

import pytest
import torch

from lib.content.conveyor import always, current_turn, referee, run_belt
from lib.content.corpora.calling_game import check_round
from lib.errors import CourseError


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
