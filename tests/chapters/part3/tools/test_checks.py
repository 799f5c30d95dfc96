"""The self-checks of chapters/part3/tools (lib/chapters/part3/tools/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

from helpers import PART3_GARBAGE
from lib.chapters.part3.tools import checks as tools


def test_tools_checks(lm):
    from lib.content.conveyor import always, current_turn, run_belt
    from lib.content.corpora.calling_game import legal_callees
    belt = run_belt(lm, "<BOS>", always("4"))
    first = next(i for i, t in enumerate(belt.tokens) if t.writer == "tool")
    after = belt.tokens[first + 1].token
    assert tools.word_after_tool(lm, after) and not tools.word_after_tool(lm, "Paolo")
    assert "tool's own word" in tools.word_after_tool(lm, "4").message
    if after not in ("Tarso", "vice"):
        assert "numbers get none" in tools.word_after_tool(lm, "Tarso").message
    for garbage in PART3_GARBAGE:
        assert not tools.word_after_tool(lm, garbage)
    assert tools.full_round_tool(lm, lambda w: [legal_callees(*current_turn(w))[-1]])
    assert "cannot read" in tools.full_round_tool(lm, lambda w: ["Giovanni"]).message
    assert "ZeroDivisionError" in tools.full_round_tool(lm, lambda w: [1 / 0]).message
    assert "function" in tools.full_round_tool(lm, "Paolo").message
    assert not tools.full_round_tool(lm, lambda w: ["Pietro"])


def test_a_tool_left_as_the_stub_or_looping_gets_a_verdict(lm):
    def tool(words):
        ...

    def forever(words):
        while True:
            pass

    assert not tools.full_round_tool(lm, tool).answered
    fb = tools.full_round_tool(lm, forever)
    assert not fb and fb.answered and "loop" in fb.message
