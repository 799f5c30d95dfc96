"""The claims of the chapter `chapters/part2/what-an-embedding-is.md`, each with its measurement."""
from __future__ import annotations

import functools

import numpy as np
import torch

import lib
from lib.analysis.maps import cosine_matrix, nearest, role_cohesion
from lib.claims.registry import EVERY_RUN, claim
from lib.claims.words import Min, Q
from lib.content.corpora.calling_game import ROLES
from lib.model.store import shipped_runs
from lib.model.transformer import Transformer


# A model's geometry on one run (the run in use: the pages' run, or each run of the panel in a process of its
# own) is compared with the spread of retraining: the model's other shipped runs (data/runs/NAME/seed-S).
ROLE_SHUFFLES = 200
MODELS = ("calling-game", "zero-layer")


def table(name: str) -> np.ndarray:
    """The embedding table of the run in use of `name`."""
    return lib.load(name).model.W_E.detach().double().numpy()


@functools.lru_cache(maxsize=None)
def other_tables(name: str) -> list[np.ndarray]:
    """The embedding tables of every other shipped run of `name` (the run in use left out, by its weights)."""
    mine = lib.load(name).meta["sha256"]
    out = []
    for folder in shipped_runs(name):
        lm = lib.load(name, folder)
        if lm.meta["sha256"] != mine:
            out.append(lm.model.W_E.detach().double().numpy())
    return out


def _roles():
    tokens = lib.load("calling-game").vocab.tokens
    return tokens, [ROLES[t] for t in tokens]


@claim("what-an-embedding-is.roles-emerge", "what-an-embedding-is",
       "On {runs}, after training, rows of the same role have an average cosine higher than rows of different roles "
       "by {gap:.2f}, more than in any of {shuffles:.0f} shuffles of the roles ({shuffled_hi:.2f} at most); in the "
       "table as drawn at random before training the gap is only {init_gap:+.3f}",
       words={"higher than rows of different roles by {gap:.2f}": Q("gap") > 0,
              "more than in any of {shuffles:.0f} shuffles of the roles ({shuffled_hi:.2f} at most)":
              Q("gap") > Q("shuffled_hi"),
              "the gap is only {init_gap:+.3f}": abs(Q("init_gap")) < 0.05},
       others="the gap is {gap:.2f}, and the shuffles reach {shuffled_hi:.2f}", setup=("rows of the same role",),
       note="random initial table (seeded): no role structure; the trained run: same-role minus other-role cosine "
            "above every one of 200 role shuffles",
       scope=EVERY_RUN, models=("calling-game",))
def _(seed):
    tokens, roles = _roles()
    torch.manual_seed(seed)
    initial = Transformer(lib.load("calling-game").model.cfg).W_E.detach().double().numpy()
    init_same, init_other = role_cohesion(initial, roles, skip=("special",))
    E = table("calling-game")
    same, other = role_cohesion(E, roles, skip=("special",))
    rng = np.random.default_rng(seed)
    keep = [r for r in roles if r != "special"]
    shuffled = []
    for _ in range(ROLE_SHUFFLES):
        perm = iter(rng.permutation(keep))
        labels = [r if r == "special" else next(perm) for r in roles]
        a, b = role_cohesion(E, labels, skip=("special",))
        shuffled.append(a - b)
    return {"init_gap": init_same - init_other, "same": same, "other": other, "gap": same - other,
            "shuffled_hi": float(max(shuffled)), "shuffles": ROLE_SHUFFLES}


def _similarities(E: np.ndarray) -> np.ndarray:
    return cosine_matrix(E)[np.triu_indices(len(E), 1)]


def _r(a, b) -> float:
    return float(np.corrcoef(a, b)[0, 1])


@claim("what-an-embedding-is.geometry-differs", "what-an-embedding-is",
       "On {runs}, over the pairs of tokens, the similarities of the calling-game model and of the zero-layer model "
       "trained with one seed correlate {cross:.2f}, less than the calling-game run's do with any other run of its "
       "model ({cg_lo:.2f} at the least) and the zero-layer run's with any other of its ({zl_lo:.2f})",
       words={"less than the calling-game run's do with any other run of its model ({cg_lo:.2f} at the least) and "
              "the zero-layer run's with any other of its ({zl_lo:.2f})": Q("cross") < Min("cg_lo", "zl_lo")},
       others="the two models correlate {cross:.2f}, and two runs of the calling-game model from {cg_lo:.2f}, two of the "
              "zero-layer model from {zl_lo:.2f}",
       seeded=False, note="the two architectures' similarity tables agree less than two training runs of one of them",
       scope=EVERY_RUN, models=MODELS)
def _(seed):
    cg, zl = _similarities(table("calling-game")), _similarities(table("zero-layer"))
    return {"cross": _r(cg, zl), "cg_lo": min(_r(cg, _similarities(E)) for E in other_tables("calling-game")),
            "zl_lo": min(_r(zl, _similarities(E)) for E in other_tables("zero-layer")),
            "n_others": len(other_tables("calling-game"))}


@claim("what-an-embedding-is.zero-layer-packs", "what-an-embedding-is",
       "On {runs}, the zero-layer model packs everything closer together than the calling-game model trained with "
       "its seed: its rows of different roles have an average cosine of {zl_other:.2f}, higher by {packed:.2f} than "
       "the calling-game model's, and rows of one role {zl_same:.2f}",
       words={"packs everything closer together than the calling-game model trained with its seed": Q("packed") > 0,
              "higher by {packed:.2f} than": Q("packed") > 0},
       others="its rows of different roles average {zl_other:.2f}, the calling-game model's {cg_other:.2f}",
       seeded=False, note="zero-layer different-role cosines exceed those of the calling-game run of the same seed",
       scope=EVERY_RUN, models=MODELS)
def _(seed):
    _, roles = _roles()
    zl_same, zl_other = role_cohesion(table("zero-layer"), roles, skip=("special",))
    cg_same, cg_other = role_cohesion(table("calling-game"), roles, skip=("special",))
    return {"zl_same": zl_same, "zl_other": zl_other, "cg_same": cg_same, "cg_other": cg_other,
            "packed": zl_other - cg_other}


@claim("what-an-embedding-is.paolo-nearest", "what-an-embedding-is",
       "On {runs}, Paolo's nearest row in the calling-game model is a numbered player ({paolo_cg}, changing with "
       "the training seed)",
       words={"is a numbered player": Q("paolo_cg_number").eq(1)},
       others="it is {paolo_cg}",
       seeded=False, note="Paolo's nearest row (cosine) in the calling-game model is one of the numbered players",
       scope=EVERY_RUN, models=("calling-game",))
def _(seed):
    tokens, _ = _roles()
    nearest_cg = nearest(table("calling-game"), tokens, "Paolo", 1)[0][0]
    nearest_zl = nearest(table("zero-layer"), lib.load("zero-layer").vocab.tokens, "Paolo", 1)[0][0]
    return {"paolo_cg": nearest_cg, "paolo_cg_number": int(nearest_cg.isdigit()), "paolo_zl": nearest_zl}
