"""The calling-game model over Part 1's labelled sets, each head switched off the three ways.

The calling-game chapters of Part 1 (bigrams, many heads, circuits, ablation) count their claims
over the same labelled prompt sets (`lib.content.prompt_sets`), drawn with the claim's seed:
`N` later calls for each epithet, `N` turn ends where a number was called and `N` where Pietro
or Paolo was. `surveys` switches every head off alone over each set, the `kind` way of
`lib.analysis.ablation` (zero, mean or resample), once per process: the claims and the ablation page
read the same surveys. Mean and resample read a reference set drawn with `reference_seed(seed)` and
matched by role (or by position, asked for by name), so a claim's seed varies the prompts and the
reference rounds together.
"""
from __future__ import annotations

import functools

from lib.analysis.ablation import reference_seed, reference_set
from lib.analysis.head_survey import ablation_survey
from lib.content.corpora.calling_game import PLAYERS
from lib.content.prompt_sets import epithet_sets, prompt_set
from lib.model.store import load

N = 40                       # prompts per labelled set
EPITHETS4 = ("Tarso", "Cefa", "capo", "vice")
OPENING = "<BOS> Pietro chiama Paolo"


@functools.lru_cache(maxsize=None)
def calling_game():
    """The shipped calling-game model (loaded once)."""
    return load("calling-game")


def n_ctx() -> int:
    return calling_game().model.cfg.n_ctx


@functools.lru_cache(maxsize=None)
def sets(seed: int) -> dict:
    """The six labelled sets of the chapters, drawn with `seed`: the four epithets of a later call,
    and the next caller after a number and after Pietro or Paolo."""
    numbers = tuple(p for p in PLAYERS if p not in ("Pietro", "Paolo"))
    out = dict(epithet_sets(N, seed, max_tokens=n_ctx()))
    out["next: a number"] = prompt_set("next-caller", N, seed, max_tokens=n_ctx(), target=numbers)
    out["next: Pietro or Paolo"] = prompt_set("next-caller", N, seed, max_tokens=n_ctx(), target=("Pietro", "Paolo"))
    return out


def reference(seed: int):
    """The reference set that goes with the claims' prompt-set `seed`."""
    return reference_set(calling_game(), seed=reference_seed(seed))


@functools.lru_cache(maxsize=None)
def surveys(seed: int, kind: str, match: str = "role") -> dict:
    """Each set of `sets(seed)`, every head switched off alone the `kind` way, against `reference(seed)`
    matched by `match` (resample draws with `seed`)."""
    return {name: ablation_survey(calling_game(), group, kind=kind, reference=reference(seed), seed=seed, match=match)
            for name, group in sets(seed).items()}


def answers_held(seed: int, names) -> int:
    """The prompts of the named sets whose answer the intact model holds."""
    s = surveys(seed, "zero")
    return sum(s[n].held() for n in names)
