"""Which head does each job of the calling game, on every shipped training run (the ablation chapter's
section "What another training run changes").

Every job's head is found by its measured role on each run, never by its name:
- the *copier*: the head whose zeroing loses the most next callers after a number (the turn ends
  `... chiama 7 <SEP>`, the rules want `7`), with its OV copying score over the ten players;
- the *reader*: the head whose write at the callee, patched from a legal clean run into its corrupted
  twin (a numbered player calls Paolo instead, the rules then want vice), is the best cell of the
  most Tarso prompts (`lib.analysis.patching`, denoising, Tarso against vice);
- the MLPs' share: how much of the same patched difference each MLP's best cell brings back;
- the reader switched off (mean-ablated, role-matched reference) over the Cefa and capo/vice sets, and
  the head whose mean ablation loses the most Cefa answers;
- the copy's route: the copier's write at `<SEP>` replaced by its role-matched mean, one path at a
  time (`lib.chapters.part1.ablation.paths.path_patch`);
- the layer-1 heads' copying scores (copy suppression below zero).

The prompt sets are drawn with one prompt-set seed (`SEED`), the same on every run, so that the runs
differ by their weights alone.
"""
from __future__ import annotations

import functools

import numpy as np

from lib.analysis.ablation import all_heads, head_name, reference_seed, reference_set
from lib.analysis.head_survey import Switch, ablation_survey
from lib.analysis.over_runs import each_run
from lib.analysis.patching import patch
from lib.chapters.part1.ablation.paths import copying_score, path_patch
from lib.content.corpora.calling_game import PLAYERS
from lib.content.corruptions import legal_corruptions
from lib.content.prompt_sets import epithet_sets, places, prompt_set
from lib.model.store import LoadedModel

SEED = 0            # the prompt-set seed of every run's measurement
N = 40              # prompts per labelled set (as the chapter's claims)
PATCHED = 20        # Tarso prompts patched per run (a patch is some 40 forward passes)
SUPPRESSES = -0.5   # a copying score below this: the head pushes down what it attends to


def _reader_patches(lm: LoadedModel, tarso, patched: int) -> tuple[str, int, int, np.ndarray, np.ndarray]:
    """(the reader, on how many prompts its cell at the callee is the best, prompts patched, the mean
    recovery of each head's write at the callee [layer, head], each MLP's best cell's mean recovery)."""
    best_at_callee, at_callee, mlps = [], [], []
    for p in tarso[:patched]:
        bad = legal_corruptions(p.text, 1, seed=SEED)
        if not bad:
            continue
        r = patch(lm, p.text, bad[0], "Tarso", "vice")
        callee = places(p)["the callee"]
        best = max(r.head_cells(), key=lambda c: c["recovered"])
        if best["position"] == callee:
            best_at_callee.append(best["head"])
        at_callee.append(r.heads[:, :, callee])
        mlps.append(r.mlps.max(-1))
    recovery = np.mean(at_callee, axis=0)
    # The head best most often; ties go to the larger mean recovery at the callee.
    reader = max(sorted(set(best_at_callee)),
                 key=lambda n: (best_at_callee.count(n), recovery[int(n[1]), int(n[3])]))
    return reader, best_at_callee.count(reader), len(at_callee), recovery, np.mean(mlps, axis=0)


def _head(lm: LoadedModel, name: str):
    return next(h for h in all_heads(lm.model) if head_name(h) == name)


def roles(lm: LoadedModel, n: int = N, patched: int = PATCHED) -> dict:
    """The jobs' heads on one run and what each measures (see the module's docstring), over labelled sets
    of `n` prompts each, the first `patched` Tarso prompts patched."""
    cfg = lm.model.cfg
    heads = all_heads(lm.model)
    ids = [lm.vocab.id(p) for p in PLAYERS]
    scores = {head_name(h): copying_score(lm.model, *h, ids) for h in heads}
    sets = dict(epithet_sets(n, SEED, max_tokens=cfg.n_ctx))
    numbers = tuple(p for p in PLAYERS if p not in ("Pietro", "Paolo"))
    after_number = prompt_set("next-caller", n, SEED, max_tokens=cfg.n_ctx, target=numbers)
    ref = reference_set(lm, seed=reference_seed(SEED))

    # The copier: found by what zeroing it loses.
    copy_off = ablation_survey(lm, after_number)
    copier = copy_off.most_damaging()
    layer0 = {n: s for n, s in scores.items() if int(n[1]) == 0}

    # The reader: found by patching.
    reader, reader_best, patched, recovery, mlps = _reader_patches(lm, sets["Tarso"], patched)
    switch = {reader: Switch(heads=(_head(lm, reader),))}
    cefa = ablation_survey(lm, sets["Cefa"], switch, kind="mean", reference=ref, seed=SEED)
    subs = [ablation_survey(lm, sets[e], switch, kind="mean", reference=ref, seed=SEED) for e in ("capo", "vice")]
    sub_n = sum(s.n for s in subs)
    # Who is calling, needed: the head whose mean ablation loses the most Cefa answers.
    cefa_all = ablation_survey(lm, sets["Cefa"], kind="mean", reference=ref, seed=SEED)
    cefa_head = cefa_all.most_damaging()

    # The copy's route.
    head = _head(lm, copier)
    value = ref.role_means[f"blocks.{head[0]}.attn.head_out"]["<SEP>"][head[1]]
    paths: dict[str, list[float]] = {}
    for p, rival in zip(after_number, copy_off.rivals):
        e = path_patch(lm, p.text, head, -1, value, p.target, rival)
        for k, v in {**e.paths, "total": e.total, "base": e.base_diff}.items():
            paths.setdefault(k, []).append(v)
    paths = {k: float(np.mean(v)) for k, v in paths.items()}
    last = cfg.n_layers - 1
    later = {n: s for n, s in scores.items() if int(n[1]) == last}
    return {
        "scores": scores,
        "copier": copier, "copier_layer": head[0], "copier_score": scores[copier],
        "copier_top_score": int(copier == max(layer0, key=layer0.get)),
        "copier_lost": copy_off.lost(copier), "copier_held": copy_off.held(),
        "reader": reader, "reader_layer": int(reader[1]), "reader_best": reader_best, "patched": patched,
        "reader_recovery": float(recovery[int(reader[1]), int(reader[3])]),
        "second_recovery": float(np.sort(recovery, axis=None)[-2]),
        "recovery": recovery.tolist(), "same_head": int(reader == copier),
        "mlp0": float(mlps[0]), "mlp1": float(mlps[1]),
        "cefa_lost": cefa.lost(reader), "cefa_held": cefa.held(), "cefa_drop": cefa.drop(reader),
        "cefa_base": cefa.mean_diff(), "cefa_head": cefa_head, "cefa_head_lost": cefa_all.lost(cefa_head),
        "sub_lost": sum(s.lost(reader) for s in subs), "sub_held": sum(s.held() for s in subs),
        "sub_drop": sum(s.drop(reader) * s.n for s in subs) / sub_n,
        "sub_base": sum(s.mean_diff() * s.n for s in subs) / sub_n,
        "path_base": paths["base"], "path_total": paths["total"], "path_direct": paths["direct"],
        "path_mlp0": paths["MLP 0"], "path_mlp1": paths[f"MLP {last}"], "path_attn1": -paths[f"attention {last}"],
        "suppressors": sum(s < SUPPRESSES for s in later.values()), "later_heads": len(later),
    }


@functools.lru_cache(maxsize=1)
def roles_over_runs() -> dict[str, dict]:
    """Per run of the calling game (the run in use first): `roles`."""
    return each_run("calling-game", roles, keep="ablation-roles")
