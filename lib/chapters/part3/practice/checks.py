"""Self-checks for the chapter "What it means in practice"."""
from __future__ import annotations

from lib.analysis.signs import read_signs
from lib.content.corpora.calling_game import TOKENS as GAME_TOKENS
from lib.exercises import PROMPT_TEXTS, Feedback, prompt_signs
from lib.exercises.site import Values, site_check
from lib.model.store import load

REVIEW_PROMPTS = ("<BOS> Pietro chiama Paolo", "<BOS> Pietro chiama 4 <SEP> 4 chiama",
                  "<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama Pietro")


def _rules_want() -> dict[str, str | None]:
    """The word the game's rules fix after each prompt, where they fix one (the rules, not the model)."""
    lm = load("calling-game")
    return {p: read_signs(lm, p).rules_want for p in REVIEW_PROMPTS}


def _review_values(lm) -> Values:
    expected = max(REVIEW_PROMPTS, key=lambda p: read_signs(lm, p).entropy_bits)
    # The rules fix one word after a prompt, so a model that learned them is sure of it.
    return Values(expected, options=REVIEW_PROMPTS,
                  hints={f"want{i}": p for i, p in enumerate(REVIEW_PROMPTS) if read_signs(lm, p).rules_want})


def _review_texts() -> dict[str, str]:
    texts = {"right": "its page is the flattest of the three: the search found no single answer.",
             "wrong": "that page is not the flattest; compare the entropies of all three."}
    for i, want in enumerate(_rules_want().values()):
        if want:
            texts[f"want{i}"] = (f"after that prompt the rules allow one word only, {want}; a page with one right "
                                 "word is steep.")
    return texts


NEEDS_REVIEW = site_check(__name__, "needs_review", rule="choice", compute="flattestPage", values=_review_values,
                          model="calling-game", args={"prompts": REVIEW_PROMPTS}, texts=_review_texts())


def needs_review(lm, answer) -> Feedback:
    """Predict: of the three prompts, the one whose page is flattest."""
    return NEEDS_REVIEW.judge(answer, lm)


STEER_WORD, STEER_AT = "vice", 0.9


def _steer_examples(lm) -> Values:
    """Prompts the tests type (an open check ships no values): a right one, found among the legal prompts
    that end where a numbered player calls Paolo, and one per text."""
    candidates = [f"<BOS> Pietro chiama {n} <SEP> {n} chiama Paolo" for n in "12345678"]
    right = next(p for p in candidates if read_signs(lm, p).top == STEER_WORD and read_signs(lm, p).top_prob > STEER_AT)
    return Values(right, hints={"forbidden": "<BOS> Paolo chiama Pietro", "wrong": "<BOS> Pietro chiama Paolo",
                                "unreadable": "<BOS> Pietro chiama Nessuno"})


STEER_TO = site_check(__name__, "steer_to", rule="open", reads="text", compute="steerTo", values=_steer_examples,
                      words=tuple(GAME_TOKENS),
                      model="calling-game", args={"word": STEER_WORD, "threshold": STEER_AT}, texts={
    **PROMPT_TEXTS,
    "forbidden": "the game's rules forbid that prompt ({why}); build a legal one.",
    "wrong": "the model's top word there is {top} ({top_prob:.3f}); the rules must leave {word} as the only "
             "possible next word.",
    "right": "a legal prompt whose search lands on {word} with {top_prob:.3f}."})


def steer_to(lm, answer) -> Feedback:
    """Investigate: a prompt the game allows, after which the model says STEER_WORD with p > STEER_AT."""
    signs = prompt_signs(lm, answer)
    if isinstance(signs, Feedback):
        return signs
    if not signs.on_distribution:
        return STEER_TO.say("forbidden", why=signs.why_impossible)
    if signs.top != STEER_WORD or signs.top_prob <= STEER_AT:
        return STEER_TO.say("wrong", top=signs.top, top_prob=signs.top_prob, word=STEER_WORD)
    return STEER_TO.say("right", True, word=STEER_WORD, top_prob=signs.top_prob)
