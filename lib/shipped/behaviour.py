"""What each shipped model does, measured, and the targets it must meet.

`measure(name, lm)` computes the figures the chapters rely on; they are stored in the model's
metadata when it is trained, and `check(name)` recomputes them from the shipped weights and
tests them against the targets (and the checksum), so a chapter can never quote a model that
no longer behaves as described.
"""
from __future__ import annotations

import functools
import math

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from lib.analysis.nulls import MIN_SHUFFLES, label_shuffles
from lib.content.corpora import calling_game, hand_wired
from lib.content.corpora.calling_game import check_round
from lib.content.prompts import CONFIDENT, LEGAL_OPENING, UNCERTAIN
from lib.model.generate import sample_many
from lib.analysis.lens import direct_logit_attribution, group_by_block, logit_lens
from lib.analysis.maps import analogy, best_probe, concept_plane, direction, pca
from lib.model.readout import next_distribution
from lib.shipped.presets import get_preset
from lib.model.store import LoadedModel, load, model_folder, sha256, WEIGHTS
from lib.analysis.bigrams import bigram_table, compare
from lib.analysis.corpus_fit import expected_loss, fit_summary
from lib.analysis import induction
from lib.analysis.induction import FORMED, FORMED_PREVIOUS

# The epithets' roles: which player they name (x axis: Paolo +, Pietro -) and their kind
# (y axis: peer +, subordinate -).
EPITHET_CORNERS = {"Tarso": (+1, +1), "Cefa": (-1, +1), "vice": (+1, -1), "capo": (-1, -1)}
PROBE_R2_THRESHOLD = 0.8
# The hand-wired model must come this close to its corpus's entropy (nats per token) before the
# tests set in advance say anything about dictated meaning: its recipe trains until it does.
HAND_WIRED_MAX_GAP = get_preset("hand-wired").train.floor_gap
# Rounds sampled at temperature 1 to measure how often the model plays by the rules.
SAMPLED_ROUNDS = 1000


def embedding_vectors(lm: LoadedModel) -> dict[str, np.ndarray]:
    E = lm.model.W_E.detach().numpy().astype(float)
    return {t: E[i] for i, t in enumerate(lm.vocab.tokens)}


def epithet_plane(lm: LoadedModel):
    """The concept plane (Paolo - Pietro, peer epithets - subordinate epithets) of the embedding."""
    vecs = embedding_vectors(lm)
    d1 = direction(vecs, ["Paolo"], ["Pietro"])
    d2 = direction(vecs, ["Tarso", "Cefa"], ["capo", "vice"])
    words = list(lm.vocab.tokens)
    plane = concept_plane(np.array([vecs[w] for w in words]), d1, d2)
    coords = {w: plane.coords[i] for i, w in enumerate(words)}
    centre = np.mean([coords[w] for w in EPITHET_CORNERS], axis=0)
    return plane, {w: coords[w] - centre for w in EPITHET_CORNERS}


def calling_game_figures(lm: LoadedModel) -> dict:
    conf = next_distribution(lm, CONFIDENT)
    unc = next_distribution(lm, UNCERTAIN)
    ids = lm.encode(CONFIDENT)
    tarso = lm.vocab.id("Tarso")
    lens = []
    for stage in logit_lens(lm.model, ids):
        order = torch.argsort(stage.probs, descending=True)
        lens.append({"stage": stage.name, "top": lm.vocab.tokens[int(order[0])],
                     "tarso_prob": float(stage.probs[tarso]),
                     "tarso_rank": int((order == tarso).nonzero()[0, 0]) + 1})
    _, cache = lm.model.run_with_cache(ids)
    dla = group_by_block(direct_logit_attribution(lm.model, cache))
    # The push toward Tarso, measured against the average token, so constant shifts cancel.
    push = {k: float(v[tarso] - v.mean()) for k, v in dla.items()}
    plane, corners = epithet_plane(lm)
    bos, eos = lm.vocab.id("<BOS>"), lm.vocab.id("<EOS>")
    samples = sample_many(lm.model, [bos], SAMPLED_ROUNDS, lm.model.cfg.n_ctx - 1, seed=0, stop=eos)
    valid = sum(check_round(lm.vocab.decode(s))[0] for s in samples)
    return {
        "confident": {"prompt": CONFIDENT, "tarso_prob": conf["Tarso"],
                      "top": max(conf, key=conf.get)},
        "uncertain": {"prompt": UNCERTAIN, "legal_probs": {p: unc[p] for p in LEGAL_OPENING},
                      "legal_mass": sum(unc[p] for p in LEGAL_OPENING)},
        "lens": lens,
        "tarso_push": push,
        "largest_push": max(push, key=push.get),
        "epithet_plane": {"corners": {w: [float(c[0]), float(c[1])] for w, c in corners.items()},
                          "spread_captured": plane.spread, "raw_overlap": plane.raw_overlap},
        "sampled_rounds_valid": valid / SAMPLED_ROUNDS,
    }


