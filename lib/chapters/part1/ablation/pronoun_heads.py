"""Which of MiniLM's heads look from a pronoun to its antecedent, and does it matter? Measured.

Over the labelled set of `lib.chapters.part1.ablation.pronouns` (sentences with a pronoun and its known
antecedent, and Winograd pairs where one word changes the antecedent):

1. **Where the pronoun looks.** For every head (6 layers x 12), the key the pronoun attends to most,
   among the *eligible* keys: every token except [CLS], [SEP], punctuation and the pronoun itself.
   Those are left out because many heads park most of their attention on them (the "no-op"
   attention of BERT, Clark et al. 2019; `special_share` measures how much), and an argmax
   landing on [SEP] says nothing about the antecedent. A hit is that key being the antecedent.
2. **Against baselines**, on the same sentences: *chance* (a uniformly random eligible key: the
   expected hits, the sum of 1 / eligible keys), the *nearest noun* before the pronoun (among the
   sentence's labelled candidate nouns) and the *first noun* (usually the subject).
3. **Chosen on one half, reported on the other.** The set is split at random (by `seed`; a
   Winograd pair stays in one half): the best heads are the top `k` by hits on the selection half,
   and every number about them is counted on the report half, which played no part in choosing.
4. **Switched off.** Mean ablation of the best heads (each head's write replaced by its mean write
   over the selection half's real tokens) and, as a control, of `k` heads drawn at random: does the
   pronoun's final contextual vector stay closer (cosine) to its antecedent's than to the other
   candidates'? A head the pattern points at may matter little: attention is not attribution.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch.nn import functional as F

from lib.chapters.part1.ablation.pronouns import ITEMS, Item
from lib.model import minilm as minilm_module
from lib.model.transformer import ActivationCache
from lib.model.wordpiece import CLS, PAD, SEP, is_punctuation


def is_eligible_key(token: str) -> bool:
    """Keys a pronoun's strongest attention is looked for among: not [CLS], [SEP], [PAD] or punctuation."""
    return token not in (CLS, SEP, PAD) and not all(is_punctuation(c) for c in token)


@dataclass
class Encoded:
    """The set run through the model once: for each sentence its tokens, the positions that matter,
    the pronoun's attention rows [layer, head, key] and the final contextual vectors [T, d_model]."""
    items: list[Item]
    tokens: list[list[str]]
    pronoun: list[int]
    antecedent: list[int]
    others: list[list[int]]
    eligible: list[np.ndarray]           # bool [T] per sentence (the pronoun itself excluded)
    rows: list[np.ndarray]               # [layer, head, T]
    final: list[torch.Tensor]            # [T, d_model]
    head_out_mean: dict = field(default_factory=dict)


def _position(tokens: list[str], word: str, sentence: str) -> int:
    found = [i for i, t in enumerate(tokens) if t == word]
    if len(found) != 1:
        raise ValueError(f"{word!r} must be one whole token, once, in {sentence!r}; found {len(found)}")
    return found[0]


def run(lm, items: list[Item], hooks=None) -> tuple[list[list[str]], torch.Tensor, torch.Tensor, ActivationCache]:
    ids, real = lm.batch([it.sentence for it in items])
    cache = ActivationCache()
    with torch.no_grad(), minilm_module.one_thread():
        out = lm.model(ids, real=real, cache=cache, hooks=hooks)
    tokens = [lm.tokenizer.decode(row[: int(r.sum())]) for row, r in zip(ids, real)]
    return tokens, out, real, cache


def encode(lm, items: list[Item] | None = None) -> Encoded:
    items = list(ITEMS if items is None else items)
    tokens, out, real, cache = run(lm, items)
    L = lm.cfg.n_layers
    patterns = torch.stack([cache[f"blocks.{layer}.attn.pattern"] for layer in range(L)], 1)  # [b, L, H, q, k]
    enc = Encoded(items, tokens, [], [], [], [], [], [])
    for i, (it, toks) in enumerate(zip(items, tokens)):
        p = _position(toks, it.pronoun, it.sentence)
        enc.pronoun.append(p)
        enc.antecedent.append(_position(toks, it.antecedent, it.sentence))
        enc.others.append([_position(toks, w, it.sentence) for w in it.others])
        ok = np.array([is_eligible_key(t) for t in toks])
        ok[p] = False
        enc.eligible.append(ok)
        enc.rows.append(patterns[i, :, :, p, : len(toks)].numpy())
        enc.final.append(out[i, : len(toks)])
    return enc


_ENCODED: dict = {}


def _encoded(lm) -> Encoded:
    """The whole labelled set encoded once per model (it does not depend on the split seed)."""
    if id(lm) not in _ENCODED:
        _ENCODED[id(lm)] = encode(lm)
    return _ENCODED[id(lm)]


