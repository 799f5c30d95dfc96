"""Contextual vectors: one word in two senses, layer by layer, in MiniLM.

The input row of a word is the same in every sentence (Part 2's real-language rows are those
rows). After each layer the word's vector has read its sentence, so "bank" beside "loan" and
"bank" beside "river" can drift apart. Measured over a labelled set (`lib.chapters.part2.real_language.senses.BANK_SENSES`,
sentences written for each sense before anything was measured), at every stage: stage 0 is the
normalised embedding sum (word + position + token type), stage L the output of layer L.

- `within` and `across`: the mean cosine between the word's vectors in two sentences of the same
  sense, and of different senses. Their gap is how far the senses have moved apart.
- `correct`: leave-one-out nearest centroid: each sentence's vector is given the sense whose
  other sentences' mean vector is nearer (cosine). Counted over all sentences: a count of
  sentences whose sense the vector alone tells, against the half that a coin would.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from lib.model import minilm as minilm_module
from lib.model.transformer import ActivationCache


@dataclass
class Separation:
    word: str
    senses: list[str]
    n: int                        # sentences
    within: list[float]           # per stage
    across: list[float]
    correct: list[int]

    @property
    def stages(self) -> int:
        return len(self.within)


def word_vectors(lm, word: str, sentences: list[str]) -> torch.Tensor:
    """[stage, sentence, d_model]: the word's vector at each stage (it must be one token, once)."""
    ids, real = lm.batch(sentences)
    cache = ActivationCache()
    with torch.no_grad(), minilm_module.one_thread():
        lm.model(ids, real=real, cache=cache)
    wid = lm.tokenizer.index[word]
    where = []
    for s, row in zip(sentences, ids.tolist()):
        found = [i for i, t in enumerate(row) if t == wid]
        if len(found) != 1:
            raise ValueError(f"{word!r} must be one token, once, in {s!r}")
        where.append(found[0])
    rows = torch.arange(len(sentences))
    stages = [cache["blocks.0.resid_pre"]] + [cache[f"blocks.{L}.resid_post"] for L in range(lm.cfg.n_layers)]
    return torch.stack([st[rows, torch.tensor(where)] for st in stages])


def separation(lm, word: str, senses: dict[str, tuple[str, ...]]) -> Separation:
    names = list(senses)
    sentences = [s for n in names for s in senses[n]]
    label = np.array([i for i, n in enumerate(names) for _ in senses[n]])
    vectors = F.normalize(word_vectors(lm, word, sentences), dim=-1).numpy()
    within, across, correct = [], [], []
    same = label[:, None] == label[None, :]
    off_diag = ~np.eye(len(label), dtype=bool)
    for v in vectors:
        cos = v @ v.T
        within.append(float(cos[same & off_diag].mean()))
        across.append(float(cos[~same].mean()))
        right = 0
        for i in range(len(label)):
            others = np.arange(len(label)) != i
            centroids = [v[others & (label == k)].mean(0) for k in range(len(names))]
            sims = [c @ v[i] / np.linalg.norm(c) for c in centroids]
            right += int(np.argmax(sims) == label[i])
        correct.append(right)
    return Separation(word, names, len(label), within, across, correct)
