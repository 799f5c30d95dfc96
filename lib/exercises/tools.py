"""Self-checks for the chapter "Tools and the conveyor belt"."""
from __future__ import annotations

from lib.content.conveyor import always, run_belt
from lib.content.corpora.calling_game import check_round
from lib.errors import CourseError
from lib.exercises import Feedback, NOT_ANSWERED, check_choice, per_model, shown, unanswered
from lib.exercises.writing import TIME_LIMIT, TimeUp, is_empty_stub, call_with_limit


@per_model
def _word_after_tool(lm, tool_word: str) -> str:
    belt = run_belt(lm, "<BOS>", always(tool_word))
    first = next(i for i, t in enumerate(belt.tokens) if t.writer == "tool")
    return belt.tokens[first + 1].token


def word_after_tool(lm, answer, tool_word: str = "4") -> Feedback:
    """Predict: the model's word right after the tool's first answer, for a tool stuck on `tool_word`."""
    expected = _word_after_tool(lm, tool_word)
    fb = check_choice(answer, lm.vocab.tokens, expected,
                      right=f"after the tool writes {tool_word}, the model writes {answer}.",
                      wrong=f"the model does not write {answer} there; work out what the rules want after "
                            f"Pietro chiama {tool_word}, then run the belt and read it.")
    if fb or not isinstance(answer, str):
        return fb
    if answer == tool_word:
        return Feedback(False, f"{tool_word} is the tool's own word; the question is what the model writes after it.")
    if answer in ("Tarso", "Cefa", "capo", "vice") and answer != expected:
        return Feedback(False, "an epithet follows only a call to Pietro or Paolo; by the game's rules numbers "
                               "get none.")
    return fb


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
