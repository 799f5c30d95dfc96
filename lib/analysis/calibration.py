"""Calibration and detection: is a model's confidence worth what it says, and does it find the mistakes?

Two questions, measured apart:

- calibration: among the answers given with confidence about p, is a share of about p right? The
  reliability diagram (`reliability`) bins the answers by confidence and sets each bin's accuracy
  beside its mean confidence; the expected calibration error (`expected_calibration_error`) is the
  gap between them, averaged over the bins weighted by how many answers each holds (Guo et al. 2017).
- detection: ranked by a score (say, one minus the top probability), do the mistakes come first?
  The ROC curve (`roc_curve`) traces the share of mistakes caught against the share of right answers
  flagged as the threshold moves; the area under it (`auroc`) is the chance that a random mistake
  scores above a random right answer (0.5: no better than a coin; 1: every mistake first).

Both depend on the regime the answers come from. On inputs like the training data, uncertainty is
mostly aleatoric (the next word really is open, and the model says so); on inputs unlike anything in
training (shifted, or impossible under the rules), it is epistemic (the model has no basis for an answer),
and nothing forces its confidence to show that. `by_regime` reports the two apart.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.errors import require


def _pairs(confidence, correct) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(confidence, dtype=float).ravel()
    y = np.asarray(correct).ravel()
    require(c.size > 0 and c.size == y.size, f"give one outcome per confidence: {c.size} confidences, {y.size} outcomes")
    require(bool(np.isfinite(c).all()) and bool(((c >= 0) & (c <= 1)).all()), "confidences must be numbers from 0 to 1")
    require(bool(np.isin(y, (0, 1, True, False)).all()), "outcomes must be true/false (or 1/0)")
    return c, y.astype(bool)


def _bins(n_bins) -> int:
    require(isinstance(n_bins, (int, np.integer)) and not isinstance(n_bins, bool) and n_bins >= 1,
            f"the number of bins is a whole number of at least 1, got {n_bins!r}")
    return int(n_bins)


@dataclass(frozen=True)
class Reliability:
    edges: np.ndarray         # [bins + 1] from 0 to 1
    count: np.ndarray         # [bins] answers in each bin
    confidence: np.ndarray    # [bins] mean confidence in each bin (nan where empty)
    accuracy: np.ndarray      # [bins] share right in each bin (nan where empty)

    @property
    def ece(self) -> float:
        full = self.count > 0
        w = self.count[full] / self.count.sum()
        return float((w * np.abs(self.accuracy[full] - self.confidence[full])).sum())


def wilson_interval(right, total, z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval (95% by default) for a share of `right` out of `total`, elementwise: an interval
    that stays inside [0, 1] and is honest for small bins (a bin of 3 answers all right is not "100%")."""
    k, n = np.asarray(right, dtype=float), np.asarray(total, dtype=float)
    require(bool(np.all(n > 0)) and bool(np.all((0 <= k) & (k <= n))), "a share needs 0 <= right <= total and total > 0")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def reliability(confidence, correct, n_bins: int = 10) -> Reliability:
    """The reliability diagram's data: answers binned by confidence into `n_bins` equal-width bins
    (a confidence of exactly 1 falls in the last), each bin's mean confidence and accuracy."""
    c, y = _pairs(confidence, correct)
    n_bins = _bins(n_bins)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.minimum(np.floor(c * n_bins).astype(int), n_bins - 1)   # bin b holds [b/n, (b+1)/n); 1 in the last
    count = np.bincount(which, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.bincount(which, weights=c, minlength=n_bins) / count
        acc = np.bincount(which, weights=y.astype(float), minlength=n_bins) / count
    return Reliability(edges, count, conf, acc)


def expected_calibration_error(confidence, correct, n_bins: int = 10) -> float:
    """Sum over bins of (share of answers in the bin) x |accuracy - mean confidence|: 0 when calibrated."""
    return reliability(confidence, correct, n_bins).ece


def auroc(scores, positives) -> float:
    """Area under the ROC curve: the chance that a random positive scores above a random negative, a tie
    counting half (the Mann-Whitney statistic; scikit-learn's `roc_auc_score` gives the same)."""
    s, y = _scored(scores, positives)
    order = np.argsort(s, kind="stable")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    # average ranks over ties (1-based)
    _, first, counts = np.unique(sorted_s, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2
    ranks[order] = np.repeat(avg, counts)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _scored(scores, positives) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(positives).ravel()
    require(s.size == y.size and s.size > 0, f"give one label per score: {s.size} scores, {y.size} labels")
    require(bool(np.isfinite(s).all()), "scores must be finite numbers")
    require(bool(np.isin(y, (0, 1, True, False)).all()), "labels must be true/false (or 1/0)")
    y = y.astype(bool)
    require(0 < y.sum() < y.size, "a ROC curve needs at least one positive and one negative")
    return s, y


def roc_curve(scores, positives) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(false-positive rate, true-positive rate, threshold): flagging every score at or above each
    threshold, from the highest down; the curve starts at (0, 0) with an infinite threshold."""
    s, y = _scored(scores, positives)
    thresholds = np.unique(s)[::-1]
    tp = np.array([(y & (s >= t)).sum() for t in thresholds])
    fp = np.array([(~y & (s >= t)).sum() for t in thresholds])
    return (np.concatenate([[0.0], fp / (~y).sum()]), np.concatenate([[0.0], tp / y.sum()]),
            np.concatenate([[np.inf], thresholds]))


def auroc_interval(scores, positives, level: float = 0.95, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """A bootstrap interval for the AUROC: the positives and the negatives each resampled with replacement
    (`draws` times, drawn with `seed`), the AUROC of every resample, and the central `level` of them. On a few
    items (six against ten) the interval is wide, and says how little one AUROC can show."""
    s, y = _scored(scores, positives)
    require(0 < level < 1, f"level must be between 0 and 1, got {level!r}")
    pos, neg = s[y], s[~y]
    require(len(pos) >= 2 and len(neg) >= 2, "an interval needs at least two positives and two negatives")
    rng = np.random.default_rng(seed)
    got = []
    for _ in range(int(draws)):
        p, n = rng.choice(pos, len(pos)), rng.choice(neg, len(neg))
        got.append(auroc(np.concatenate([p, n]), np.r_[np.ones(len(p), bool), np.zeros(len(n), bool)]))
    tail = 100 * (1 - level) / 2
    return float(np.percentile(got, tail)), float(np.percentile(got, 100 - tail))


def caught_in_top(scores, positives, share: float) -> int:
    """How many positives are among the `share` (0 to 1) of items with the highest scores: checking the
    least-sure 5% by hand catches this many mistakes."""
    s, y = _scored(scores, positives)
    require(0 < share <= 1, f"share must be above 0 and at most 1, got {share!r}")
    k = max(1, int(round(share * len(s))))
    return int(y[np.argsort(-s, kind="stable")[:k]].sum())


@dataclass(frozen=True)
class RegimeReport:
    name: str
    n: int
    ece: float                # top probability against being right
    auroc: float              # 1 - confidence as a detector of the wrong answers (nan without both kinds)
    wrong: int


def by_regime(regimes: dict[str, tuple[object, object]], n_bins: int = 10) -> list[RegimeReport]:
    """{regime: (confidences, right or not)} -> one report per regime, measured apart: calibration of the
    confidence, and how well low confidence finds the wrong answers."""
    out = []
    for name, (conf, right) in regimes.items():
        c, y = _pairs(conf, right)
        a = auroc(1 - c, ~y) if 0 < (~y).sum() < len(y) else float("nan")
        out.append(RegimeReport(name, len(c), expected_calibration_error(c, y, n_bins), a, int((~y).sum())))
    return out


def median_difference_interval(a, b, level: float = 0.95, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """A bootstrap interval for median(b) - median(a): each group resampled with replacement (`draws` times,
    drawn with `seed`), and the central `level` of the differences. Two groups of ten and twenty-four prompts
    give a wide one; a difference whose interval holds 0 is no difference the sample can show."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    require(0 < level < 1, f"level must be between 0 and 1, got {level!r}")
    require(len(a) >= 2 and len(b) >= 2, "an interval needs at least two values in each group")
    rng = np.random.default_rng(seed)
    got = [np.median(rng.choice(b, len(b))) - np.median(rng.choice(a, len(a))) for _ in range(int(draws))]
    tail = 100 * (1 - level) / 2
    return float(np.percentile(got, tail)), float(np.percentile(got, 100 - tail))
