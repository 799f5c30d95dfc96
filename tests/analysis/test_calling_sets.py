"""The calling-game model over Part 1's labelled sets (lib.analysis.calling_sets): six sets of N prompts drawn
with the claim's seed, each holding only its targets; every head switched off alone over each, measured once
per process; the answers the intact model holds counted from those surveys."""
from lib.analysis import calling_sets
from lib.analysis.calling_sets import EPITHETS4, N, answers_held, sets, surveys
from lib.content.corpora.calling_game import PLAYERS

SEED = 7          # a prompt-set seed the pages never use


def test_six_sets_of_n_prompts_each_holding_its_targets():
    s = sets(SEED)
    assert list(s) == [*EPITHETS4, "next: a number", "next: Pietro or Paolo"]
    assert all(len(group) == N for group in s.values())
    assert all(p.target == e for e in EPITHETS4 for p in s[e])
    numbers = set(PLAYERS) - {"Pietro", "Paolo"}
    assert {p.target for p in s["next: a number"]} <= numbers
    assert {p.target for p in s["next: Pietro or Paolo"]} <= {"Pietro", "Paolo"}
    assert all(len(p.tokens) <= calling_sets.n_ctx() for group in s.values() for p in group)
    assert sets(SEED) is s and sets(SEED + 1)["Tarso"] != s["Tarso"]


def test_the_surveys_are_measured_once_and_count_the_answers_held():
    zero = surveys(SEED, "zero")
    assert surveys(SEED, "zero") is zero and set(zero) == set(sets(SEED))
    assert all(len(v.off) == 8 for v in zero.values()), "every head of the model, alone"
    held = answers_held(SEED, EPITHETS4)
    assert held == sum(zero[e].held() for e in EPITHETS4) and 0.9 * 4 * N <= held <= 4 * N
