"""Self-checks for the chapter "Tools and the conveyor belt"."""
from __future__ import annotations

from lib.content.conveyor import always, run_belt
from lib.content.corpora.calling_game import check_round
from lib.errors import CourseError
from lib.exercises.site import Values, site_check
from lib.exercises import Feedback, NOT_ANSWERED, check_choice, per_model, shown, unanswered
from lib.exercises.writing import TIME_LIMIT, TimeUp, is_empty_stub, call_with_limit


@per_model
def _word_after_tool(lm, tool_word: str) -> str:
    belt = run_belt(lm, "<BOS>", always(tool_word))
    first = next(i for i, t in enumerate(belt.tokens) if t.writer == "tool")
    return belt.tokens[first + 1].token


TOOL_WORD, EPITHETS = "4", ("Tarso", "Cefa", "capo", "vice")


def _after_values(lm) -> Values:
    return Values(_word_after_tool(lm, TOOL_WORD), options=tuple(lm.vocab.tokens),
                  hints={"tool": TOOL_WORD, **{f"epithet_{e}": e for e in EPITHETS}})


_EPITHET = "an epithet follows only a call to Pietro or Paolo; by the game's rules numbers get none."
# The page runs the belt's loop itself (greedy, the tool's word after the model's first chiama).
WORD_AFTER_TOOL = site_check(__name__, "word_after_tool", rule="choice", compute="wordAfterTool", values=_after_values,
                             model="calling-game", args={"tool_word": TOOL_WORD, "trigger": "chiama",
                                                         "epithets": EPITHETS}, texts={
    "right": "after the tool writes " + TOOL_WORD + ", the model writes {answer}.",
    "wrong": "the model does not write {answer} there; work out what the rules want after Pietro chiama " + TOOL_WORD
             + ", then run the belt and read it.",
    "tool": TOOL_WORD + " is the tool's own word; the question is what the model writes after it.",
    **{f"epithet_{e}": _EPITHET for e in EPITHETS}})


def word_after_tool(lm, answer) -> Feedback:
    """Predict: the model's word right after the tool's first answer, for a tool stuck on TOOL_WORD."""
    return WORD_AFTER_TOOL.judge(answer, lm)


def full_round_tool(lm, tool) -> Feedback:
    """Write: a tool whose answers let the model finish a valid round of 8 legal calls."""
    if unanswered(tool) or (callable(tool) and is_empty_stub(tool)):
        return Feedback(False, NOT_ANSWERED, answered=False)
    if not callable(tool):
        return Feedback(False, f"the answer should be a function taking the belt's words; got {shown(tool)}.")

    def limited(words):   # a tool that never answers must not hang the notebook
        return call_with_limit(tool, (words,), {}, TIME_LIMIT)

    try:
        belt = run_belt(lm, "<BOS>", limited)
    except TimeUp:
        return Feedback(False, f"your tool did not answer within {TIME_LIMIT:g} seconds; does it loop forever?")
    except CourseError as e:
        return Feedback(False, str(e))
    except Exception as e:  # the learner's own function failed: say how, without a traceback
        return Feedback(False, f"your tool raised {type(e).__name__}: {e}")
    ok, why = check_round(belt.words())
    if ok and why == "valid":
        return Feedback(True, f"the round has {belt.tool_calls} tool calls and obeys every rule.")
    return Feedback(False, f"the round does not finish with 8 legal calls ({why}): {belt.text()}")
