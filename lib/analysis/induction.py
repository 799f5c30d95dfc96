"""Induction heads: the measurements that find them, by role, and take their circuit apart.

Everything is measured on repeated random segments (`lib.content.corpora.repeats`): `<BOS>`, filler letters,
a segment of letters, the segment again (every letter before the repeat distinct). Positions: 0 is `<BOS>`,
the filler 1..f, the first copy f+1..f+p, the second f+p+1..f+2p.

- previous-token score of a head: its mean attention from each position to the one before it;
- duplicate-token score: its mean attention, from each position of the second copy, to the same token's
  earlier occurrence (query i, key i - p);
- induction (prefix-matching) score: its mean attention, from each position of the second copy, to the
  position just after the same token's earlier occurrence (query i, key i - p + 1);
- copying score (Elhage et al. 2021): of the eigenvalues of the head's OV circuit read from the letters'
  embedding to their unembedding, W_E W_V W_O W_U, the share that is positive, sum(l) / sum(|l|), from
  -1 to 1 (1: whatever the head attends to, it raises that same letter's logit);
- the in-context loss: the loss on the first copy against the loss on the second;
- composition scores between a layer-0 head A and a layer-1 head B (Elhage et al. 2021):
  ||M||_F / (||X||_F ||Y||_F) for M = X Y with, in the row-vector convention the model uses,
  K: W_QK^B (W_OV^A)^T, Q: W_OV^A W_QK^B, V: W_OV^A W_OV^B (W_QK = W_Q W_K^T, W_OV = W_V W_O),
  beside the same score of random matrices of the same shapes (the baseline);
- resample ablation of a head (its write replaced by its write on another sequence of the same period),
  and path patching from a layer-0 head through one input (keys, queries or values) of a layer-1 head
  to the logits: the layer-1 head reads, on that input only, the residual stream in which the layer-0
  head's write comes from another sequence; all else runs clean. Both on the hook points.

Heads are found by their measured role (`roles`), never by their index. An induction head can read a
layer-0 head two ways (Elhage et al. 2021): through its keys, from a previous-token head ("the letter
before me was k"), or through its queries, from a head that finds the earlier occurrence of the current
letter and passes on where it was. `circuit` path-patches every layer-0 head through both inputs and
names the route that costs most: the *sender* and the input it reaches the induction head by.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from lib.content.corpora import repeats
from lib.content.corpora.repeats import Batch, Merged
from lib.model.vocab import PAD
from lib.errors import require
from lib.model.transformer import Transformer

Head = tuple[int, int]
# The sequences a measurement draws: this many of each period from repeats' shortest to its longest.
PER_PERIOD = 16
# A head "has formed" once its role's score passes these. An induction head: over half of its attention
# goes where its role says. A previous-token head: 0.3, twice what attention spread evenly over the
# positions so far would give (0.15 on these sequences), since layer 0 shares the work among its heads
# (on the shipped runs, all four attend to the previous token more than evenly; the best one 0.4 or so).
FORMED = 0.5
FORMED_PREVIOUS = 0.3


def sequences(seed: int, per_period: int = PER_PERIOD, periods=None, max_filler: int = repeats.MAX_FILLER,
              group: int = repeats.GROUP) -> list[Batch]:
    """Repeated random segments drawn with `seed`: `per_period` of each period, in batches of `group` that
    share a filler length drawn from 0 to `max_filler` (0: every repeat right after `<BOS>`)."""
    periods = range(repeats.MIN_PERIOD, repeats.MAX_PERIOD + 1) if periods is None else periods
    rng = np.random.default_rng(seed)
    ids = {t: i for i, t in enumerate(repeats.TOKENS)}
    return repeats.batches(rng, per_period, ids, periods, max_filler, group)


def merged(batches) -> Merged:
    """The batches as one padded batch (`repeats.merge`): one forward pass for every period."""
    return batches if isinstance(batches, Merged) else repeats.merge(batches, repeats.TOKENS.index(PAD))


def pattern_scores(model: Transformer, batches) -> dict[str, np.ndarray]:
    """Each head's previous-token, duplicate-token and induction score, [layer, head], averaged over every
    query of every sequence (each query counted once), and its avoidance ratio: from each letter of the
    second copy, its attention on that letter's earlier occurrence over its mean attention on the two
    positions beside it (below 1: the head avoids the earlier occurrence; above 1: it seeks it)."""
    m = merged(batches)
    _, cache = model.run_with_cache(torch.as_tensor(m.ids))
    prev, dup, ind, avoid = [], [], [], []
    for layer in range(model.cfg.n_layers):
        pat = cache[f"blocks.{layer}.attn.pattern"].double()         # [row, head, query, key]
        r, q = m.queries
        prev.append(pat[r, :, q, q - 1].mean(0).numpy())
        r, q, k = m.duplicate
        dup.append(pat[r, :, q, k].mean(0).numpy())
        beside = 0.5 * (pat[r, :, q, k - 1] + pat[r, :, q, k + 1])
        avoid.append((pat[r, :, q, k].mean(0) / beside.mean(0)).numpy())
        r, q, k = m.induction
        ind.append(pat[r, :, q, k].mean(0).numpy())
    return {"previous": np.array(prev), "duplicate": np.array(dup), "induction": np.array(ind),
            "avoidance": np.array(avoid)}


def prefix_matching_score(pattern, tokens) -> float:
    """One head's prefix-matching score on any sequence: over the queries whose token occurred before,
    the mean of the attention each puts on the positions just after those earlier occurrences (summed).
    `pattern` [T, T], `tokens` T tokens (ids or words). 0.0 when no token occurs twice. On repeated
    segments of distinct letters it is the induction score of `pattern_scores`."""
    a = np.asarray(pattern, dtype=float)
    toks = list(tokens)
    require(a.ndim == 2 and a.shape == (len(toks), len(toks)),
            f"a pattern is [T, T] for T tokens, got {a.shape} for {len(toks)} tokens")
    shares = []
    for i in range(len(toks)):
        after = [j + 1 for j in range(i) if toks[j] == toks[i]]
        if after:
            shares.append(a[i, after].sum())
    return float(np.mean(shares)) if shares else 0.0


def copying_scores(model: Transformer) -> np.ndarray:
    """Each head's copying score [layer, head]: sum(l) / sum(|l|) over the eigenvalues l of its OV
    circuit from the letters' embedding to their unembedding."""
    letters = [repeats.TOKENS.index(t) for t in repeats.LETTERS]
    W_E = model.W_E.detach().double()[letters]
    W_U = model.W_U.detach().double()[:, letters]
    out = np.zeros((model.cfg.n_layers, model.cfg.n_heads))
    for layer, block in enumerate(model.blocks):
        for h in range(model.cfg.n_heads):
            M = W_E @ block.attn.W_V.detach().double()[h] @ block.attn.W_O.detach().double()[h] @ W_U
            ev = np.linalg.eigvals(M.numpy())
            out[layer, h] = float(ev.real.sum() / np.abs(ev).sum())
    return out


