"""The induction circuit in a real model: SmolLM2-135M's induction heads, found and ablated as the toy's are.

The sequences are the toy's task in the real model's tokens: `SEQUENCES` segments of `PERIOD` distinct
tokens drawn at random from SmolLM2's ordinary tokens (its special tokens left out), each followed by
itself. No text means anything, so only a rule that copies can predict the second copy. Per head (30
layers of 9), the chapter's scores:

- previous-token score: its mean attention from each position to the one before it;
- induction (prefix-matching) score: its mean attention, from each position of the second copy, to the
  position just after the same token's earlier occurrence (query i, key i - PERIOD + 1);

a head counts as an induction head from `lib.analysis.induction.FORMED`, as in the toy. The copy is
measured on the second copy's predictable tokens (its first left out, as in the toy): the share the model
predicts (its top token is the next token) and the loss. Ablation is the toy's resample ablation: a
head's output (its `z`) replaced by its output on another of the sequences (the next one in the batch:
the same length, other tokens). The induction heads are ablated together; the strongest previous-token
head before their layers alone; then `DRAWS` sets of as many heads as there are induction heads, drawn at
random from the other heads, each set ablated the same way.

The random draws cost a forward pass each, minutes on the 2-core machine, too long for the book's build:
`python -m lib.chapters.part1.induction.real` measures once and writes the figures, with the recipe that
made them, to `data/runs/induction/smollm2.json`; the chapter's claims read that file, and a test checks
that its recipe is still this module's.
"""
from __future__ import annotations

import json
import time

import numpy as np
import torch

from lib.analysis.induction import FORMED, FORMED_PREVIOUS
from lib.data import data_dir
from lib.errors import require

SEQUENCES = 4          # sequences in the batch every pass reads
PERIOD = 24            # tokens in each segment
DRAWS = 100            # random sets of heads ablated for the baseline
SEED = 0


def path():
    return data_dir() / "runs" / "induction" / "smollm2.json"


def recipe() -> dict:
    from lib.model import smollm2    # deferred: the toy chapter's other cells never need the real model's module

    return {"model": f"{smollm2.PACKAGE}=={smollm2.VERSION} {smollm2.FILE}", "sequences": SEQUENCES,
            "period": PERIOD, "draws": DRAWS, "seed": SEED, "formed": FORMED, "ablation": "resample (next sequence)"}


def repeated_tokens(lm, seed: int = SEED, n: int = SEQUENCES, period: int = PERIOD) -> torch.Tensor:
    """[n, 2 * period] token ids: each row a segment of distinct ordinary tokens, twice."""
    special = set(lm.vocab.special.values())
    pool = torch.tensor([i for i in range(lm.cfg.vocab_size) if i not in special])
    g = torch.Generator().manual_seed(seed)
    segments = torch.stack([pool[torch.randperm(len(pool), generator=g)[:period]] for _ in range(n)])
    return torch.cat([segments, segments], dim=1)


def head_scores(patterns: list[torch.Tensor], period: int) -> tuple[np.ndarray, np.ndarray]:
    """(previous-token, induction) scores [layer, head] from each layer's patterns [batch, head, T, T]."""
    T = 2 * period
    prev = np.stack([p[:, :, torch.arange(1, T), torch.arange(T - 1)].mean((0, 2)).numpy() for p in patterns])
    q = torch.arange(period, T)
    ind = np.stack([p[:, :, q, q - period + 1].mean((0, 2)).numpy() for p in patterns])
    return prev.astype(float), ind.astype(float)


def live_scores(lm, seed: int = SEED, n: int = SEQUENCES, period: int = PERIOD) -> tuple[np.ndarray, np.ndarray]:
    """Every head's (previous-token, induction) scores [layer, head] on the recipe's sequences: one pass,
    only the patterns kept."""
    ids = repeated_tokens(lm, seed, n, period)
    patterns = {}

    def record(x, name):
        patterns[name] = x.detach().clone()
    lm.model.run_with_hooks(ids, fwd_hooks=[(lambda name: name.endswith(".attn.pattern"), record)])
    return head_scores([patterns[f"blocks.{layer}.attn.pattern"] for layer in range(lm.cfg.n_layers)], period)


def copy_figures(logits: torch.Tensor, ids: torch.Tensor, period: int) -> dict:
    """The second copy, its first token left out: the share of its tokens the model predicts, and its loss."""
    at = logits[:, period:2 * period - 1].double()
    target = ids[:, period + 1:]
    loss = -torch.log_softmax(at, -1).gather(-1, target[..., None]).mean()
    return {"accuracy": float((at.argmax(-1) == target).double().mean()), "loss": float(loss),
            "n": int(target.numel())}