def hand_wired_figures(lm: LoadedModel) -> dict:
    words = list(hand_wired.WORDS)
    vecs = embedding_vectors(lm)
    learned = np.array([vecs[w] for w in words])
    designed = hand_wired.designed_matrix(words)
    pd, pl = pca(designed), pca(learned)
    probes = {}
    for k, axis in enumerate(hand_wired.AXES):
        r = best_probe(learned, designed[:, k])
        probes[axis] = {"r2": r.r2, "accuracy": r.accuracy, "alpha": r.alpha}
    content = {w: vecs[w] for w in words}
    designed_vecs = {w: designed[i] for i, w in enumerate(words)}
    analogies = []
    for a, b, c, want in hand_wired.ANALOGIES:
        got = analogy(content, a, b, c)
        table = analogy(designed_vecs, a, b, c)
        analogies.append({"a": a, "b": b, "c": c, "expected": want, "best": got.best,
                          "best_cosine": got.ranked[0][1], "expected_rank": got.rank_of(want),
                          "top5": [w for w, _ in got.ranked[:5]], "designed_best": table.best})
    kmw = analogy(content, "king", "man", "woman")
    kmw_all = analogy(content, "king", "man", "woman", exclude_inputs=False)
    return {
        "corpus_fit": fit_summary(lm),
        "pca_top2_designed": pd.cumulative(2),
        "pca_top2_learned": pl.cumulative(2),
        "pca_top6_learned": pl.cumulative(6),
        "probes": probes,
        "probes_read_back": sum(p["r2"] > PROBE_R2_THRESHOLD for p in probes.values()),
        "analogies": analogies,
        "analogies_recovered": sum(a["best"] == a["expected"] for a in analogies),
        "king_man_woman": {"excluded": [[w, c] for w, c in kmw.ranked[:5]],
                           "not_excluded": [[w, c] for w, c in kmw_all.ranked[:5]]},
    }



@functools.lru_cache(maxsize=1)
def _hand_wired_rows():
    lm = load("hand-wired")
    words = list(hand_wired.WORDS)
    vecs = embedding_vectors(lm)
    learned = np.array([vecs[w] for w in words])
    designed = hand_wired.designed_matrix(words)
    return hand_wired_figures(lm), learned, designed


@functools.lru_cache(maxsize=None)
def axes_read_back(seed: int) -> dict:
    """Which of the hand-wired model's designed axes a straight line reads back from its rows, and
    gender among the words the corpus calls male or female, beside the same probe with their genders
    shuffled (`MIN_SHUFFLES` shuffles drawn with `seed`: ten put the null's maximum well below where it lies): the numbers the chapters state about the axes."""
    f, learned, designed = _hand_wired_rows()
    read = [a for a in hand_wired.AXES if f["probes"][a]["r2"] > PROBE_R2_THRESHOLD]
    named = designed[:, 0] != 0
    gender_named = best_probe(learned[named], designed[named, 0])
    # the same probe with the genders shuffled among the same words: what a line finds in no structure
    shuffled = label_shuffles(lambda y: best_probe(learned[named], y).r2, designed[named, 0], MIN_SHUFFLES, seed)
    return {"read": len(read), "axes": len(hand_wired.AXES), "read_names": ", ".join(read),
            "missed_names": " and ".join(a for a in hand_wired.AXES if a not in read),
            "threshold": PROBE_R2_THRESHOLD, "gender_all": f["probes"]["gender"]["r2"],
            "gender_named": gender_named.r2, "n_named": int(named.sum()), "n_words": len(named),
            "shuffled_hi": float(max(shuffled)), "shuffles": len(shuffled), "analogies": f["analogies_recovered"],
            "n_analogies": len(f["analogies"])}

