"""Self-checks for the chapter "Tools and the conveyor belt"."""
from __future__ import annotations

from lib.content.conveyor import always, run_belt
from lib.content.corpora.calling_game import check_round
from lib.errors import CourseError
from lib.exercises import Feedback, NOT_ANSWERED, check_choice, per_model, shown, unanswered


@per_model
def _word_after_tool(lm, tool_word: str) -> str:
    belt = run_belt(lm, "<BOS>", always(tool_word))
    first = next(i for i, t in enumerate(belt.tokens) if t.writer == "tool")
    return belt.tokens[first + 1].token


def word_after_tool(lm, answer, tool_word: str = "Paolo") -> Feedback:
    """Exercise 1: the model's word right after the tool's first answer."""
    return check_choice(answer, lm.vocab.tokens, _word_after_tool(lm, tool_word),
                        right=f"after the tool writes {tool_word}, the model writes {answer}.",
                        wrong=f"the model does not write {answer} there; run the belt and read it.")


def full_round_tool(lm, tool) -> Feedback:
    """Exercise 2: a tool whose answers let the model finish a valid round of 8 legal calls."""
    if unanswered(tool):
        return Feedback(False, NOT_ANSWERED, answered=False)
    if not callable(tool):
        return Feedback(False, f"the answer should be a function taking the belt's words; got {shown(tool)}.")
    try:
        belt = run_belt(lm, "<BOS>", tool)
    except CourseError as e:
        return Feedback(False, str(e))
    except Exception as e:  # the learner's own function failed: say how, without a traceback
        return Feedback(False, f"your tool raised {type(e).__name__}: {e}")
    ok, why = check_round(belt.words())
    if ok and why == "valid":
        return Feedback(True, f"the round has {belt.tool_calls} tool calls and obeys every rule.")
    return Feedback(False, f"the round does not finish with 8 legal calls ({why}): {belt.text()}")