def resample_hooks(heads, z: dict[int, torch.Tensor]):
    """Hooks that give each of `heads` its output on the next sequence of the batch (`z`: the clean run's)."""
    by_layer: dict[int, list[int]] = {}
    for layer, h in heads:
        by_layer.setdefault(layer, []).append(h)

    def swap(layer, hs):
        other = z[layer].roll(1, dims=0)[:, :, hs]

        def hook(x, name):
            x = x.clone()
            x[:, :, hs] = other
            return x
        return hook
    return [(f"blocks.{layer}.attn.z", swap(layer, hs)) for layer, hs in sorted(by_layer.items())]


def measure(lm, seed: int = SEED, draws: int = DRAWS, n: int = SEQUENCES, period: int = PERIOD,
            progress: bool = False) -> dict:
    """Every head's two scores, the induction heads (by score), the copy clean, with them ablated, and with
    `draws` random sets of as many other heads ablated."""
    cfg = lm.cfg
    ids = repeated_tokens(lm, seed, n, period)
    keep = {f"blocks.{layer}.attn.{k}" for layer in range(cfg.n_layers) for k in ("pattern", "z")}
    cache = {}

    def record(x, name):
        cache[name] = x.detach().clone()
    logits = lm.model.run_with_hooks(ids, fwd_hooks=[(lambda name: name in keep, record)])
    prev, ind = head_scores([cache[f"blocks.{layer}.attn.pattern"] for layer in range(cfg.n_layers)], period)
    z = {layer: cache[f"blocks.{layer}.attn.z"] for layer in range(cfg.n_layers)}
    del cache
    every = [(layer, h) for layer in range(cfg.n_layers) for h in range(cfg.n_heads)]
    heads = sorted((hd for hd in every if ind[hd] >= FORMED), key=lambda hd: -ind[hd])
    require(heads, f"no head of {lm.name} has an induction score of {FORMED} on these sequences")
    others = [hd for hd in every if hd not in heads]
    clean = copy_figures(logits, ids, period)
    ablated = copy_figures(lm.model.run_with_hooks(ids, fwd_hooks=resample_hooks(heads, z)), ids, period)
    # The other half of the circuit: the strongest previous-token head in a layer before the induction heads.
    first = min(layer for layer, _ in heads)
    previous = max((hd for hd in every if hd[0] < first), key=lambda hd: prev[hd])
    alone = copy_figures(lm.model.run_with_hooks(ids, fwd_hooks=resample_hooks([previous], z)), ids, period)
    rng = np.random.default_rng(seed)
    rand = []
    for d in range(draws):
        pick = [others[i] for i in rng.choice(len(others), len(heads), replace=False)]
        rand.append({"heads": [list(hd) for hd in pick],
                     **copy_figures(lm.model.run_with_hooks(ids, fwd_hooks=resample_hooks(pick, z)), ids, period)})
        if progress:
            print(f"draw {d + 1}/{draws}: accuracy {rand[-1]['accuracy']:.3f}", flush=True)
    return {"previous": prev.round(4).tolist(), "induction": ind.round(4).tolist(),
            "heads": [list(hd) for hd in heads], "previous_heads": [list(hd) for hd in every if prev[hd] >= FORMED_PREVIOUS],
            "clean": clean, "ablated": ablated, "previous_head": list(previous), "previous_ablated": alone,
            "random": rand}


def read() -> dict:
    """The stored figures, refused if another recipe made them."""
    p = path()
    require(p.is_file(), f"{p} is missing: `python -m lib.chapters.part1.induction.real` measures it")
    stored = json.loads(p.read_text())
    require(stored.get("recipe") == recipe(), f"{p} was measured with another recipe: run "
                                              "`python -m lib.chapters.part1.induction.real` again")
    return stored


def main() -> None:
    from lib.model import smollm2    # deferred: as in `recipe`

    torch.set_num_threads(1)
    start = time.perf_counter()
    lm = smollm2.load()
    figures = {"recipe": recipe(), **measure(lm, progress=True),
               "seconds": round(time.perf_counter() - start)}
    path().write_text(json.dumps(figures, indent=1) + "\n")
    print(f"wrote {path()} in {figures['seconds']} s")


if __name__ == "__main__":
    main()
