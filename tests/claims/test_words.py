"""Every comparison a claim's statement makes is held to a check on named numbers (lib/claims/words.py).

A statement says more than its test checks when a word of it ("worse than a coin", "most heads", "on all
24") is not what the claim's condition tests. Here every comparison word of every statement must sit inside
one of the claim's registered phrases, and every phrase's checks must read numbers the measurement returns.
"""
import re

import pytest

from lib import claims
from lib.claims import panel
from lib.claims.words import Either, Max, Min, Q, failing, quantities

# The words that compare, count or quantify: each occurrence must be registered with the check it means.
COMPARISON = re.compile(
    r"\b(more|less|fewer|most|least|above|below|under|beats?|beating|worse|better|higher|lower|larger|"
    r"smaller|greater|exceeds?|twice|half|closer|nearer|farther|further|within|only|every|none|never|"
    r"always|nearly|almost|close|alike|same|equal|exactly|than|not|no|all|clumpier|surer|sharper|flatter|"
    r"stronger|weaker|rarely|mostly|unlike|like)\b|\bas \w+ as\b", re.IGNORECASE)
FIELD = re.compile(r"\{[^{}]*\}")


def _unchecked(template: str, phrases) -> list[str]:
    """The comparison words of `template` (its fields aside) that fall in no registered phrase."""
    covered = []
    for phrase in phrases:
        start = template.find(phrase)
        while start != -1:
            covered.append((start, start + len(phrase)))
            start = template.find(phrase, start + 1)
    fields = [(m.start(), m.end()) for m in FIELD.finditer(template)]
    out = []
    for m in COMPARISON.finditer(template):
        if any(a <= m.start() < b for a, b in fields):
            continue
        if not any(a <= m.start() and m.end() <= b for a, b in covered):
            out.append(f"{m.group(0)!r} in ...{template[max(0, m.start() - 30):m.end() + 30]}...")
    return out


@pytest.mark.parametrize("c", claims.claims(), ids=lambda c: c.id)
def test_every_comparison_word_of_a_statement_is_a_registered_check(c):
    """Each comparison word sits in a phrase registered with its checks, or in a phrase the claim declares as
    a description of its measurement (`setup`: no number in it)."""
    assert c.words, f"{c.id}: a claim with no check cannot fail"
    unchecked = _unchecked(c.statement, [*c.words, *c.setup])
    assert not unchecked, f"{c.id}: comparison words no check stands for: {unchecked}"


@pytest.mark.parametrize("c", [c for c in claims.claims() if c.scope == claims.EVERY_RUN], ids=lambda c: c.id)
def test_an_every_run_claim_says_on_how_many_runs_and_its_others_compare_nothing(c):
    """The count of runs is the panel's to say (`{runs}`: every one of them, or k of n), never the prose's;
    what the other runs do is told in numbers, with no comparison that no check stands for."""
    assert "{runs}" in c.statement, c.id
    assert not re.search(r"\bevery run\b|\ball runs\b|\bon most runs\b", FIELD.sub("", c.statement)), c.id
    assert not _unchecked(c.others, c.setup), (c.id, _unchecked(c.others, c.setup))


def test_the_registered_checks_read_the_numbers_the_claims_measure():
    """On the kept panel (every-run claims) every phrase's checks name numbers the measurement returned."""
    for id in panel.every_run_ids():
        c = claims.get(id)
        for run in panel.runs(id):
            if run.absent:
                continue
            missing = quantities(c.words) - set(run.numbers)
            assert not missing, (id, run.label, missing)


def test_a_check_says_why_it_fails():
    words = {"worse than a coin": (Q("auroc") < 0.5,),
             "more than twice the next": (Q("best") > 2 * Q("next"),),
             "on all of them": (Q("agree").eq(Q("n")),),
             "either way": (Either(Q("a") > 1, Max("b", "c") > 1),),
             "the least": (Min("b", "c") >= 0,)}
    x = {"auroc": 0.535, "best": 3.0, "next": 1.0, "agree": 23, "n": 24, "a": 0, "b": 0.5, "c": 2, }
    got = dict(failing(words, x))
    assert got == {"worse than a coin": "auroc = 0.535, not below 0.5",
                   "on all of them": "agree = 23, not equal to n = 24"}
    assert dict(failing(words, {**x, "auroc": None})) ["worse than a coin"].startswith("auroc = nan")


def test_the_lexicon_finds_what_a_statement_compares():
    assert _unchecked("an AUROC of {auroc:.2f}, worse than a coin", {}) == [
        "'worse' in ...an AUROC of {auroc:.2f}, worse than a coin...",
        "'than' in ...n AUROC of {auroc:.2f}, worse than a coin..."]
    assert _unchecked("an AUROC of {auroc:.2f}, worse than a coin", {"worse than a coin": ()}) == []
    assert _unchecked("{x:.2f} as clumpy as {y}", {}) and not _unchecked("{more:.2f} apples", {})
