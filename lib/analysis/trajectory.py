"""The residual stream's path on a concept plane: where the last position travels, stage by stage.

The plane is built from two dictionary words by Gram-Schmidt: the first axis points at `toward`
(for example Tarso), the second at `against` (for example Paolo) with its Tarso part removed.
Because the residual stream is a plain sum of writes (embeddings, each head, each MLP), its
coordinate along the first axis is the sum of each write's coordinate: the path's move splits
exactly into one push per component.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from lib.model.readout import token_prob
from lib.analysis.lens import components, group_by_block, stage_residuals
from lib.analysis.maps import concept_plane, pca, spread_captured
from lib.model.transformer import Head


@dataclass(frozen=True)
class Trajectory:
    stages: list[str]          # forward order: embed, blocks.0.attn, blocks.0.mlp, ...
    coords: np.ndarray         # [stage, 2] the last position after each stage, on the plane
    words: tuple[str, str]     # (first axis, second axis before orthogonalising)
    spread: float              # share of the path's variance the concept plane captures
    best_spread: float         # share the best possible plane (the path's own top-2 PCA) captures
    pushes: dict[str, float]   # each component's move along the first axis; they sum to coords[-1, 0]

    def largest_push(self) -> tuple[str, float]:
        name = max(self.pushes, key=lambda n: abs(self.pushes[n]))
        return name, self.pushes[name]


def residual_trajectory(lm, prompt: str, toward: str = "Tarso", against: str = "Paolo",
                        ablate: Iterable[Head] = (), ablate_mlps: Iterable[int] = ()) -> Trajectory:
    """The last position's residual after each stage of `prompt`, on the (toward, against) plane,
    with the listed heads and MLPs (by layer) writing zero."""
    ids = lm.encode(prompt)
    model = lm.model
    W_E = model.W_E.detach().double().numpy()
    d1, d2 = W_E[lm.vocab.id(toward)], W_E[lm.vocab.id(against)]
    _, cache = model.run_with_cache(ids, ablate=ablate, ablate_mlps=ablate_mlps)
    path = {name: r[-1].double().numpy() for name, r in stage_residuals(model, cache).items()}
    points = np.array(list(path.values()))
    plane = concept_plane(points, d1, d2)
    writes = group_by_block({k: v.double() for k, v in components(model, cache).items()})
    pushes = {name: float(np.asarray(vec) @ plane.axes[0]) for name, vec in writes.items()}
    return Trajectory(list(path), plane.coords, (toward, against), spread_captured(points, plane.axes),
                      pca(points, k=2).cumulative(2), pushes)


@dataclass(frozen=True)
class PathView:
    intact: Trajectory
    ablated: Trajectory           # the same prompt with the chosen components writing zero
    heads_off: tuple[Head, ...]
    mlps_off: tuple[int, ...]
    prob: float                   # P(toward) at the end, with the components off
    prob_intact: float


def path_view(lm, prompt: str, heads_off: Iterable[Head] = (), mlps_off: Iterable[int] = (),
              toward: str = "Tarso", against: str = "Paolo") -> PathView:
    """The residual path with and without some heads and MLPs, on the same concept plane.

    Both paths are drawn on the intact run's axes (the plane depends only on two dictionary rows,
    so it does not move when a component is switched off)."""
    heads_off, mlps_off = tuple(heads_off), tuple(mlps_off)
    intact = residual_trajectory(lm, prompt, toward, against)
    ablated = residual_trajectory(lm, prompt, toward, against, ablate=heads_off, ablate_mlps=mlps_off)
    probs = [token_prob(lm, prompt, toward, ablate=h, ablate_mlps=m) for h, m in (((), ()), (heads_off, mlps_off))]
    return PathView(intact, ablated, heads_off, mlps_off, probs[1], probs[0])


# ----------------------------------------------------------------------------- over a set of prompts
# One prompt is an example. A claim such as "block-0 attention carries the epithet" is measured
# over a labelled prompt set: for each prompt, the path toward its own target and the target's
# probability with each group of components switched off.

ABLATIONS = ("block-0 heads", "block-1 heads", "MLP 0", "MLP 1")


@dataclass(frozen=True)
class PromptPath:
    prompt: str
    target: str
    prob: float                          # P(target), intact
    prob_without: dict[str, float]       # P(target) with each group of ABLATIONS switched off
    pushes: dict[str, float]             # each component's push along the target's direction


def _ablation(lm, name: str) -> tuple[tuple[Head, ...], tuple[int, ...]]:
    layer = int(name.split("-")[1][0]) if name.startswith("block") else int(name.split()[1])
    if name.startswith("block"):
        return tuple((layer, h) for h in range(lm.model.cfg.n_heads)), ()
    return (), (layer,)


def prompt_paths(lm, prompts) -> list[PromptPath]:
    """The path toward each labelled prompt's target, and P(target) with each group switched off.

    The plane's second axis is the token just read (the callee), so the first axis, the target's
    own row, is the one that matters for the pushes."""
    out = []
    for p in prompts:
        traj = residual_trajectory(lm, p.text, toward=p.target, against=p.tokens[-1])
        without = {}
        for name in ABLATIONS:
            heads, mlps = _ablation(lm, name)
            without[name] = token_prob(lm, p.text, p.target, ablate=heads, ablate_mlps=mlps)
        out.append(PromptPath(p.text, p.target, token_prob(lm, p.text, p.target), without, traj.pushes))
    return out
