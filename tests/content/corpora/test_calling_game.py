"""The calling game (lib.content.corpora.calling_game): the specified vocabulary, generated rounds that obey the
grammar and their own exact distribution, the opening and the epithets, and the checker naming what breaks
the rules. (Its page twin, game.js, is held to it in test_game_checker.py.)"""
import random

import numpy as np
import pytest

from lib.content.corpora import calling_game as cg


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
