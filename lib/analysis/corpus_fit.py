"""How well a model has learned a corpus whose every sentence, and its probability, is known.

The hand-wired corpus is a small probability tree (`hand_wired.sentence_probabilities`), so two
questions have exact answers, with no sampling noise:

- the model's expected loss per token on the corpus, against the corpus's entropy (the floor no
  model can go below); their difference is how much the model still has to learn;
- fact by fact, whether the model's next-token distribution after a prefix matches the corpus's
  ("the king is" is followed by *old* or *stronger*, never by *young* or *weaker*).
"""
from __future__ import annotations

from dataclasses import dataclass
import copy

import numpy as np
import torch

from lib.content.corpora import hand_wired as hw
from lib.model.vocab import PAD

# A prefix counts as learned when the model's distribution is within this total-variation distance
# of the corpus's (half the summed absolute differences: the largest share of probability it puts
# in the wrong place) ...
LEARNED_TV = 0.10
# ... and it gives at most this much, in total, to continuations the corpus never has there.
LEARNED_FALSE_MASS = 0.02


def _next_token_log_probs(lm, sentences: list[tuple[str, ...]]) -> torch.Tensor:
    """[sentence, position, vocab] log-probabilities of the token after each prefix."""
    ids = [lm.vocab.encode(list(s)) for s in sentences]
    width = max(len(i) for i in ids)
    pad = lm.vocab.id(PAD)
    batch = torch.full((len(ids), width), pad, dtype=torch.long)
    for row, i in enumerate(ids):
        batch[row, :len(i)] = torch.tensor(i)
    # In double precision, on a double copy of the weights: these figures are recorded with the
    # shipped model and checked against it later, possibly on another processor, where a float32
    # pass differs in the seventh digit (vector width and summation order); in float64 two
    # processors agree to about 1e-15.
    with torch.no_grad():
        return torch.log_softmax(_double(lm.model)(batch), dim=-1)


def _double(model):
    return copy.deepcopy(model).double()


def expected_loss(lm) -> float:
    """The model's cross-entropy per predicted token, averaged exactly over the corpus (every
    sentence weighted by its probability), as training averages it over tokens."""
    probs = hw.sentence_probabilities()
    sentences = list(probs)
    logp = _next_token_log_probs(lm, sentences)
    total = 0.0
    for row, s in enumerate(sentences):
        targets = torch.tensor(lm.vocab.encode(list(s[1:])))
        total += probs[s] * -float(logp[row, torch.arange(len(targets)), targets].sum())
    return total / hw.mean_targets_per_sentence()


@dataclass(frozen=True)
class PrefixFit:
    prefix: tuple[str, ...]
    kind: str                   # "definition", "comparison" or "class"
    tv: float                   # total-variation distance between the model's next token and the corpus's
    false_mass: float           # the model's probability on tokens the corpus never has after this prefix
    top_is_possible: bool       # the model's most likely next token is one the corpus can produce

    @property
    def learned(self) -> bool:
        return self.tv <= LEARNED_TV and self.false_mass <= LEARNED_FALSE_MASS


def fact_prefixes() -> dict[str, list[tuple[str, ...]]]:
    """Every prefix at which a sentence states a fact about a word, by kind:
    "the W is" (its adjectives and comparisons), "the W is MORE than the" (which words it beats on an
    axis) and "a W is a" (its class)."""
    out: dict[str, list[tuple[str, ...]]] = {"definition": [], "comparison": [], "class": []}
    seen = set()
    for s in hw.sentence_probabilities():
        if s[1] == "a":
            key, kind = s[:5], "class"
        elif len(s) == 9:
            key, kind = s[:7], "comparison"
        else:
            key, kind = s[:4], "definition"
        if key not in seen:
            seen.add(key)
            out[kind].append(key)
    # Comparison sentences also pass through "the W is"; keep that prefix once, as a definition.
    for s in list(out["comparison"]):
        if s[:4] not in seen:
            seen.add(s[:4])
            out["definition"].append(s[:4])
    return {k: sorted(v) for k, v in out.items()}


def prefix_fits(lm) -> list[PrefixFit]:
    """The model against the corpus at every fact prefix."""
    fits = []
    tokens = lm.vocab.tokens
    for kind, prefixes in fact_prefixes().items():
        logp = _next_token_log_probs(lm, prefixes)
        for row, prefix in enumerate(prefixes):
            model = logp[row, len(prefix) - 1].exp().numpy()
            truth = np.zeros(len(tokens))
            for t, p in hw.next_token_distribution(prefix).items():
                truth[lm.vocab.id(t)] = p
            fits.append(PrefixFit(prefix, kind, float(0.5 * np.abs(model - truth).sum()),
                                  float(model[truth == 0].sum()), bool(truth[int(model.argmax())] > 0)))
    return fits


def fit_summary(lm) -> dict:
    """Counts of learned prefixes by kind, the worst ones, and the loss against the floor."""
    fits = prefix_fits(lm)
    loss, floor = expected_loss(lm), hw.entropy_floor()
    by_kind = {}
    for kind in ("definition", "comparison", "class"):
        group = [f for f in fits if f.kind == kind]
        by_kind[kind] = {"prefixes": len(group), "learned": sum(f.learned for f in group),
                         "top_possible": sum(f.top_is_possible for f in group),
                         "no_false": sum(f.false_mass <= LEARNED_FALSE_MASS for f in group),
                         "max_tv": max(f.tv for f in group), "max_false_mass": max(f.false_mass for f in group)}
    return {"expected_loss": loss, "entropy_floor": floor, "gap": loss - floor, "by_kind": by_kind}