def in_context_loss(model: Transformer, batches) -> dict[str, float]:
    """The mean loss (nats) on the first copy and on the second (the first token of each left out)."""
    return repeats.copy_losses(model, batches)


def copy_accuracy(model: Transformer, batches) -> float:
    """How often the top token is the right one on the second copy (its first token left out)."""
    m = merged(batches)
    ids = torch.as_tensor(m.ids)
    with torch.no_grad():
        top = model(ids[:, :-1]).argmax(-1)
    return float((top == ids[:, 1:])[m.second].double().mean())


@dataclass(frozen=True)
class Roles:
    previous: Head          # the layer-0 head with the highest previous-token score
    induction: Head         # the layer-1 head with the highest induction score
    previous_score: float
    induction_score: float
    duplicate: Head = (0, 0)    # the layer-0 head with the highest duplicate-token score
    duplicate_score: float = 0.0

    @property
    def formed(self) -> bool:
        """Both heads of the textbook circuit: a previous-token head and an induction head."""
        return self.previous_score >= FORMED_PREVIOUS and self.induction_score >= FORMED

    @property
    def induction_formed(self) -> bool:
        return self.induction_score >= FORMED


def roles(scores: dict[str, np.ndarray]) -> Roles:
    """The heads by their role: the previous-token and the duplicate-token head of layer 0 and the
    induction head of layer 1."""
    require(scores["previous"].shape[0] >= 2, "finding an induction circuit needs a model of two layers or more")
    h0 = int(np.argmax(scores["previous"][0]))
    h1 = int(np.argmax(scores["induction"][1]))
    dup = scores.get("duplicate")
    hd = int(np.argmax(dup[0])) if dup is not None else 0
    return Roles((0, h0), (1, h1), float(scores["previous"][0, h0]), float(scores["induction"][1, h1]),
                 (0, hd), float(dup[0, hd]) if dup is not None else 0.0)


# ------------------------------------------------------------------------------------- composition
def _qk(model: Transformer, layer: int, h: int) -> torch.Tensor:
    a = model.blocks[layer].attn
    return a.W_Q.detach().double()[h] @ a.W_K.detach().double()[h].T


