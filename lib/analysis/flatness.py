"""A flat page as a detector: how often high entropy flags an impossible prompt, and how often a legal one.

The entropy of the page is the one warning the model itself gives. To know what it is worth, treat
it as a detector ("flag the prompt when the page carries more than so many bits") and count its hits
on prompts whose status the game's rules settle: random prompts the rules forbid, legal prompts
where the rules leave the next word open (right after `chiama`, any legal callee may come), and
legal prompts where the rules fix one word. A good detector of impossible prompts would flag the
first group and neither of the others; a flat page on a legal open choice is the model being right.
"""
from __future__ import annotations

from dataclasses import dataclass

from lib.analysis.signs import Signs, random_prompts, read_signs
from lib.content.prompt_sets import KINDS, prompt_set
from lib.errors import require


@dataclass(frozen=True)
class GroupCount:
    group: str          # which prompts
    flagged: int        # how many of them the detector flags
    total: int

    @property
    def share(self) -> float:
        return self.flagged / self.total if self.total else 0.0


@dataclass(frozen=True)
class DetectorReport:
    threshold_bits: float
    impossible: GroupCount       # random prompts the rules forbid
    legal_open: GroupCount       # legal prompts after which the rules allow several words
    legal_fixed: GroupCount      # legal prompts after which the rules allow exactly one word

    # No precision here on purpose: the share of flags that are right depends on how many prompts
    # of each group one happens to draw; the rate within each group does not.


def flags(signs: Signs, threshold_bits: float) -> bool:
    return signs.entropy_bits > threshold_bits


def labelled_signs(lm, n: int = 40, seed: int = 0, n_random: int = 500) -> dict[str, list[Signs]]:
    """The three groups' signs: impossible random prompts, legal open choices, legal fixed words."""
    fits = lm.model.cfg.n_ctx
    impossible = [s for s in (read_signs(lm, p) for p in random_prompts(lm, n_random, seed=seed)) if not s.on_distribution]
    open_ = [read_signs(lm, p.text) for p in prompt_set("callee-choice", n, seed, fits)]
    fixed = [read_signs(lm, p.text) for kind in KINDS for p in prompt_set(kind, n, seed, fits)]
    return {"impossible": impossible, "legal_open": open_, "legal_fixed": fixed}


def detector_report(groups: dict[str, list[Signs]], threshold_bits: float = 1.0) -> DetectorReport:
    """Count the flags at one threshold over the groups of `labelled_signs`."""
    require(threshold_bits >= 0, f"the threshold is a number of bits, 0 or more; got {threshold_bits!r}")
    counts = {name: GroupCount(name, sum(flags(s, threshold_bits) for s in signs), len(signs))
              for name, signs in groups.items()}
    return DetectorReport(threshold_bits, counts["impossible"], counts["legal_open"], counts["legal_fixed"])


__all__ = ["GroupCount", "DetectorReport", "flags", "labelled_signs", "detector_report"]