def zero_layer_figures(lm: LoadedModel) -> dict:
    """How close the zero-layer model comes to the corpus's bigram table."""
    _, counts, probs = bigram_table()
    return {"bigram": compare(lm, probs, counts)}


# The sequences `check` measures the induction model on (repeats of every period, drawn with this seed).
INDUCTION_SEED = 0
# The loss on the second copy must stay below this on `check`'s sequences (training stops at 0.05 nats on
# the trainer's own held-out sequences; another draw of sequences may sit slightly above it).
INDUCTION_MAX_LOSS = 0.1


def induction_figures(lm: LoadedModel) -> dict:
    """The induction model's circuit: its two heads by role, their scores, and the copy losses."""
    batches = induction.sequences(INDUCTION_SEED)
    scores = induction.pattern_scores(lm.model, batches)
    r = induction.roles(scores)
    loss = induction.in_context_loss(lm.model, batches)
    return {"previous_head": list(r.previous), "induction_head": list(r.induction),
            "previous_score": r.previous_score, "induction_score": r.induction_score,
            "first_copy_loss": loss["first_copy_loss"], "second_copy_loss": loss["second_copy_loss"],
            "copy_accuracy": induction.copy_accuracy(lm.model, batches)}


def _targets_induction(fig: dict) -> list[tuple[bool, str]]:
    """Every run of the recipe reaches the floor on the second copy."""
    return [(fig["second_copy_loss"] <= INDUCTION_MAX_LOSS,
             f"loss on the second copy {fig['second_copy_loss']:.3f} nats, on the first {fig['first_copy_loss']:.3f} "
             f"(target: second <= {INDUCTION_MAX_LOSS})")]


def _targets_induction_shipped(fig: dict) -> list[tuple[bool, str]]:
    """The pages' run also has the two heads the chapter shows first. (Not every run does: the induction
    chapter counts, over the panel, the runs whose induction heads read a previous-token head.)"""
    return [
        (fig["previous_score"] >= FORMED_PREVIOUS, f"previous-token head L{fig['previous_head'][0]}H{fig['previous_head'][1]}: "
                                                   f"score {fig['previous_score']:.2f} (target >= {FORMED_PREVIOUS})"),
        (fig["induction_score"] >= FORMED, f"induction head L{fig['induction_head'][0]}H{fig['induction_head'][1]}: "
                                           f"score {fig['induction_score']:.2f} (target >= {FORMED})"),
    ]


def measure(name: str, lm: LoadedModel) -> dict:
    return BEHAVIOUR[name].figures(lm) if name in BEHAVIOUR else {}


@dataclass
class CheckResult:
    name: str
    passed: bool
    lines: list[str]