def _ov(model: Transformer, layer: int, h: int) -> torch.Tensor:
    a = model.blocks[layer].attn
    return a.W_V.detach().double()[h] @ a.W_O.detach().double()[h]


def _comp(kind: str, ov_a: torch.Tensor, qk_b: torch.Tensor, ov_b: torch.Tensor) -> float:
    x, y = {"K": (qk_b, ov_a.T), "Q": (ov_a, qk_b), "V": (ov_a, ov_b)}[kind]
    return float(torch.linalg.norm(x @ y) / (torch.linalg.norm(x) * torch.linalg.norm(y)))


def composition_scores(model: Transformer) -> dict[str, np.ndarray]:
    """K-, Q- and V-composition scores [layer-0 head, layer-1 head]."""
    H = model.cfg.n_heads
    out = {k: np.zeros((H, H)) for k in "KQV"}
    for a in range(H):
        ov_a = _ov(model, 0, a)
        for b in range(H):
            qk_b, ov_b = _qk(model, 1, b), _ov(model, 1, b)
            for k in "KQV":
                out[k][a, b] = _comp(k, ov_a, qk_b, ov_b)
    return out


def composition_baseline(cfg, draws: int = 50, seed: int = 0) -> dict[str, float]:
    """The mean composition score of random matrices of the model's shapes (Gaussian weights)."""
    g = torch.Generator().manual_seed(seed)
    D, Dh = cfg.d_model, cfg.d_head
    out = {k: 0.0 for k in "KQV"}
    for _ in range(draws):
        W = [torch.randn(D, Dh, generator=g, dtype=torch.float64) for _ in range(6)]
        ov_a = W[0] @ W[1].T
        qk_b, ov_b = W[2] @ W[3].T, W[4] @ W[5].T
        for k in "KQV":
            out[k] += _comp(k, ov_a, qk_b, ov_b) / draws
    return out


# ------------------------------------------------------------------------------------- interventions
def _second_copy_figures(logits: torch.Tensor, m: Merged) -> dict[str, float]:
    """Mean loss and mean logit difference (the right letter's logit minus the mean of the other
    letters') over the second copy."""
    ids = torch.as_tensor(m.ids)
    lg = logits.double()[m.second]                       # [token, vocab]
    target = ids[:, 1:][m.second]
    loss = -torch.log_softmax(lg, dim=-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)
    letters = torch.tensor([repeats.TOKENS.index(t) for t in repeats.LETTERS])
    right = lg.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    others = (lg[:, letters].sum(-1) - right) / (len(letters) - 1)
    return {"loss": float(loss.mean()), "logit_diff": float((right - others).mean())}


class _Runs:
    """The clean run and the partner run (each sequence's partner of the same period and filler) of a merged
    batch, made once for all the interventions of one `circuit` call."""

    def __init__(self, model: Transformer, m: Merged):
        require(all(m.partner[i] != i for i in range(len(m.partner))),
                "resampling needs two sequences or more of each period and filler")
        self.m = m
        _, self.clean = model.run_with_cache(torch.as_tensor(m.ids)[:, :-1])
        _, self.other = model.run_with_cache(torch.as_tensor(m.ids[m.partner])[:, :-1])


def _run(model: Transformer, m: Merged, hooks) -> dict[str, float]:
    """The second copy's loss and logit difference with `hooks` attached."""
    return _second_copy_figures(model.run_with_hooks(torch.as_tensor(m.ids)[:, :-1], fwd_hooks=hooks), m)


def clean(model: Transformer, batches) -> dict[str, float]:
    return _run(model, merged(batches), [])


def resample_ablation(model: Transformer, batches, heads: list[Head], runs: _Runs | None = None) -> dict[str, float]:
    """The second copy's loss and logit difference when each head in `heads` writes what it wrote on
    another sequence of the same period."""
    m = merged(batches)
    runs = runs or _Runs(model, m)
    hooks = []
    for layer, h in heads:
        ref = runs.other[f"blocks.{layer}.attn.head_out"][:, :, h]

        def swap(x, name, h=h, ref=ref):
            x = x.clone()
            x[:, :, h] = ref
            return x
        hooks.append((f"blocks.{layer}.attn.head_out", swap))
    return _run(model, m, hooks)


