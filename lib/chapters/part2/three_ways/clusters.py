"""Known clusters: a synthetic point set whose structure is known before any map is drawn.

A map of real embeddings can only be judged against what we believe the embeddings hold. Here the
truth is fixed by construction, as in Wattenberg, Viégas and Johnson's "How to Use t-SNE
Effectively" (Distill, 2016): four round (Gaussian) clusters of 20 points in 10 dimensions, drawn
from one fixed seed, so a layout can be held against

- sizes: `wide` is five times as spread out as the others (`tight`, `near`, `far`);
- distances: `near` sits close to `tight`, `wide` more than three times as far from it, `far` five
  times as far.

Ten dimensions are enough for the clusters to be separate and fewer than the course's embedding
rows (64 and 384), so nothing here is easier than what the chapters map. The labels name each
point's cluster and number (T1 ... F20), so a picture coloured by group shows the truth.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# The point set's name and description, as the t-SNE explorer's menu offers it (`views.POINT_SETS`).
NAME = "known-clusters"
DESCRIPTION = "80 synthetic points in four clusters of known size and distance"
SEED = 2016          # the year of the Distill article; any fixed seed would do
DIM = 10
PER_CLUSTER = 20


@dataclass(frozen=True)
class Cluster:
    name: str
    letter: str            # the points' labels: letter and number
    centre_axis: int       # the centre lies on this coordinate axis ...
    centre_at: float       # ... this far from the origin
    spread: float          # the standard deviation of every coordinate


CLUSTERS = (Cluster("tight", "T", 0, 0.0, 1.0),
            Cluster("near", "N", 0, 12.0, 1.0),
            Cluster("wide", "W", 1, 40.0, 5.0),
            Cluster("far", "F", 2, 60.0, 1.0))


@dataclass(frozen=True)
class KnownClusters:
    labels: tuple[str, ...]
    groups: tuple[str, ...]
    vectors: np.ndarray     # [point, DIM]


def centre(cluster: Cluster) -> np.ndarray:
    c = np.zeros(DIM)
    c[cluster.centre_axis] = cluster.centre_at
    return c


@lru_cache(maxsize=1)
def make() -> KnownClusters:
    """The 80 points, always the same ones (one generator, one seed, the clusters in order)."""
    rng = np.random.default_rng(SEED)
    blocks = [centre(c) + c.spread * rng.normal(size=(PER_CLUSTER, DIM)) for c in CLUSTERS]
    labels = tuple(f"{c.letter}{i + 1}" for c in CLUSTERS for i in range(PER_CLUSTER))
    groups = tuple(c.name for c in CLUSTERS for _ in range(PER_CLUSTER))
    vectors = np.vstack(blocks)
    vectors.setflags(write=False)
    return KnownClusters(labels, groups, vectors)


# ----------------------------------------------------------------------------- geometry, in any space

def group_spread(x, groups, group: str) -> float:
    """How spread out one group is: the root-mean-square distance of its points from their mean.
    The same measure in the original space and on a page, so the two can be compared as ratios."""
    z = np.asarray(x, float)[[g == group for g in groups]]
    return float(np.sqrt(((z - z.mean(0)) ** 2).sum(1).mean()))


def centre_distance(x, groups, a: str, b: str) -> float:
    """The distance between two groups' means."""
    x = np.asarray(x, float)
    mean = lambda g: x[[h == g for h in groups]].mean(0)
    return float(np.linalg.norm(mean(a) - mean(b)))


__all__ = ["NAME", "DESCRIPTION", "SEED", "DIM", "PER_CLUSTER", "Cluster", "CLUSTERS", "KnownClusters", "centre", "make", "group_spread",
           "centre_distance"]
