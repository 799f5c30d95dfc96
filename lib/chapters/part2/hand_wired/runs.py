"""The hand-wired model's six designed axes read back by probes, on every shipped training run (the
chapter's section "What another training run changes"), with how close each run came to its corpus's
floor: a run that has not learned its corpus is shown, but is no evidence."""
from __future__ import annotations

import functools

import numpy as np

from lib.analysis.corpus_fit import fit_summary
from lib.analysis.maps import best_probe
from lib.analysis.over_runs import each_run
from lib.content.corpora import hand_wired
from lib.shipped.behaviour import HAND_WIRED_MAX_GAP, PROBE_R2_THRESHOLD, embedding_vectors


def _axes(lm) -> dict:
    words = list(hand_wired.WORDS)
    vecs = embedding_vectors(lm)
    learned = np.array([vecs[w] for w in words])
    designed = hand_wired.designed_matrix(words)
    r2 = {axis: float(best_probe(learned, designed[:, k]).r2) for k, axis in enumerate(hand_wired.AXES)}
    gap = float(fit_summary(lm)["gap"])
    return {"r2": r2, "gap": gap, "at_floor": gap <= HAND_WIRED_MAX_GAP,
            "read": [a for a, v in r2.items() if v > PROBE_R2_THRESHOLD]}


@functools.lru_cache(maxsize=1)
def axes_per_run() -> dict[str, dict]:
    """Per run of the hand-wired model (the run in use first): each designed axis's held-out R², the axes
    read back (R² above the threshold), and the gap between its expected loss and the corpus's entropy."""
    return each_run("hand-wired", _axes, keep="hand-wired-axes")
