"""The claims of the chapter `chapters/part2/what-an-embedding-is.md`, each with its measurement."""
from __future__ import annotations

import functools
import itertools

import numpy as np
import torch

import lib
from lib.analysis.maps import cosine_matrix, nearest, role_cohesion
from lib.claims.registry import EVERY_RUN, claim
from lib.content.corpora.calling_game import ROLES
from lib.model.store import shipped_runs
from lib.model.transformer import Transformer


# Two models' geometries are compared beside the spread of retraining each on other seeds: the run in
# use (the shipped one, training seed 0, unless `lib.claims.runs` measures another) and the model's
# other shipped runs (data/runs/NAME/seed-S).
ROLE_SHUFFLES = 200


@functools.lru_cache(maxsize=1)
def embedding_runs() -> dict[str, list[np.ndarray]]:
    """Each model's embedding tables: the run in use first, then its other shipped runs, by training seed."""
    out = {}
    for name in ("calling-game", "zero-layer"):
        first = lib.load(name)
        others = [lib.load(name, folder) for folder in shipped_runs(name)]
        out[name] = [first.model.W_E.detach().double().numpy()] + \
                    [lm.model.W_E.detach().double().numpy() for lm in others
                     if lm.meta["sha256"] != first.meta["sha256"]][:len(others) - 1]
    return out


def _roles():
    tokens = lib.load("calling-game").vocab.tokens
    return tokens, [ROLES[t] for t in tokens]


@claim("what-an-embedding-is.roles-emerge", "what-an-embedding-is",
       "Before training (the table drawn at random), rows of the same role have an average cosine of "
       "{init_same:.3f} and rows of different roles {init_other:.3f}. After training, over {runs:.0f} runs of the "
       "calling-game model (the shipped one and {retrained:.0f} retrained on other seeds): {same_lo:.2f} to "
       "{same_hi:.2f} against {other_lo:.2f} to {other_hi:.2f}. The same trained rows with their roles shuffled "
       "give a gap of at most {shuffled_hi:.2f} in {shuffles:.0f} shuffles, against the real {gap:.2f}",
       holds=lambda x: abs(x["init_same"] - x["init_other"]) < 0.05 and x["gap_lo"] > x["shuffled_hi"],
       note="random initial table (seeded): no role structure; every trained run: same-role minus other-role "
            "cosine above every one of 200 role shuffles",
       scope=EVERY_RUN, models=('calling-game', 'zero-layer'))
def _(seed):
    tokens, roles = _roles()
    torch.manual_seed(seed)
    initial = Transformer(lib.load("calling-game").model.cfg).W_E.detach().double().numpy()
    init_same, init_other = role_cohesion(initial, roles, skip=("special",))
    runs = embedding_runs()["calling-game"]
    pairs = [role_cohesion(E, roles, skip=("special",)) for E in runs]
    rng = np.random.default_rng(seed)
    keep = [r for r in roles if r != "special"]
    shuffled = []
    for _ in range(ROLE_SHUFFLES):
        perm = iter(rng.permutation(keep))
        labels = [r if r == "special" else next(perm) for r in roles]
        same, other = role_cohesion(runs[0], labels, skip=("special",))
        shuffled.append(same - other)
    return {"init_same": init_same, "init_other": init_other, "runs": len(runs), "retrained": len(runs) - 1,
            "same_lo": min(p[0] for p in pairs), "same_hi": max(p[0] for p in pairs),
            "other_lo": min(p[1] for p in pairs), "other_hi": max(p[1] for p in pairs),
            "gap": pairs[0][0] - pairs[0][1], "gap_lo": min(p[0] - p[1] for p in pairs),
            "shuffled_hi": float(max(shuffled)), "shuffles": ROLE_SHUFFLES}


