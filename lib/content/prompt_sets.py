"""Labelled prompt sets: the calling game cut where a claim can be tested.

A claim about a head, a layer or a component holds or fails over many prompts of one kind, not on
one. Each set here holds distinct prompts cut from rounds that the game's own generator plays, at
a point where the rules fix the next token, and labelled by what the model has to do there:

- `epithet-first-turn`: the opening call has just named Paolo (`<BOS> Pietro chiama Paolo`). The
  caller is Pietro by position alone, so there is exactly one such prompt.
- `epithet-later-turn`: a later call has just named Pietro or Paolo. The epithet depends on who
  calls, and the caller can only be read from the context (Cefa, capo, Tarso or vice).
- `number-call`: a call has just named a number; no epithet follows, the turn ends (`<SEP>`).
- `next-caller`: a turn has just ended (`... <SEP>`); the next caller is the player just called,
  so the model must copy a token from earlier in the prompt.
- `wrong-call`: a caller has just called himself, called back, or called an absurd word; what
  follows is the epithet if the wrong callee is Pietro or Paolo, else `<SEP>` (then `perde`).

At these five kinds of cut the rules leave no choice: every prompt carries the one token they fix.
One more kind, `callee-choice` (in `OPEN_KINDS`, asked for by name), cuts right after `chiama`,
where the rules leave the choice open: any legal callee (and, after the opening, a wrong call).
Its pages should be flat; its `target` is only the first of the rules' most likely callees.

`fixed_and_open` gives the texts of every fixed kind's set and of the open kind's, for the claims
of Part 3. `hand_wired_prompts` gives prefixes of the hand-wired corpus's sentences, for claims
about the hand-wired model.
"""
from __future__ import annotations

import functools
import random
from dataclasses import dataclass

from lib.content.corpora.calling_game import (EPITHETS, GameOptions, legal_callees, next_token_distribution,
                                              sample_round)
from lib.messages import say
from lib.errors import require
from lib.model.vocab import SEP
from lib.content.corpora.hand_wired import sample_sentence

KINDS = ("epithet-first-turn", "epithet-later-turn", "number-call", "next-caller", "wrong-call")
# Cuts where the rules spread the next token over several choices.
OPEN_KINDS = ("callee-choice",)
# Rounds drawn before a set gives up looking for more distinct prompts (the first-turn set has one).
MAX_ROUNDS = 20_000


@dataclass(frozen=True)
class LabelledPrompt:
    text: str          # tokens separated by spaces, from <BOS>
    kind: str          # one of KINDS
    target: str        # the next token the rules fix (for callee-choice, the first of the most likely)
    turn: int          # the turn the prompt ends in (1 = the opening call)
    caller: str        # who is calling in that turn

    @property
    def tokens(self) -> list[str]:
        return self.text.split()


def places(prompt: LabelledPrompt | list[str]) -> dict[str, int]:
    """Where the roles of the last call stand in a prompt, as token positions.

    `the caller`, `chiama` and `the callee` of the last call in the prompt (for a `next-caller`
    prompt, the call the `<SEP>` just closed), and `where the caller was called`: the callee of
    the call before, who by the rules is this call's caller (absent on the opening call), with
    `the epithet the caller earned` there when he earned one; `the epithet the callee earned` where
    the prompt goes on past the last call's epithet.
    """
    tokens = prompt.tokens if isinstance(prompt, LabelledPrompt) else list(prompt)
    calls = [i for i, t in enumerate(tokens) if t == "chiama" and 0 < i < len(tokens) - 1]
    require(len(calls) > 0, say("no_call"))
    last = calls[-1]
    found = {"<BOS>": 0, "the caller": last - 1, "chiama": last, "the callee": last + 1}
    if last + 2 < len(tokens) and tokens[last + 2] in EPITHETS:
        found["the epithet the callee earned"] = last + 2
    if len(calls) > 1:
        found["where the caller was called"] = calls[-2] + 1
        if tokens[calls[-2] + 2] in EPITHETS:
            found["the epithet the caller earned"] = calls[-2] + 2
    return found


def _cuts(round_tokens: list[str]):
    """Every (prefix, kind, turn, caller) worth testing in one round, in order."""
    turn, caller, previous = 0, "Pietro", None
    i = 1
    while i + 2 < len(round_tokens) and round_tokens[i + 1] == "chiama":
        turn += 1
        yield round_tokens[:i + 2], "callee-choice", turn, caller
        callee = round_tokens[i + 2]
        prefix = round_tokens[:i + 3]
        wrong = callee not in legal_callees(caller, previous)
        if wrong:
            yield prefix, "wrong-call", turn, caller
            return
        if callee in ("Pietro", "Paolo"):
            yield prefix, "epithet-first-turn" if turn == 1 else "epithet-later-turn", turn, caller
        else:
            yield prefix, "number-call", turn, caller
        i += 3 + (round_tokens[i + 3] in EPITHETS)
        if i < len(round_tokens) and round_tokens[i] == SEP:
            yield round_tokens[:i + 1], "next-caller", turn, caller
            i += 1
        caller, previous = callee, caller


