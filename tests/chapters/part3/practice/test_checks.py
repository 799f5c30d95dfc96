"""The self-checks of chapters/part3/practice (lib/chapters/part3/practice/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""

from helpers import PART3_GARBAGE
from lib.chapters.part3.practice import checks as practice
from lib.content.prompts import CONFIDENT, UNCERTAIN


def test_practice_checks(lm):
    assert practice.needs_review(lm, "<BOS> Pietro chiama 4 <SEP> 4 chiama")
    assert not practice.needs_review(lm, CONFIDENT) and "one of" in practice.needs_review(lm, UNCERTAIN).message
    assert "one word only, Tarso" in practice.needs_review(lm, CONFIDENT).message
    assert "one word only, Cefa" in practice.needs_review(lm, practice.REVIEW_PROMPTS[2]).message
    for garbage in PART3_GARBAGE:
        assert not practice.needs_review(lm, garbage)
    assert practice.steer_to(lm, "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo")
    assert "forbid" in practice.steer_to(lm, "<BOS> 4 chiama Paolo").message
    assert "top word" in practice.steer_to(lm, CONFIDENT).message
