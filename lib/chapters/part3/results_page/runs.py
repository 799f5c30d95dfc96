"""Whole rounds sampled at several temperatures, on every shipped training run of the calling game (the
chapter's section "What another training run changes")."""
from __future__ import annotations

import functools

import torch

from lib.analysis.over_runs import each_run
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
def broken_over_runs(seed: int = 0) -> dict[str, dict[float, float]]:
    """Per run (the run in use first): the share of ROUNDS whole rounds, sampled from <BOS> with the
    sampling seed `seed`, that break the rules, at each of TEMPERATURES."""
    # Kept on disk as [temperature, share] pairs (JSON keys are text); given back keyed by temperature.
    kept = each_run("calling-game", lambda lm: [[t, b] for t, b in _broken_by_temperature(lm, seed).items()],
                    keep=f"broken-by-temperature-{seed}")
    return {label: {float(t): float(b) for t, b in pairs} for label, pairs in kept.items()}