def fill_hole(model: Transformer, batches) -> dict[str, float]:
    """The second copy's loss and logit difference when layer 0's attention, from each letter of the second
    copy, on that letter's earlier occurrence is set to the mean of its attention on the two positions
    beside it, in every head (each query's row then divided by its sum): a hole there, where a head avoids
    the earlier occurrence, is filled; a peak, where it seeks it, is flattened."""
    m = merged(batches)
    r, q, k = m.duplicate
    keep = q < m.ids.shape[1] - 1                  # the model reads every position but the last
    r, q, k = (torch.as_tensor(a[keep]) for a in (r, q, k))

    def fill(pat, name):
        pat = pat.clone()
        pat[r, :, q, k] = 0.5 * (pat[r, :, q, k - 1] + pat[r, :, q, k + 1])
        return pat / pat.sum(-1, keepdim=True)
    return _run(model, m, [("blocks.0.attn.pattern", fill)])


INPUTS = {"K": ("k", "W_K"), "Q": ("q", "W_Q"), "V": ("v", "W_V")}


def path_patch(model: Transformer, batches, sender: Head, receiver: Head | list[Head], via: str,
               runs: _Runs | None = None) -> dict[str, float]:
    """Path patching sender -> receiver's `via` input (K, Q or V) -> logits: the receiver computes its
    keys (queries, values) from the clean residual stream with the sender's clean write replaced by its
    write on another sequence of the same period; every other path runs clean. `receiver` may be several
    heads of one layer, all reading the patched stream at once (a layer's induction heads share the work)."""
    require(via in INPUTS, f"via must be one of {', '.join(INPUTS)}, got {via!r}")
    receivers = [receiver] if isinstance(receiver, tuple) else list(receiver)
    require(receivers and len({r[0] for r in receivers}) == 1, "the receivers are heads of one layer")
    require(all(sender[0] < r[0] for r in receivers), "a sender must sit in an earlier layer than its receiver")
    m = merged(batches)
    runs = runs or _Runs(model, m)
    hook, weight = INPUTS[via]
    s_layer, s_head = sender
    r_layer = receivers[0][0]
    key = f"blocks.{s_layer}.attn.head_out"
    resid = runs.clean[f"blocks.{r_layer}.resid_pre"] - runs.clean[key][:, :, s_head] + runs.other[key][:, :, s_head]
    W = getattr(model.blocks[r_layer].attn, weight).detach()
    new = {h: resid @ W[h] for _, h in receivers}

    def swap(x, name):
        x = x.clone()
        for h, v in new.items():
            x[:, :, h] = v
        return x
    return _run(model, m, [(f"blocks.{r_layer}.attn.{hook}", swap)])


def induction_heads(scores: dict[str, np.ndarray]) -> list[Head]:
    """Every layer-1 head whose induction score is `FORMED` or more (the best one alone where none is)."""
    ind = scores["induction"][1]
    return [(1, h) for h in range(len(ind)) if ind[h] >= FORMED] or [(1, int(np.argmax(ind)))]


def circuit(model: Transformer, batches) -> dict:
    """The whole account of one model: scores, roles, composition, and what each part costs. The *sender*
    is the layer-0 head, and `route` the input of the induction heads (K or Q), whose path patching costs the
    second copy the most loss, over every layer-0 head and both inputs, into every induction head at once;
    `paths` are the sender's three."""
    batches = merged(batches)
    scores = pattern_scores(model, batches)
    r = roles(scores)
    comp = composition_scores(model)
    base = clean(model, batches)
    runs = _Runs(model, batches)
    heads = induction_heads(scores)
    every = {(h, k): path_patch(model, batches, (0, h), heads, k, runs)
             for h in range(model.cfg.n_heads) for k in "KQ"}
    sender_h, route = max(every, key=lambda hk: (every[hk]["loss"] - base["loss"], -hk[0], hk[1]))
    sender = (0, sender_h)
    paths = {k: every[sender_h, k] if k in "KQ" else path_patch(model, batches, sender, heads, k, runs)
             for k in "KQV"}
    a, b = sender_h, r.induction[1]
    return {
        "scores": scores, "copying": copying_scores(model), "roles": r,
        "loss": in_context_loss(model, batches), "accuracy": copy_accuracy(model, batches),
        "composition": {k: float(comp[k][a, b]) for k in "KQV"},
        "composition_all": comp,
        "clean": base,
        "sender": sender, "sender_previous": float(scores["previous"][sender]),
        "sender_duplicate": float(scores["duplicate"][sender]),
        "ablate_sender": resample_ablation(model, batches, [sender], runs),
        "ablate_previous": resample_ablation(model, batches, [r.previous], runs),
        "ablate_induction": resample_ablation(model, batches, [r.induction], runs),
        "induction_heads": heads,
        "ablate_induction_heads": resample_ablation(model, batches, heads, runs),
        "paths": paths, "route": route,
        "paths_every": {f"L0H{h}-{k}": v["loss"] for (h, k), v in every.items()},
    }