def split(items: list[Item], seed: int) -> tuple[list[int], list[int]]:
    """Indices of the selection half and the report half. Units are single sentences and whole
    Winograd pairs, shuffled by `seed` and dealt alternately, so the halves are near equal."""
    units: list[list[int]] = []
    pair_unit: dict[int, int] = {}
    for i, it in enumerate(items):
        if it.pair is None:
            units.append([i])
        elif it.pair in pair_unit:
            units[pair_unit[it.pair]].append(i)
        else:
            pair_unit[it.pair] = len(units)
            units.append([i])
    order = np.random.default_rng(seed).permutation(len(units))
    select, report = [], []
    for rank, u in enumerate(order):
        (select if rank % 2 == 0 else report).extend(units[u])
    return sorted(select), sorted(report)


def head_hits(enc: Encoded, idx: list[int]) -> np.ndarray:
    """[layer, head]: in how many of the sentences `idx` the pronoun's strongest eligible key is the antecedent."""
    L, H = enc.rows[0].shape[:2]
    hits = np.zeros((L, H), dtype=int)
    for i in idx:
        row = np.where(enc.eligible[i], enc.rows[i], -np.inf)
        hits += row.argmax(-1) == enc.antecedent[i]
    return hits


def nearest_noun(enc: Encoded, i: int) -> int:
    """The position of the candidate noun nearest before the pronoun (nearest after, if none is before)."""
    p = enc.pronoun[i]
    nouns = [enc.antecedent[i]] + enc.others[i]
    before = [n for n in nouns if n < p]
    return max(before) if before else min(nouns, key=lambda n: abs(n - p))


def strongest_key(enc: Encoded, i: int, layer: int, head: int) -> int:
    return int(np.where(enc.eligible[i], enc.rows[i][layer, head], -np.inf).argmax())


def baselines(enc: Encoded, idx: list[int]) -> dict[str, float]:
    """Expected hits by chance, and hits of the nearest-noun and first-noun rules, on `idx`."""
    chance = sum(1.0 / enc.eligible[i].sum() for i in idx)
    nearest = first = 0
    for i in idx:
        a = enc.antecedent[i]
        nearest += nearest_noun(enc, i) == a
        first += min([a] + enc.others[i]) == a
    return {"chance": chance, "nearest noun": nearest, "first noun": first}


def special_share(enc: Encoded) -> np.ndarray:
    """[layer]: the pronoun's attention on [CLS], [SEP] and punctuation, averaged over heads and sentences."""
    shares = []
    for i in range(len(enc.items)):
        special = np.array([not is_eligible_key(t) for t in enc.tokens[i]])
        shares.append(enc.rows[i][:, :, special].sum(-1).mean(-1))     # [layer]
    return np.mean(shares, axis=0)


def mean_head_writes(lm, items: list[Item]) -> dict[int, torch.Tensor]:
    """Each head's mean write [head, d_model] per layer, over the real tokens of `items`."""
    _, _, real, cache = run(lm, items)
    return {layer: cache[f"blocks.{layer}.attn.head_out"][real].mean(0) for layer in range(lm.cfg.n_layers)}


def margins(lm, items: list[Item], enc_index: list[tuple[int, list[int]]], hooks=None) -> np.ndarray:
    """For each sentence: cos(pronoun, antecedent) minus the largest cos(pronoun, other candidate),
    on the final contextual vectors. `enc_index` holds (antecedent, others) positions per sentence,
    and the pronoun's position first: [(pronoun, [antecedent, *others])]."""
    _, out, _, _ = run(lm, items, hooks)
    result = []
    for i, (p, positions) in enumerate(enc_index):
        v = out[i]
        cos = [F.cosine_similarity(v[p], v[q], dim=0).item() for q in positions]
        result.append(cos[0] - max(cos[1:]))
    return np.array(result)


@dataclass
class Finding:
    seed: int
    n_select: int
    n_report: int
    k: int
    best: list[tuple[int, int]]                  # chosen on the selection half
    best_select_hits: list[int]
    best_report_hits: list[int]
    report_baselines: dict[str, float]
    heads_beating_nearest: int                   # of all heads, on the report half
    n_heads: int
    pairs_report: int                            # Winograd pairs in the report half
    pairs_both_right: dict[tuple[int, int], int]  # per best head: pairs with both sentences hit
    special_share: list[float]                   # per layer, all sentences
    margin_positive_clean: int                   # report-half sentences whose antecedent is closest
    margin_positive_ablated: int
    margin_change_best: float                    # mean change of the margin, best heads ablated
    margin_change_control: float                 # mean over random draws of k heads
    margin_dropped_best: int                     # sentences whose margin fell
    control_draws: int
    nearest_is_other: int = 0                    # report sentences whose nearest noun is not the antecedent
    best_hits_there: list[int] = field(default_factory=list)   # per best head, hits among those
    best_on_nearest: list[int] = field(default_factory=list)   # per best head, argmax on the nearest noun
    hits_select: np.ndarray = field(repr=False, default=None)
    hits_report: np.ndarray = field(repr=False, default=None)


