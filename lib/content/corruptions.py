"""Corrupted prompts for activation patching that the game could have produced.

Patching compares a clean prompt with a corrupted one of the same length. If the corrupted prompt is
a sequence the game never makes (a number opening the round, a number earning `capo`), every
component reacts to something it never met in training, and the patching fractions measure that
reaction as much as the mechanism. A *legal corruption* is a prefix of a legal round (the rules
checker, `calling_game.read_round`, finds nothing broken), of the clean prompt's length, after which
the rules fix a different next token.

A prefix of a round is fixed by its chain of players: Pietro opens, and each call's callee is the
next caller; the epithets follow from who calls whom. `legal_corruptions` changes one to three players
of the clean prompt's chain, rebuilds the tokens, and keeps the rebuilt prompts the rules accept,
fewest changed tokens first. `corruption_problems` says, in one line each, what is wrong with a
corrupted prompt someone chose by hand (`python -m lib patch` prints them).
"""
from __future__ import annotations

import random

from lib.content.corpora.calling_game import (BOS, PLAYERS, SEP, epithet, legal_callees, next_token_distribution,
                                              read_round)
from lib.errors import CourseError, require


def fixed_answer(tokens) -> str | None:
    """The next token the rules fix after `tokens` (a legal prefix of a round), or None when they leave
    a choice or the tokens are not a legal prefix."""
    tokens = list(tokens)
    if read_round(tokens).status == "broken":
        return None
    try:
        rules = next_token_distribution(tokens)
    except CourseError:
        return None
    fixed = [t for t, p in rules.items() if p > 1 - 1e-12]
    return fixed[0] if fixed else None


def chain(tokens) -> list[str]:
    """The players of a prompt in calling order: Pietro, then each complete call's callee."""
    tokens = list(tokens)
    out = ["Pietro"]
    for i, t in enumerate(tokens):
        if t == "chiama" and i + 1 < len(tokens):
            out.append(tokens[i + 1])
    return out


def render(players: list[str], length: int) -> list[str] | None:
    """The first `length` tokens of the round whose chain of players is `players` (and whose last
    player goes on to call), or None if that is shorter."""
    out = [BOS]
    for i in range(1, len(players)):
        caller, callee = players[i - 1], players[i]
        if i > 1:
            out.append(SEP)
        out += [caller, "chiama", callee]
        e = epithet(caller, callee)
        if e:
            out.append(e)
        if len(out) >= length:
            return out[:length]
    out += ([SEP] if len(players) > 1 else []) + [players[-1], "chiama"]
    return out[:length] if len(out) >= length else None


MAX_CHANGES = 3


def legal_corruptions(clean: str, n: int | None = None, seed: int = 0, changes: int | None = None,
                      keep: tuple[int, ...] = (-1,)) -> list[str]:
    """Corrupted prompts for `clean` that are legal prefixes of a round, of its length, after which the
    rules fix another next token than after `clean`, and whose tokens at the positions `keep` are the
    clean prompt's (by default the last: the same token asks for its continuation, the context differs,
    so after `... Pietro chiama Paolo` the caller changes and Tarso becomes vice). Their chains of
    players differ from the clean one's in at most `changes` players (by default the fewest, 1 to
    `MAX_CHANGES`, that finds any), every call legal (`all_legal`); fewest changed tokens first (ties in
    an order drawn with `seed`), at most `n` of them (all by default). The list is empty when the game
    has no such prompt (the opening call `<BOS> Pietro chiama Paolo` has none: only Pietro opens)."""
    tokens = clean.split() if isinstance(clean, str) else list(clean)
    verdict = read_round(tokens)
    require(verdict.status != "broken", f"the clean prompt is not a legal round of the game ({verdict.message}): "
                                        "a legal corruption needs a legal clean prompt")
    right = fixed_answer(tokens)
    require(right is not None, "the rules leave the next token open after the clean prompt, so no corruption can "
                               "change the right answer: cut the prompt where the rules fix it")
    require(changes is None or changes in range(1, MAX_CHANGES + 1),
            f"changes must be a number of players from 1 to {MAX_CHANGES}, got {changes!r}")
    players = chain(tokens)
    found: dict[str, int] = {}
    for most in ([changes] if changes else range(1, MAX_CHANGES + 1)):
        for edited in _chains(players, most):
            got = render(edited, len(tokens))
            if got is None or any(got[p] != tokens[p] for p in keep):
                continue
            text = " ".join(got)
            if text in found:
                continue
            answer = fixed_answer(got)
            if answer is None or answer == right:
                continue
            found[text] = sum(a != b for a, b in zip(got, tokens))
        if found:
            break
    order = list(found)
    random.Random(seed).shuffle(order)
    order.sort(key=found.get)
    return order if n is None else order[:n]


def _chains(players: list[str], most: int):
    """Every chain with Pietro first and every call legal that differs from `players` in 1 to `most`
    players (built call by call, an illegal call cutting its branch)."""
    def grow(prefix, left):
        i = len(prefix)
        if i == len(players):
            if left < most:
                yield list(prefix)
            return
        previous = prefix[i - 2] if i > 1 else None
        for p in ([players[i]] + [q for q in PLAYERS if q != players[i]] if left else [players[i]]):
            if p not in legal_callees(prefix[-1], previous):
                continue
            yield from grow(prefix + [p], left - (p != players[i]))
    yield from grow([players[0]], most)


def all_legal(players: list[str]) -> bool:
    """Whether every call of a chain is a legal one (no wrong call: a wrong call ends the round, and the
    model meets one in a few rounds only)."""
    return all(players[i] in legal_callees(players[i - 1], players[i - 2] if i > 1 else None)
               for i in range(1, len(players)))


def corruption_problems(clean: str, corrupted: str) -> list[str]:
    """What makes `corrupted` a poor corruption of `clean` for patching the calling game, one line each:
    not a legal prefix of a round, or one after which the rules fix the same answer. Empty when it is a
    legal corruption. (Lengths are the patching's own check.)"""
    a = clean.split() if isinstance(clean, str) else list(clean)
    b = corrupted.split() if isinstance(corrupted, str) else list(corrupted)
    out = []
    verdict = read_round(b)
    if verdict.status == "broken":
        out.append(f"the corrupted prompt is not a legal round of the game ({verdict.message}): the model never met "
                   "such a prompt in training, so the fractions also measure its reaction to that")
    verdict = read_round(a)
    if verdict.status == "broken":
        out.append(f"the clean prompt is not a legal round of the game ({verdict.message})")
    right, other = fixed_answer(a), fixed_answer(b)
    if right is not None and right == other:
        out.append(f"the rules give the same answer, {right}, after both prompts: the corruption changes nothing the "
                   "game decides")
    return out


__all__ = ["MAX_CHANGES", "all_legal", "chain", "corruption_problems", "fixed_answer", "legal_corruptions", "render"]
