import random

import numpy as np
import pytest

from lib.content.corpora import calling_game as cg, get_corpus, hand_wired as hw
from lib.errors import CourseError
from lib.analysis.maps import analogy


def test_the_vocabulary_is_the_specified_28_tokens():
    assert len(cg.TOKENS) == 28 and len(set(cg.TOKENS)) == 28
    assert sum(r == "absurd" for r in cg.ROLES.values()) == 8


def test_generated_rounds_obey_the_grammar_and_its_own_distribution():
    rng = random.Random(0)
    endings = {"perde": 0, "full": 0}
    for _ in range(3000):
        r = cg.sample_round(rng)
        ok, why = cg.check_round(r)
        assert ok, (r, why)
        endings["perde" if "perde" in r else "full"] += 1
        assert len(r) <= cg.MAX_ROUND_TOKENS
        for k in range(1, len(r)):
            assert cg.next_token_distribution(r[:k]).get(r[k], 0) > 0
    # about 1 - 0.85**7 = 68% of rounds end with a wrong call
    assert 0.6 < endings["perde"] / 3000 < 0.76


def test_the_opening_and_the_epithets():
    assert cg.next_token_distribution(["<BOS>", "Pietro", "chiama"]) == {p: 1 / 9 for p in cg.PLAYERS[1:]}
    assert cg.next_token_distribution("<BOS> Pietro chiama Paolo".split()) == {"Tarso": 1.0}
    assert cg.epithet("Paolo", "Pietro") == "Cefa" and cg.epithet("3", "Pietro") == "capo"
    assert cg.epithet("3", "Paolo") == "vice" and cg.epithet("Paolo", "4") is None


@pytest.mark.parametrize("text,why", [
    ("Pietro chiama 3 <EOS>", "starts with <BOS>"),
    ("<BOS> Paolo chiama 3 <EOS>", "Pietro"),
    ("<BOS> Pietro chiama Paolo <SEP> Paolo chiama 3 <EOS>", "Tarso"),
    ("<BOS> Pietro chiama 3 <SEP> 4 chiama 5 <EOS>", "'3''s turn"),
    ("<BOS> Pietro chiama 3 <SEP> 3 chiama Pietro capo <SEP> 3 perde", "ends"),
    ("<BOS> Pietro chiama Pietro capo <SEP> Pietro perde <EOS>", "opening"),
])
def test_the_checker_names_what_breaks_the_rules(text, why):
    ok, message = cg.check_round(text.split())
    assert not ok and why in message


def test_a_wrong_call_ends_the_round_with_the_loser():
    assert cg.check_round("<BOS> Pietro chiama 3 <SEP> 3 chiama Pietro capo <SEP> 3 perde <EOS>".split())[0]
    assert cg.check_round("<BOS> Pietro chiama 3 <SEP> 3 chiama giraffa <SEP> 3 perde <EOS>".split())[0]


def test_hand_wired_table_and_its_designed_analogies_hold_in_the_table():
    assert len(hw.WORDS) == 40
    assert {hw.word_class(w) for w in hw.WORDS} == set(hw.CLASSES)
    vecs = {w: row for w, row in zip(hw.WORDS, hw.designed_matrix())}
    for a, b, c, d in hw.ANALOGIES:
        result = analogy(vecs, a, b, c)
        assert result.best == d and result.ranked[0][1] == pytest.approx(1.0), result.describe()


def test_hand_wired_sentences_are_true_of_the_table():
    rng = random.Random(1)
    for _ in range(2000):
        s = hw.sample_sentence(rng)
        ok, why = hw.check_sentence(s)
        assert ok, (s, why)
        assert all(t in hw.TOKENS for t in s)
    assert not hw.check_sentence("<BOS> the king is female <EOS>".split())[0]


def test_unknown_corpus_is_a_clear_error():
    with pytest.raises(CourseError, match="unknown corpus"):
        get_corpus("shakespeare")


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
