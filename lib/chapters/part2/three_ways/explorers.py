"""The three-ways chapter's explorers: a concept plane from two typed axes, and t-SNE layouts side by side.

`tsne_explorer` is also the real-language chapter's (its page imports it from here, its first
chapter in the book). The page twins are `plane` and `tsne` in this unit's page.js; their
pictures, in this unit's pictures.js, are drawn with the renderer's kit (lib/explorers/js/render.js).
"""
from __future__ import annotations

import random

from lib.chapters.part2.three_ways.views import (POINT_SETS, SEEDS, WORD_SETS, grid_key, plane_view, point_set, step_stops,
                                                 tsne_grid, valid_perplexities)
from lib.errors import require
from lib.explorers.definition import Control, Explorer, registered
from lib.messages import say


def random_axis(rng: random.Random, name: str, values: dict, tokens) -> str:
    """An axis as a reader types it (for the tests): a sum and difference of the point set's words,
    now and then one the plane refuses."""
    labels = list(point_set(values["points"]).labels)
    if rng.random() < 0.15:
        w = rng.choice(labels)
        return rng.choice([f"{w} - {w}", "Pippo", "", "+ -"])
    words = rng.sample(labels, rng.randint(1, 4))
    return " ".join(f"{rng.choice(['+', '-'])} {w}" if i else w for i, w in enumerate(words))


# Each word set's starting axes: its own words (a set change puts them in the boxes, since the other
# set's words are not points here). The game's: a player's name, and places against titles.
AXES = {"calling-game": ("Paolo - Pietro", "Tarso + Cefa - capo - vice"),
        "real-language": ("man + boy - woman - girl", "king + queen - man - woman")}


@registered("plane", lambda: [plane_builder()], random_text=random_axis,
            where="the top of the machine: the embedding table, its rows on a plane of two directions.")
def plane_builder(points: str = "calling-game", axis_1: str | None = None, axis_2: str | None = None) -> Explorer:
    """A concept plane from two axes the reader types: tokens, or sums and differences of tokens.
    Axes left out are the word set's own (AXES); choosing another set puts that set's axes in the boxes."""
    axis_1 = AXES[points][0] if axis_1 is None else axis_1
    axis_2 = AXES[points][1] if axis_2 is None else axis_2
    rows = [[Control("points", "points", "which embedding rows to place on the plane", "choice", points,
                     options=WORD_SETS, shown=tuple(POINT_SETS[n] for n in WORD_SETS))],
            [Control(name, label, description, "text", value, width=28,
                     follows=("points", {n: AXES[n][i] for n in WORD_SETS}))
             for i, (name, label, description, value) in enumerate((
                 ("axis_1", "axis 1", "a token, or a sum and difference of tokens, such as Paolo - Pietro", axis_1),
                 ("axis_2", "axis 2", "a second direction; the part of it along axis 1 is removed", axis_2)))]]

    def compute(v):
        view = plane_view(v["points"], v["axis_1"], v["axis_2"])
        ps = point_set(v["points"])
        return {"points": v["points"], "points_label": POINT_SETS[v["points"]], "axes": list(view.axes_text),
                "labels": list(ps.labels),
                "groups": list(ps.groups), "coords": view.coords.tolist(), "spread": view.spread,
                "raw_overlap": view.raw_overlap}

    return Explorer("plane", rows, compute, args={"labels": {n: POINT_SETS[n] for n in WORD_SETS}},
                    where_if=("points", ("calling-game",)))


@registered("tsne", lambda: [tsne_explorer(), tsne_explorer("known-clusters", 10)],
            where="the top of the machine: the embedding table, its rows laid out flat.")
def tsne_explorer(points: str = "calling-game", perplexity: float | None = None, seeds: tuple[int, int] = (0, 1),
                  steps: int | None = None) -> Explorer:
    """Two t-SNE layouts of the same points side by side, one per seed, with perplexity on a slider;
    on a set with iteration stops (the known clusters), a third slider picks how many iterations ran.
    `perplexity`: one of the set's stops (by default 5, or the lowest stop of a set without it).

    Only the perplexities the point set allows are offered (each must stay below its number of
    points); every layout the sliders reach was computed in advance and is read from the store."""
    ps = point_set(points)
    allowed, stops = valid_perplexities(points), step_stops(points)
    steps = stops[-1] if steps is None else steps
    if perplexity is None:          # 5 where the set offers it (the chapters' usual value), else its lowest
        perplexity = 5 if 5 in allowed else allowed[0]

    def check(name, value, options, shown):
        require(value in options, say("not_a_stop", name=name, value=value, stops=", ".join(map(shown, options))))

    check("perplexity", perplexity, allowed, lambda p: f"{p:g}")
    check("iterations", steps, stops, str)
    grid = tsne_grid(points)
    rows = [[Control("perplexity", "perplexity", "about how many neighbours each point tries to keep close",
                     "choice", perplexity, options=allowed, slider=True)],
            [Control(side, f"{side} seed", f"the random start of the {side} layout", "choice", seed, options=SEEDS,
                     slider=True) for side, seed in zip(("left", "right"), seeds)]]
    if len(stops) > 1:
        rows.append([Control("steps", "iterations", "stop the optimiser after this many iterations; the last stop "
                             "lets it run until it converges", "choice", steps, options=stops,
                             shown=tuple(f"{n:,}" for n in stops[:-1]) + ("until converged",), slider=True)])

    def compute(v):
        check("perplexity", v["perplexity"], allowed, lambda p: f"{p:g}")
        for side in ("left", "right"):
            check(f"the {side} seed", v[side], SEEDS, str)
        n = v.get("steps", stops[-1])
        check("iterations", n, stops, str)
        cells = [grid[grid_key(v["perplexity"], v[side], n)] for side in ("left", "right")]
        # Words are worth printing beside their points; the synthetic points' names are not (their
        # colour is the truth, and 80 names in four clumps hide it).
        return {"points": points, "points_label": POINT_SETS[points], "labels": list(ps.labels),
                "labelled": points in WORD_SETS, "groups": list(ps.groups), "perplexity": v["perplexity"],
                "seeds": [v["left"], v["right"]], "steps": n, "layouts": [c["layout"] for c in cells], "kept": [c["kept"] for c in cells],
                "iterations": [c["n_iter"] for c in cells], "kl": [c["kl"] for c in cells],
                "converged": [c["converged"] for c in cells]}

    note = (f"{POINT_SETS[points][0].upper()}{POINT_SETS[points][1:]}. Precomputed with scikit-learn: one t-SNE layout "
            f"takes hundreds to thousands of optimisation steps, too slow to redo while a slider moves, so every "
            f"layout these sliders reach (perplexities {', '.join(f'{p:g}' for p in allowed)}; seeds {SEEDS[0]} to "
            f"{SEEDS[-1]}) was run in advance, and moving a slider looks one up.")
    if len(stops) > 1:
        note += (f" The first iteration stop, {stops[0]}, is the end of early exaggeration, when every attraction "
                 "between neighbours is still multiplied by 12: clumps pulled tight, the real optimisation not yet "
                 "begun. The last runs until the optimiser converges.")
    args = {"points": points, "points_label": POINT_SETS[points], "labels": list(ps.labels), "groups": list(ps.groups),
            "labelled": points in WORD_SETS, "stops": list(stops), "grid": grid}
    return Explorer("tsne", rows, compute, args=args, note=note, where_if=("points", ("calling-game",)))