@functools.lru_cache(maxsize=1)
def _geometry_numbers():
    tokens, roles = _roles()
    runs = embedding_runs()
    iu = np.triu_indices(len(tokens), 1)
    sims = {k: [cosine_matrix(E)[iu] for E in v] for k, v in runs.items()}
    r = lambda a, b: float(np.corrcoef(a, b)[0, 1])
    cg_cg = [r(a, b) for a, b in itertools.combinations(sims["calling-game"], 2)]
    zl_zl = [r(a, b) for a, b in itertools.combinations(sims["zero-layer"], 2)]
    cross = [r(a, b) for a in sims["calling-game"] for b in sims["zero-layer"]]
    cg = [role_cohesion(E, roles, skip=("special",)) for E in runs["calling-game"]]
    zl = [role_cohesion(E, roles, skip=("special",)) for E in runs["zero-layer"]]
    paolo_cg = [nearest(E, tokens, "Paolo", 1)[0][0] for E in runs["calling-game"]]
    paolo_zl = [nearest(E, tokens, "Paolo", 1)[0][0] for E in runs["zero-layer"]]
    return {"n_cg": len(runs["calling-game"]), "n_zl": len(runs["zero-layer"]),
            "cg_lo": min(cg_cg), "cg_hi": max(cg_cg), "zl_lo": min(zl_zl), "zl_hi": max(zl_zl),
            "cross_lo": min(cross), "cross_hi": max(cross), "cross_shipped": cross[0],
            "zl_same_lo": min(p[0] for p in zl), "zl_same_hi": max(p[0] for p in zl),
            "zl_other_lo": min(p[1] for p in zl), "zl_other_hi": max(p[1] for p in zl),
            "cg_other_hi": max(p[1] for p in cg),
            "paolo_cg": ", ".join(paolo_cg), "paolo_cg_numbers": sum(w.isdigit() for w in paolo_cg),
            "paolo_zl": " / ".join(dict.fromkeys(paolo_zl)), "paolo_zl_same": paolo_zl.count(paolo_zl[0])}


claim("what-an-embedding-is.geometry-differs", "what-an-embedding-is",
      "Across all pairs of tokens, the calling-game model's similarities and the zero-layer model's correlate "
      "{cross_shipped:.2f} for the shipped runs and {cross_lo:.2f} to {cross_hi:.2f} over every pairing of "
      "{n_cg:.0f} calling-game and {n_zl:.0f} zero-layer runs (retrained on other seeds), while two runs of the "
      "same model correlate {cg_lo:.2f} to {cg_hi:.2f} (calling-game) and {zl_lo:.2f} to {zl_hi:.2f} (zero-layer)",
      holds=lambda x: x["cross_hi"] < min(x["cg_lo"], x["zl_lo"]), seeded=False,
      note="the two architectures' similarity tables agree less than any two training runs of one of them",
      scope=EVERY_RUN, models=('calling-game', 'zero-layer'))(
    lambda seed: _geometry_numbers())

claim("what-an-embedding-is.zero-layer-packs", "what-an-embedding-is",
      "The zero-layer model packs everything closer together: same-role {zl_same_lo:.2f} to {zl_same_hi:.2f} and "
      "different-role {zl_other_lo:.2f} to {zl_other_hi:.2f} over its {n_zl:.0f} runs, where no calling-game run "
      "exceeds {cg_other_hi:.2f} between different roles. Paolo's nearest row is {paolo_zl} in {paolo_zl_same:.0f} "
      "of the {n_zl:.0f} zero-layer runs; in the calling-game runs it is a numbered player in "
      "{paolo_cg_numbers:.0f} of {n_cg:.0f}, which one changing with the training seed ({paolo_cg})",
      holds=lambda x: (x["zl_other_lo"] > x["cg_other_hi"] and x["paolo_zl_same"] == x["n_zl"]
                       and x["paolo_cg_numbers"] == x["n_cg"]), seeded=False,
      note="zero-layer different-role cosines exceed every calling-game run's; Paolo's nearest row is the same "
           "in every zero-layer run and a numbered player in every calling-game run",
      scope=EVERY_RUN, models=('calling-game', 'zero-layer'))(
    lambda seed: _geometry_numbers())