def prompt_set(kind: str, n: int = 40, seed: int = 0, max_tokens: int | None = None,
               target: str | tuple[str, ...] | None = None) -> list[LabelledPrompt]:
    """Up to `n` distinct prompts of one kind, in the order the seeded rounds meet them.

    `max_tokens` keeps prompts that fit a model's context; `target` keeps those whose next token is
    that one, or one of those (e.g. later turns where the epithet is Tarso, next callers that are
    numbers). Fewer than `n` come back only when fewer exist (the first-turn epithet set has one
    prompt).
    """
    require(kind in KINDS + OPEN_KINDS,
            f"unknown prompt set {kind!r}; the sets are: {', '.join(KINDS + OPEN_KINDS)}")
    require(isinstance(n, int) and not isinstance(n, bool) and n >= 1, f"n must be a whole number of at least 1, got {n!r}")
    targets = None if target is None else ((target,) if isinstance(target, str) else tuple(target))
    return list(_drawn(kind, n, seed, max_tokens, targets))


@functools.lru_cache(maxsize=256)
def _drawn(kind: str, n: int, seed: int, max_tokens: int | None, targets: tuple[str, ...] | None) -> tuple:
    """`prompt_set`'s prompts, drawn once per process for each set of arguments: the chapters and their
    claims ask for the same sets many times (the ablation chapter for one set of prompts seven times), and
    a rare kind draws thousands of rounds. The prompts are frozen; each caller gets a list of its own."""
    rng = random.Random(seed)
    found: dict[str, LabelledPrompt] = {}
    for _ in range(MAX_ROUNDS):
        for prefix, cut_kind, turn, caller in _cuts(sample_round(rng, GameOptions())):
            text = " ".join(prefix)
            if cut_kind != kind or text in found or (max_tokens is not None and len(prefix) > max_tokens):
                continue
            rules = next_token_distribution(prefix)
            fixed = max(rules, key=rules.get)
            if targets is not None and fixed not in targets:
                continue
            found[text] = LabelledPrompt(text, kind, fixed, turn, caller)
            if len(found) == n:
                return tuple(found.values())
        if kind == "epithet-first-turn" and found:
            break   # only one such prompt exists
    return tuple(found.values())


def epithet_sets(n: int = 40, seed: int = 0, max_tokens: int | None = None) -> dict[str, list[LabelledPrompt]]:
    """Later-turn epithet prompts, `n` for each epithet, keyed by epithet. The game's own mix is
    mostly capo and vice (numbers call far more often than Pietro and Paolo), which would bury the
    two peer epithets in a set drawn as the rounds come."""
    return {e: prompt_set("epithet-later-turn", n, seed, max_tokens, target=e) for e in EPITHETS}


def prompt_sets(n: int = 40, seed: int = 0, max_tokens: int | None = None) -> dict[str, list[LabelledPrompt]]:
    """Every fixed kind's set (KINDS), keyed by kind."""
    return {kind: prompt_set(kind, n, seed, max_tokens) for kind in KINDS}


def hand_wired_prompts(n: int = 200, seed: int = 0) -> list[str]:
    """Up to `n` distinct prefixes (from <BOS>, at least one word) of seeded hand-wired sentences,
    in the order the sentences meet them, none ending at <EOS>."""
    require(isinstance(n, int) and not isinstance(n, bool) and n >= 1, f"n must be a whole number of at least 1, got {n!r}")
    rng = random.Random(seed)
    found: dict[str, None] = {}
    for _ in range(MAX_ROUNDS):
        sentence = sample_sentence(rng)
        for end in range(2, len(sentence)):
            found.setdefault(" ".join(sentence[:end]))
            if len(found) == n:
                return list(found)
    return list(found)


PER_KIND = 40     # prompts of each kind in Part 3's labelled sets


@functools.lru_cache(maxsize=None)
def fixed_and_open(seed: int, max_tokens: int | None = None, n: int = PER_KIND) -> tuple[list[str], list[str]]:
    """The texts of `n` prompts of each kind drawn with `seed`: those of the kinds where the rules fix
    the next token (`KINDS`), then those where they leave it open (`OPEN_KINDS`). Drawn once per
    process and shared: the lists must not be changed."""
    fixed = [p.text for kind in KINDS for p in prompt_set(kind, n, seed, max_tokens=max_tokens)]
    open_ = [p.text for kind in OPEN_KINDS for p in prompt_set(kind, n, seed, max_tokens=max_tokens)]
    return fixed, open_


__all__ = ["KINDS", "OPEN_KINDS", "PER_KIND", "LabelledPrompt", "epithet_sets", "fixed_and_open", "hand_wired_prompts",
           "places", "prompt_set", "prompt_sets"]
