"""Legal corruptions: prefixes of legal rounds, of the clean prompt's length, with another answer.

Checked two ways on prompts no page shows: every corruption returned passes the rules checker and
the rules' own next-token distribution (soundness), and every corruption that the game's generator
itself produces, found by drawing thousands of rounds and cutting them at the clean prompt's length,
is among those returned when its chain of players is as near the clean one's as the nearest returned
(completeness)."""
import random

import pytest

from lib.content.corpora.calling_game import GameOptions, next_token_distribution, read_round, sample_round
from lib.content.corruptions import MAX_CHANGES, chain, corruption_problems, legal_corruptions
from lib.content.prompt_sets import prompt_set
from lib.errors import CourseError

UNSHOWN_SEED = 8807


def rules_answer(tokens):
    dist = next_token_distribution(list(tokens))
    best = max(dist, key=dist.get)
    return best if dist[best] == 1.0 else None


@pytest.fixture(scope="module")
def cleans():
    return [p.text for kind in ("epithet-later-turn", "next-caller", "number-call")
            for p in prompt_set(kind, 4, seed=UNSHOWN_SEED)]


def test_every_corruption_is_a_legal_prefix_of_the_same_length_with_another_answer(cleans):
    assert sum(bool(legal_corruptions(c)) for c in cleans) >= 6     # a number call keeps <SEP> whoever calls
    for clean in cleans:
        a = clean.split()
        found = legal_corruptions(clean)
        for text in found:
            b = text.split()
            assert len(b) == len(a) and b[-1] == a[-1]
            assert read_round(b).status == "unfinished", text
            assert rules_answer(b) not in (None, rules_answer(a)), text
            assert corruption_problems(clean, text) == []


def test_every_corruption_the_generator_makes_nearby_is_found(cleans):
    rng = random.Random(UNSHOWN_SEED)
    rounds = [sample_round(rng, GameOptions(error_rate=0.0)) for _ in range(4000)]
    checked = 0
    for clean in cleans:
        a = clean.split()
        returned = set(legal_corruptions(clean))
        players = chain(a)
        nearest = min((sum(x != y for x, y in zip(chain(t.split()), players)) for t in returned), default=MAX_CHANGES)
        for r in rounds:
            b = r[:len(a)]
            if len(b) < len(a) or b[-1] != a[-1] or rules_answer(b) in (None, rules_answer(a)):
                continue
            other = chain(b)
            if len(other) != len(players) or sum(x != y for x, y in zip(other, players)) > nearest:
                continue
            assert " ".join(b) in returned, (clean, " ".join(b))
            checked += 1
    assert checked >= 5       # the generator did meet corruptions near enough to check


def test_fewest_changes_first_and_the_seed_orders_ties(cleans):
    clean = cleans[0].split()
    found = legal_corruptions(cleans[0])
    changed = [sum(x != y for x, y in zip(t.split(), clean)) for t in found]
    assert changed == sorted(changed)
    assert sorted(legal_corruptions(cleans[0], seed=1)) == sorted(found)
    assert legal_corruptions(cleans[0], n=3) == found[:3]


def test_the_opening_call_has_no_legal_corruption_that_keeps_its_callee():
    assert legal_corruptions("<BOS> Pietro chiama Paolo") == []


def test_problems_are_named_one_line_each():
    assert any("not a legal round" in p for p in corruption_problems(
        "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo", "<BOS> 4 chiama Pietro <SEP> Pietro chiama Paolo"))
    assert corruption_problems("<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo",
                               "<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo") == [
        "the rules give the same answer, vice, after both prompts: the corruption changes nothing the game decides"]


@pytest.mark.parametrize("clean, message", [
    ("<BOS> 4 chiama Paolo", "the clean prompt is not a legal round"),
    ("<BOS> Pietro chiama", "the rules leave the next token open"),
])
def test_bad_clean_prompts_get_one_clear_line(clean, message):
    with pytest.raises(CourseError, match=message):
        legal_corruptions(clean)
