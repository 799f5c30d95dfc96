"""Whole rounds sampled at several temperatures, on a training run of the calling game (the chapter's section
"What another training run changes"): measured on every run of the panel by the chapter's claims about the
recipe, which keep these numbers for the page's figure."""
from __future__ import annotations

import functools

import torch

import lib
from lib.content.corpora.calling_game import check_round
from lib.model.generate import sample_many

TEMPERATURES = (0.5, 1.0, 1.5, 2.0)
ROUNDS = 400


def _broken_by_temperature(lm, seed: int = 0) -> dict[float, float]:
    eos = lm.vocab.id("<EOS>")
    out = {}
    for t in TEMPERATURES:
        with torch.no_grad():
            rounds = sample_many(lm.model, lm.encode("<BOS>"), ROUNDS, lm.model.cfg.n_ctx, seed=seed,
                                 temperature=t, stop=eos)
        out[t] = sum(not check_round(lm.vocab.decode(r))[0] for r in rounds) / ROUNDS
    return out


@functools.lru_cache(maxsize=None)
def broken(seed: int = 0) -> dict[float, float]:
    """On the run in use: the share of ROUNDS whole rounds, sampled from <BOS> with the sampling seed `seed`,
    that break the rules, at each of TEMPERATURES."""
    return _broken_by_temperature(lib.load("calling-game"), seed)
