"""Greedy decoding, beam search and the probability of a whole round, on the calling game (the chapter's
section "Beyond one roll: greedy, beams and whole rounds")."""
from __future__ import annotations

import functools

import numpy as np
import torch

import lib
from lib.content.corpora.calling_game import check_round
from lib.model.decoding import beam_search
from lib.model.generate import generate

BEAMS = 4
FULL = 34          # a round that runs to its eighth legal call has at least this many new tokens


def round_logprobs(lm, rounds: list[list[int]]) -> np.ndarray:
    """The log-probability (natural log) of each whole round after <BOS>, from one pass over the rounds
    padded on the right (a causal model's real positions never read the padding after them)."""
    width = max(len(r) for r in rounds)
    pad = lm.vocab.id("<PAD>")
    batch = torch.tensor([r + [pad] * (width - len(r)) for r in rounds])
    with torch.no_grad():
        logp = torch.log_softmax(lm.model(batch).double(), dim=-1)
    got = logp[:, :-1].gather(2, batch[:, 1:, None])[..., 0]             # [round, position]
    real = torch.tensor([[j < len(r) - 1 for j in range(width - 1)] for r in rounds])
    return (got * real).sum(1).numpy()


def searched(lm) -> dict:
    """The greedy round from <BOS> and the best round of beam search (BEAMS beams), ranked by the sum of
    log-probabilities (length penalty 0) and by their mean per token (1): each one's tokens, length,
    log-probability, whether it keeps the rules and what the rules checker says of it."""
    eos, bos = lm.vocab.id("<EOS>"), lm.encode("<BOS>")
    out = {}
    g = generate(lm.model, bos, lm.model.cfg.n_ctx, stop=[eos])
    found = {"greedy": g.new_tokens}
    for name, alpha in (("beam", 0.0), ("beam, mean per token", 1.0)):
        found[name] = list(beam_search(lm.model, [bos], lm.model.cfg.n_ctx, BEAMS, stop=[eos],
                                       length_penalty=alpha)[0][0].new_tokens)
    for name, new in found.items():
        tokens = lm.vocab.decode(bos + new)
        ok, why = check_round(tokens)
        out[name] = {"text": " ".join(tokens), "length": len(new), "logprob": float(round_logprobs(lm, [bos + new])[0]),
                     "valid": bool(ok), "why": why}
    return out


@functools.lru_cache(maxsize=None)
def searched_here() -> dict:
    """`searched` on the run in use (the pages' run, or the run `use_run` names)."""
    return searched(lib.load("calling-game"))
