"""The labelled prompt sets (lib.content.prompt_sets): cut where the rules fix the next token (or, for the
callee choice, leave it open), each prompt's roles named, sets by target holding only those targets."""
import pytest

from lib.content.corpora.calling_game import PLAYERS
from lib.content.prompt_sets import epithet_sets, places, prompt_set
from lib.errors import CourseError

NUMBERS = tuple(p for p in PLAYERS if p not in ("Pietro", "Paolo"))


def test_places_name_the_roles_of_the_last_call():
    where = places("<BOS> Pietro chiama 5 <SEP> 5 chiama Paolo vice <SEP> Paolo chiama Pietro".split())
    assert where == {"<BOS>": 0, "the caller": 10, "chiama": 11, "the callee": 12, "where the caller was called": 7,
                     "the epithet the caller earned": 8}
    closed = places("<BOS> Pietro chiama Paolo Tarso <SEP>".split())
    assert closed["the callee"] == 3 and closed["the epithet the callee earned"] == 4 and "where the caller was called" not in closed
    with pytest.raises(CourseError, match="no call"):
        places(["<BOS>", "Pietro"])

def test_sets_by_target_hold_only_those_targets():
    sets = epithet_sets(10, max_tokens=48)
    assert set(sets) == {"Tarso", "Cefa", "capo", "vice"}
    assert all(p.target == e and p.kind == "epithet-later-turn" for e, group in sets.items() for p in group)
    numbers = prompt_set("next-caller", 15, target=NUMBERS)
    assert len(numbers) == 15 and all(p.target in NUMBERS for p in numbers)
    assert prompt_set("next-caller", 5, target="Paolo")[0].target == "Paolo"


def test_callee_choice_prompts_stop_where_the_rules_leave_a_choice():
    from lib.content.corpora.calling_game import next_token_distribution
    from lib.content.prompt_sets import KINDS, OPEN_KINDS, prompt_set, prompt_sets

    assert "callee-choice" in OPEN_KINDS and "callee-choice" not in KINDS
    assert set(prompt_sets(3, max_tokens=48)) == set(KINDS), "prompt_sets holds only the kinds the rules fix"
    prompts = prompt_set("callee-choice", 30, seed=2, max_tokens=48)
    assert len(prompts) == 30 and prompts[0].text == "<BOS> Pietro chiama"
    for p in prompts:
        rules = next_token_distribution(p.tokens)
        assert p.tokens[-1] == "chiama" and len(rules) >= 8, p.text
        assert rules[p.target] == max(rules.values())

def test_hand_wired_prompts_are_distinct_prefixes_of_its_sentences():
    import random

    from lib.content.corpora.hand_wired import sample_sentence
    from lib.content.prompt_sets import hand_wired_prompts

    prompts = hand_wired_prompts(50, seed=1)
    assert len(prompts) == len(set(prompts)) == 50 and prompts == hand_wired_prompts(50, seed=1)
    assert all(p.startswith("<BOS> ") and len(p.split()) >= 2 and "<EOS>" not in p for p in prompts)
    rng = random.Random(1)
    sentences = [" ".join(sample_sentence(rng)) for _ in range(50)]
    assert all(any(s.startswith(p + " ") for s in sentences) for p in prompts), "each is a sentence cut short"
    with pytest.raises(CourseError, match="n must be"):
        hand_wired_prompts(0)


def test_prompt_sets_are_distinct_labelled_and_fixed_by_the_rules():
    from lib.content.corpora.calling_game import next_token_distribution
    from lib.content.prompt_sets import KINDS, prompt_set, prompt_sets

    sets = prompt_sets(30, seed=1, max_tokens=48)
    assert set(sets) == set(KINDS)
    assert [p.text for p in sets["epithet-first-turn"]] == ["<BOS> Pietro chiama Paolo"]
    for kind, prompts in sets.items():
        if kind != "epithet-first-turn":
            assert len(prompts) == 30, kind
        assert len({p.text for p in prompts}) == len(prompts)
        for p in prompts:
            rules = next_token_distribution(p.tokens)
            assert rules == {p.target: 1.0}, (kind, p.text, rules)
            assert len(p.tokens) <= 48
    assert all(p.turn > 1 for p in sets["epithet-later-turn"])
    assert {p.target for p in sets["epithet-later-turn"]} <= {"Cefa", "capo", "Tarso", "vice"}
    tarso = prompt_set("epithet-later-turn", 20, target="Tarso")
    assert len(tarso) == 20 and all(p.target == "Tarso" and p.caller == "Pietro" and p.turn > 1 for p in tarso)
    for p in sets["next-caller"]:   # the player just called calls next: a copy from earlier in the prompt
        callee = p.tokens[-3] if p.tokens[-2] in ("Tarso", "Cefa", "capo", "vice") else p.tokens[-2]
        assert p.tokens[-1] == "<SEP>" and p.target == callee
    assert prompt_set("number-call", 5, seed=3) == prompt_set("number-call", 5, seed=3)

def test_an_unknown_prompt_set_names_the_known_ones():
    from lib.content.prompt_sets import prompt_set
    from lib.errors import CourseError

    with pytest.raises(CourseError, match="next-caller"):
        prompt_set("later turns")
    with pytest.raises(CourseError, match="n must be"):
        prompt_set("number-call", 0)