def _targets_calling_game(fig: dict) -> list[tuple[bool, str]]:
    """What every run of the recipe meets; the figures on which its runs differ are reported, each with the
    page that counts it over the panel, and are targets for the pages' run only (`_targets_calling_game_shipped`)."""
    out = []
    p = fig["confident"]["tarso_prob"]
    out.append((p >= 0.99, f"P(Tarso | {CONFIDENT}) = {p:.4f} (target >= 0.99)"))
    lo, hi = _legal_range(fig)
    out.append((True, f"after {UNCERTAIN}, the 9 legal callees range {lo:.3f} to {hi:.3f} (no target for the "
                      f"recipe: its runs differ)"))
    first = _lens_after_block_0(fig)
    out.append((True, f"logit lens after block 0: top-1 {first['top']!r}, P(Tarso) = {first['tarso_prob']:.3f} "
                      f"(no target for the recipe: its runs differ)"))
    last = fig["lens"][-1]
    out.append((last["top"] == "Tarso" and last["tarso_prob"] >= 0.99,
                f"logit lens after the last block: P(Tarso) = {last['tarso_prob']:.4f} (target >= 0.99)"))
    v = fig["sampled_rounds_valid"]
    # a figure, not a target: the runs of the recipe differ here, and the results page counts them over the panel
    # (results-page.broken-rounds)
    out.append((True, f"sampled rounds that obey the grammar: {v:.1%} of {SAMPLED_ROUNDS} (no target for the "
                      f"recipe: its runs differ, and the results page counts them)"))
    return out


# Every run of the recipe reaches the targets above; the shipped run (training seed 0, the one the
# pages draw) also these, which other seeds do not all reach: one run in a few puts an epithet out of its
# corner, and the share of sampled rounds that obey the grammar differs widely from run to run.


def _legal_range(fig: dict) -> tuple[float, float]:
    legal = fig["uncertain"]["legal_probs"]
    return min(legal.values()), max(legal.values())


def _lens_after_block_0(fig: dict) -> dict:
    stages = {s["stage"]: s for s in fig["lens"]}
    return stages.get("blocks.0.mlp") or stages.get("blocks.0.attn")


def _targets_calling_game_shipped(fig: dict) -> list[tuple[bool, str]]:
    lo, hi = _legal_range(fig)
    first = _lens_after_block_0(fig)
    corners = fig["epithet_plane"]["corners"]
    ok = all(np.sign(corners[w][0]) == sx and np.sign(corners[w][1]) == sy
             for w, (sx, sy) in EPITHET_CORNERS.items())
    where = ", ".join(f"{w} ({c[0]:+.2f}, {c[1]:+.2f})" for w, c in corners.items())
    v = fig["sampled_rounds_valid"]
    return [(ok, f"epithets on the concept plane: {where} (target: each in its role's corner)"),
            (v >= 0.75, f"sampled rounds that obey the grammar: {v:.1%} (target for the pages' run: >= 75%)"),
            (0.08 <= lo and hi <= 0.14, f"after {UNCERTAIN}, the 9 legal callees range {lo:.3f} to {hi:.3f} "
                                        f"(target for the pages' run: 0.08 to 0.14)"),
            (first["top"] == "Tarso", f"logit lens after block 0: top-1 {first['top']!r} (target for the pages' "
                                      f"run: Tarso top-1)")]


def _targets_hand_wired(fig: dict) -> list[tuple[bool, str]]:
    """A run of the recipe may stop short of its corpus's floor (it trains for a fixed most of steps): that is
    reported, and the chapter's claims count such a run as no evidence; the pages' run must reach it."""
    fit = fig["corpus_fit"]
    reached = fit["gap"] <= HAND_WIRED_MAX_GAP
    out = [(True, f"expected loss {fit['expected_loss']:.4f} nats per token, {fit['gap']:.4f} above the corpus's "
                  f"entropy {fit['entropy_floor']:.4f} (" + (f"within {HAND_WIRED_MAX_GAP}: trained to its floor)"
                                                             if reached else f"more than {HAND_WIRED_MAX_GAP}: "
                                                             "not trained to its floor, so no evidence either way "
                                                             "for the chapter's claims)"))]
    for kind, k in fit["by_kind"].items():
        out.append((True, f"{kind} prefixes learned: {k['learned']} of {k['prefixes']} (worst total variation {k['max_tv']:.3f})"))
    return out


def _targets_hand_wired_shipped(fig: dict) -> list[tuple[bool, str]]:
    gap = fig["corpus_fit"]["gap"]
    return [(gap <= HAND_WIRED_MAX_GAP, f"{gap:.4f} nats above the corpus's entropy (target for the pages' run: "
                                        f"within {HAND_WIRED_MAX_GAP})")]