def measure(seed: int = 0, k: int = 3, control_draws: int = 10, lm=None) -> Finding:
    """The whole measurement on the split `seed`: heads chosen on one half, reported on the other."""
    lm = lm or minilm_module.load()
    enc = _encoded(lm)
    select, report = split(enc.items, seed)
    hits_s, hits_r = head_hits(enc, select), head_hits(enc, report)
    L, H = hits_s.shape
    order = sorted(((layer, head) for layer in range(L) for head in range(H)),
                   key=lambda lh: (-hits_s[lh], lh))       # ties: the earlier head, a fixed rule
    best = order[:k]
    base = baselines(enc, report)
    pairs = sorted({enc.items[i].pair for i in report if enc.items[i].pair is not None})
    both = {}
    for lh in best:
        count = 0
        for pair in pairs:
            members = [i for i in report if enc.items[i].pair == pair]
            count += all(head_hits(enc, [i])[lh] == 1 for i in members)
        both[lh] = count

    elsewhere = [i for i in report if nearest_noun(enc, i) != enc.antecedent[i]]
    there = [sum(strongest_key(enc, i, *lh) == enc.antecedent[i] for i in elsewhere) for lh in best]
    on_nearest = [sum(strongest_key(enc, i, *lh) == nearest_noun(enc, i) for i in report) for lh in best]

    means = mean_head_writes(lm, [enc.items[i] for i in select])
    rep_items = [enc.items[i] for i in report]
    positions = [(enc.pronoun[i], [enc.antecedent[i]] + enc.others[i]) for i in report]
    clean = margins(lm, rep_items, positions)
    ablated = margins(lm, rep_items, positions, minilm_module.mean_ablation_hooks(best, means))
    rng = np.random.default_rng(seed)
    control = []
    for _ in range(control_draws):
        draw = rng.choice(L * H, size=k, replace=False)
        heads = [(int(d) // H, int(d) % H) for d in draw]
        control.append((margins(lm, rep_items, positions, minilm_module.mean_ablation_hooks(heads, means))
                        - clean).mean())
    return Finding(
        seed=seed, n_select=len(select), n_report=len(report), k=k, best=best,
        best_select_hits=[int(hits_s[lh]) for lh in best], best_report_hits=[int(hits_r[lh]) for lh in best],
        report_baselines={k: float(v) for k, v in base.items()}, heads_beating_nearest=int((hits_r > base["nearest noun"]).sum()), n_heads=L * H,
        pairs_report=len(pairs), pairs_both_right=both, special_share=[float(x) for x in special_share(enc)],
        margin_positive_clean=int((clean > 0).sum()), margin_positive_ablated=int((ablated > 0).sum()),
        margin_change_best=float((ablated - clean).mean()), margin_change_control=float(np.mean(control)),
        margin_dropped_best=int((ablated < clean).sum()), control_draws=control_draws,
        nearest_is_other=len(elsewhere), best_hits_there=[int(x) for x in there],
        best_on_nearest=[int(x) for x in on_nearest],
        hits_select=hits_s, hits_report=hits_r)


# The conclusions the page states from these numbers are registered claims (the `ablation.minilm-*`
# ids of `lib.chapters.part1.ablation.claims`), measured on any split seed by `python -m lib claims`.


@dataclass
class PronounView:
    """One sentence's pronoun seen by every head: why-attention's example on the real model."""
    tokens: list[str]
    pronoun: int
    rows: np.ndarray                 # [layer, head, key]: the pronoun's attention
    special: np.ndarray              # bool [key]: [CLS], [SEP] or punctuation
    strongest: np.ndarray            # [layer, head]: the strongest eligible key (not the pronoun itself)

    def special_share(self) -> np.ndarray:
        """[layer, head]: the pronoun's attention on [CLS], [SEP] and punctuation."""
        return self.rows[:, :, self.special].sum(-1)

    def heads_on(self, word: str) -> int:
        """How many heads' strongest eligible key is `word`."""
        return int(sum((self.strongest == k).sum() for k, t in enumerate(self.tokens) if t == word))


def pronoun_view(lm, sentence: str, pronoun: str) -> PronounView:
    tokens, patterns = lm.patterns(sentence)
    p = _position(tokens, pronoun, sentence)
    rows = patterns[:, :, p, :].numpy()
    special = np.array([not is_eligible_key(t) for t in tokens])
    eligible = ~special
    eligible[p] = False
    strongest = np.where(eligible, rows, -np.inf).argmax(-1)
    return PronounView(tokens, p, rows, special, strongest)
