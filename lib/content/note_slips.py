"""Where the source note's printed arithmetic and the computation part ways, step by step.

Note 1 works one head on "the cat sat" by hand and prints every intermediate matrix. Each printed
step can be checked two ways: against the exact computation from the note's own inputs, and
against what the note's own previous printed step gives. The second check separates a rounding
that carries forward (harmless) from a step that does not follow from the one before (a slip).
`cat_sat_steps` does both for every step. `ten_column_readout` checks the note's two-head
read-out, whose ten printed probabilities add up to one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.content.worked_examples import CAT_SAT_W_K, CAT_SAT_W_O, CAT_SAT_W_Q, CAT_SAT_W_V, NOTE_CAT_SAT, cat_sat
from lib.model.readout import softmax

# The note prints two or three decimals; a gap larger than this is more than rounding.
ROUNDING = 0.01

# What note 1 prints for the two-head model's read-out: the first ten vocabulary columns only.
NOTE_TEN_LOGITS = (-0.48, 0.27, 2.01, -0.91, 0.35, -1.04, -1.80, 1.03, 0.60, 0.36)
NOTE_TEN_PROBS = (0.04, 0.07, 0.42, 0.02, 0.08, 0.02, 0.01, 0.16, 0.10, 0.08)


@dataclass(frozen=True)
class StepCheck:
    step: str
    printed: np.ndarray      # what the note prints
    computed: np.ndarray     # the exact computation from the note's inputs
    from_note: np.ndarray    # what the note's own previous printed step gives

    @property
    def off_exact(self) -> float:
        """Largest gap between the printed step and the exact computation."""
        return _gap(self.printed, self.computed)

    @property
    def off_own(self) -> float:
        """Largest gap between the printed step and the note's own previous step carried forward."""
        return _gap(self.printed, self.from_note)

    @property
    def follows(self) -> bool:
        """Does the printed step follow from the note's own previous step, up to rounding?"""
        return self.off_own <= ROUNDING


def _gap(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = np.isfinite(a) & np.isfinite(b)
    return float(np.abs(a[both] - b[both]).max())


def _masked_softmax(scaled: np.ndarray) -> np.ndarray:
    """Row i: a softmax over the scores of positions 0..i; the masked future gets exactly zero."""
    out = np.zeros_like(scaled)
    for i in range(len(scaled)):
        out[i, : i + 1] = softmax(scaled[i, : i + 1]).numpy()
    return out


def cat_sat_steps() -> list[StepCheck]:
    """Every printed step of the note's one-head example, with the two checks."""
    ex = cat_sat()
    _, cache = ex.model.run_with_cache(ex.tokens)
    X = cache["embed"].double().numpy()
    note = {k: np.asarray(v, dtype=float) for k, v in NOTE_CAT_SAT.items()}
    d_head = ex.model.cfg.d_head
    exact = {name: cache[f"blocks.0.attn.{key}"][:, 0].double().numpy() for name, key in (("Q", "q"), ("K", "k"), ("V", "v"))}
    exact["QK"] = cache["blocks.0.attn.qk"][0].double().numpy()
    exact["scaled"] = exact["QK"] / np.sqrt(d_head)
    exact["pattern"] = cache["blocks.0.attn.pattern"][0].double().numpy()
    exact["z"] = cache["blocks.0.attn.z"][:, 0].double().numpy()
    exact["h_last"] = cache["resid_final"][-1].double().numpy()
    own = {
        "Q": X @ np.asarray(CAT_SAT_W_Q), "K": X @ np.asarray(CAT_SAT_W_K), "V": X @ np.asarray(CAT_SAT_W_V),
        "QK": note["Q"] @ note["K"].T,
        "scaled": note["QK"] / np.sqrt(d_head),
        "pattern": _masked_softmax(note["scaled"]),
        "z": note["pattern"] @ note["V"],
        "h_last": X[-1] + note["z"][-1] @ np.asarray(CAT_SAT_W_O),
    }
    # The scaled scores are printed before the mask; compare them on the cells the mask keeps.
    lower = np.tril(np.ones((3, 3), dtype=bool))
    for table in (exact, own):
        table["scaled"] = np.where(lower, table["scaled"], np.nan)
    printed_scaled = np.where(lower, note["scaled"], np.nan)
    return [StepCheck(step, printed_scaled if step == "scaled" else note[step], exact[step], own[step])
            for step in ("Q", "K", "V", "QK", "scaled", "pattern", "z", "h_last")]


@dataclass(frozen=True)
class TenColumns:
    printed_sum: float            # the ten printed probabilities added up
    softmax_of_ten: np.ndarray    # a softmax taken over the ten printed logits alone
    gap: float                    # largest gap between that and the printed probabilities


def ten_column_readout() -> TenColumns:
    """The note's read-out shows ten of twenty columns whose probabilities add up to one: they
    are a softmax over those ten logits only, as this recomputation shows."""
    ten = softmax(np.asarray(NOTE_TEN_LOGITS)).numpy()
    return TenColumns(float(sum(NOTE_TEN_PROBS)), ten, _gap(ten, NOTE_TEN_PROBS))
