"""The self-checks of chapters/part1/the-game (lib/chapters/part1/the_game/checks.py): each accepts the right
answer and names the typical mistakes, without giving the answer away."""
from collections import Counter

from lib.chapters.part1.the_game import checks as the_game
from lib.content.corpora import calling_game as cg
from lib.exercises import NOT_ANSWERED


def test_the_rest_of_the_round_is_the_rules_one_ending():
    ending = the_game.round_ending()
    assert cg.read_round(the_game.CALL_BACK.split() + ending).status == "valid"
    right = " ".join(ending)
    assert the_game.rest_of_round(right) and the_game.rest_of_round(f"  {right} ")
    hints = the_game._ending_examples().hints
    for hint, words in (("sep_first", "something is spoken"), ("first_word", "is not the word spoken"),
                        ("loser", "who made the wrong call"), ("goes_on", "who called 3 just before"),
                        ("other", "the checker reads your round as")):
        verdict = the_game.rest_of_round(hints[hint])
        assert not verdict and words in verdict.message and right not in verdict.message, hint
    assert "separated by spaces" in the_game.rest_of_round(42).message
    assert "separated by spaces" in the_game.rest_of_round("   ").message
    assert the_game.rest_of_round(...).message == NOT_ANSWERED and not the_game.rest_of_round(None).answered


def test_the_most_broken_rule_is_counted_from_the_models_rounds(lm):
    counts = the_game.rule_counts(lm)
    assert sum(counts.values()) == the_game.GENERATED_ROUNDS and set(counts) == set(the_game.RULE_ANSWERS)
    again = Counter(cg.read_round(r).rule or "none" for r in the_game._model_rounds(lm))
    assert all(again[k] == n for k, n in counts.items())
    broken = {k: n for k, n in counts.items() if k != "none"}
    top = max(broken, key=broken.get)
    assert the_game.most_broken_rule(lm, top)
    wrong = next(k for k in broken if k != top)
    assert not the_game.most_broken_rule(lm, wrong) and top not in the_game.most_broken_rule(lm, wrong).message
    assert "leave the valid ones out" in the_game.most_broken_rule(lm, "none").message
    assert not the_game.most_broken_rule(lm, "the grammar")