# How close a recorded figure must come out again. Figures from a float32 forward pass differ across
# processors by up to about 6e-7 (measured between AVX2 and AVX-512 paths: 4e-8; a float32 pass is
# within 3e-7 of a float64 one); a retrained model moves them by more than 1e-3.
FIGURE_TOLERANCE = {"rel_tol": 1e-5, "abs_tol": 1e-6}


def _targets_recorded(fig: dict, recorded: dict) -> list[tuple[bool, str]]:
    """For models without fixed targets: the shipped weights still give the recorded figures."""
    def flat(d, prefix=""):
        if isinstance(d, dict):
            for k, v in d.items():
                yield from flat(v, f"{prefix}{k}.")
        elif isinstance(d, list):
            for i, v in enumerate(d):
                yield from flat(v, f"{prefix}{i}.")
        else:
            yield prefix[:-1], d

    now, then = dict(flat(fig)), dict(flat(recorded))
    # Counts and words exactly; numbers to FIGURE_TOLERANCE, since they may be recomputed on another
    # processor than the one that recorded them.
    bad = [k for k in then if k not in now
           or (isinstance(then[k], float) and not math.isclose(now[k], then[k], **FIGURE_TOLERANCE))
           or (not isinstance(then[k], float) and now[k] != then[k])]
    return [(not bad, f"{len(then)} recorded figures reproduced" if not bad
             else f"figures that changed: {', '.join(bad[:5])}")]


@dataclass(frozen=True)
class Behaviour:
    """How a shipped model is measured (`python -m lib check`, and meta.json's "behaviour" at training)."""
    figures: Callable[[LoadedModel], dict]                       # the figures it is measured by
    targets: Callable[[dict], list[tuple[bool, str]]] | None = None   # what every run of the recipe meets
    recorded: bool = True    # the shipped weights must also give again the figures recorded in meta.json
    shipped_targets: Callable[[dict], list[tuple[bool, str]]] | None = None   # and the pages' run, besides
    # For a recipe that trains to its corpus's floor (TrainConfig.floor_gap): the model's expected loss
    # above the floor, nats per token.
    gap_to_floor: Callable[[LoadedModel], float] | None = None


# One entry per shipped model, beside its recipe's entry in presets.PRESETS.
BEHAVIOUR: dict[str, Behaviour] = {
    "calling-game": Behaviour(calling_game_figures, _targets_calling_game, recorded=False,
                              shipped_targets=_targets_calling_game_shipped),
    "hand-wired": Behaviour(hand_wired_figures, _targets_hand_wired, shipped_targets=_targets_hand_wired_shipped,
                            gap_to_floor=lambda lm: expected_loss(lm) - hand_wired.entropy_floor()),
    "zero-layer": Behaviour(zero_layer_figures),
    "induction": Behaviour(induction_figures, _targets_induction, shipped_targets=_targets_induction_shipped),
}


def check(name: str, folder: Path | None = None) -> CheckResult:
    """The shipped run of `name` (or the run in `folder`) against its checksum and targets: every
    run meets the recipe's targets, the pages' run its own as well."""
    shipped = model_folder(name)
    folder = Path(folder) if folder is not None else shipped
    lm = load(name, folder)
    lines: list[tuple[bool, str]] = []
    digest = sha256(folder / WEIGHTS)
    lines.append((digest == lm.meta["sha256"], f"checksum {digest[:16]}... "
                  + ("matches meta.json" if digest == lm.meta["sha256"] else "does NOT match meta.json")))
    fig = measure(name, lm)
    behaviour = BEHAVIOUR.get(name)
    if behaviour and behaviour.targets:
        lines += behaviour.targets(fig)
    if behaviour and behaviour.shipped_targets and folder.resolve() == shipped.resolve():
        lines += behaviour.shipped_targets(fig)
    if not behaviour or behaviour.recorded:
        lines += _targets_recorded(fig, lm.meta.get("behaviour", {}))
    return CheckResult(name, all(ok for ok, _ in lines),
                       [("ok    " if ok else "FAIL  ") + text for ok, text in lines])
