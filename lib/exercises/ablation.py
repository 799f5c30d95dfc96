"""Self-checks for the chapter "Switching attention off"."""
from __future__ import annotations

from lib.analysis.ablation import ablation_view, all_heads, head_effects, head_name
from lib.exercises import Feedback, NOT_ANSWERED, check_choice, per_model, same_option, unanswered

CEFA_PROMPT = "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro"
# A later call the explorer does not offer: Paolo, called by a numbered player, calls Pietro.
LATER_CALL = "<BOS> Pietro chiama 6 <SEP> 6 chiama Paolo vice <SEP> Paolo chiama Pietro"


def cefa_head(lm, answer) -> Feedback:
    """The single head whose ablation lowers P(Cefa) the most on CEFA_PROMPT."""
    effects = head_effects(lm, CEFA_PROMPT, "Cefa")
    best = min((g for g in effects if g), key=effects.get)
    names = [head_name(h) for h in all_heads(lm.model)]
    return check_choice(answer, names, head_name(best[0]),
                        right=f"switching {answer} off drops Cefa to {effects[best]:.3f}.",
                        wrong=f"switching {answer} off leaves Cefa higher than another head does; try them all.")


@per_model
def _top_with_every_head_off(lm) -> str:
    return ablation_view(lm, LATER_CALL, list(all_heads(lm.model)), None).page[0][0]


def every_head_off_top(lm, answer) -> Feedback:
    """The token the model puts first on LATER_CALL with every head of both layers switched off."""
    if unanswered(answer):
        return Feedback(False, NOT_ANSWERED, answered=False)
    if same_option(answer, "Cefa"):
        return Feedback(False, "Cefa needs to know who calls, and the caller stands at an earlier position: with "
                               "every head off, nothing reaches the last position from the positions before it.")
    return check_choice(answer, lm.vocab.tokens, _top_with_every_head_off(lm),
                        right=f"with attention off the model cannot see who calls, and falls back on {answer}.",
                        wrong="not that one: think of what the last position knows on its own, its token and "
                              "where it stands, and which caller the model then assumes.")
