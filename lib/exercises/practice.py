"""Self-checks for the chapter "What it means in practice"."""
from __future__ import annotations

from lib.analysis.signs import read_signs
from lib.exercises import Feedback, check_choice, prompt_signs

REVIEW_PROMPTS = ("<BOS> Pietro chiama Paolo", "<BOS> Pietro chiama 4 <SEP> 4 chiama",
                  "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro")


def needs_review(lm, answer, prompts=REVIEW_PROMPTS) -> Feedback:
    """Predict: of the three prompts, the one whose page is flattest."""
    expected = max(prompts, key=lambda p: read_signs(lm, p).entropy_bits)
    fb = check_choice(answer, prompts, expected,
                      right="its page is the flattest of the three: the search found no single answer.",
                      wrong="that page is not the flattest; compare the entropies of all three.")
    if fb or not isinstance(answer, str) or answer not in prompts:
        return fb
    want = read_signs(lm, answer).rules_want
    if want:   # the rules fix one word there, so a model that learned them is sure of it
        return Feedback(False, f"after that prompt the rules allow one word only, {want}; a page with one right "
                               "word is steep.")
    return fb


def steer_to(lm, answer, word: str = "vice", threshold: float = 0.9) -> Feedback:
    """Investigate: a prompt the game allows, after which the model says `word` with p > threshold."""
    signs = prompt_signs(lm, answer)
    if isinstance(signs, Feedback):
        return signs
    if not signs.on_distribution:
        return Feedback(False, f"the game's rules forbid that prompt ({signs.why_impossible}); build a legal one.")
    if signs.top != word or signs.top_prob <= threshold:
        return Feedback(False, f"the model's top word there is {signs.top} ({signs.top_prob:.3f}); "
                               f"the rules must leave {word} as the only possible next word.")
    return Feedback(True, f"a legal prompt whose search lands on {word} with {signs.top_prob:.3f}.")
