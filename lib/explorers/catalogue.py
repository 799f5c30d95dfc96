"""The course's explorers, one definition each: controls, and what the view holds.

Each function returns an `Explorer` (lib.explorers.definition) that a chapter displays with its
last line. Its `compute` turns the controls' values into the view, a dict of plain data, with the
library's own functions; the website's twin of each view is the function of the same name in
`lib/explorers/js/views.js`, and the picture is drawn from the view by `lib/explorers/js/render.js`
in both places. Adding an explorer: a definition here, its twin and (for a new kind of picture) its
renderer there, the chapter's call, and its tests.
"""
from __future__ import annotations

import math
from typing import Sequence

from lib.analysis.lens import stage_label
from lib.errors import CourseError, require
from lib.messages import say
from lib.analysis.circuits import pattern_view
from lib.analysis.lens import lens_view
from lib.analysis.sampling import sampling_view, temperature_page
from lib.explorers.boxes import parse_position, parse_seed, parse_top_k, parse_top_p
from lib.explorers.definition import (Control, Explorer, head_toggles, prompt_control, registered, switched_off,
                                      temperature_control, token_control)

FOLLOW = "the token whose probability the picture follows; blank: the model's own answer"


def _tokens(lm, prompt: str) -> list[str]:
    return lm.vocab.decode(lm.encode(prompt))


def _pairs(pairs) -> list[list]:
    return [[t, float(p)] for t, p in pairs]


# The settings each explorer is registered with for the tests: the course's models, prompts the
# chapters use, and the other shipped models where an explorer takes them.
def _model(name: str = "calling-game"):
    from lib.model.store import load
    return load(name)


def _prompts() -> dict[str, str]:
    from lib.content.prompts import CONFIDENT, UNCERTAIN
    return {"confident": CONFIDENT, "uncertain": UNCERTAIN}


# ----------------------------------------------------------------------------- Part 3
@registered("temperature", lambda: [temperature_explorer(_model(), [_prompts()["uncertain"], _prompts()["confident"]])])
def temperature_explorer(lm, prompts: Sequence[str], temperature: float = 1.0, k: int = 10) -> Explorer:
    """A temperature (slid, or typed over the read-out's whole range) and a prompt over the model's
    results page (the `k` best tokens)."""
    def compute(v):
        return {"tokens": _tokens(lm, v["prompt"]), "temperature": v["temperature"],
                "page": _pairs(temperature_page(lm, v["prompt"], v["temperature"], k))}

    return Explorer("temperature", [[prompt_control(prompts), temperature_control(temperature)]], compute,
                    lm.name, {"k": k})


@registered("sampling", lambda: [sampling_explorer(_model(), [_prompts()["uncertain"]]),
                              sampling_explorer(_model("hand-wired"), ["<BOS> the king is"])])
def sampling_explorer(lm, prompts: Sequence[str], k: int = 10) -> Explorer:
    """Temperature, top-k, top-p, greedy and a seed over one prompt: the reshaped page, what survives
    the truncation, and the token one seeded roll of the die picks."""
    rows = [[prompt_control(prompts), temperature_control()],
            [Control("top_k", "top-k", "keep only the k most probable tokens; blank keeps all", "text", "",
                     placeholder="all", width=6),
             Control("top_p", "top-p", "keep the fewest best tokens whose probability reaches p; blank keeps all",
                     "text", "", placeholder="1 (off)", width=7),
             Control("greedy", "greedy", "always take the most probable token instead of rolling", "toggle", False)],
            [Control("seed", "seed", "which roll of the die: the same seed always picks the same token", "text",
                     "0", width=8)]]

    def compute(v):
        top_k, top_p = parse_top_k(v["top_k"]), parse_top_p(v["top_p"])
        seed = parse_seed(v["seed"])
        s = sampling_view(lm, v["prompt"], v["temperature"], top_k, top_p, v["greedy"], seed, k)
        return {"tokens": _tokens(lm, v["prompt"]), "temperature": v["temperature"],
                "top_k": None if top_k is None else min(top_k, len(lm.vocab)), "top_p": top_p,
                "greedy": bool(v["greedy"]), "seed": str(seed),
                "rows": [{"token": r.token, "base": r.base, "heated": r.heated, "final": r.final} for r in s.rows],
                "chosen": s.chosen, "chosen_prob": s.chosen_prob, "survivors": s.survivors}

    return Explorer("sampling", rows, compute, lm.name, {"k": k})


@registered("lens", lambda: [lens_explorer(_model(), [_prompts()["confident"]]),
                          lens_explorer(_model("zero-layer"), [_prompts()["uncertain"]])])
def lens_explorer(lm, prompts: Sequence[str], track: str = "", k: int = 3) -> Explorer:
    """The logit lens on any prompt, at any position: the ranking after each stage, and one token's climb."""
    rows = [[prompt_control(prompts)],
            [token_control("track", "follow the token", FOLLOW, track, placeholder="the final winner"),
             Control("position", "at position", "which position's residual stream to read, counted from 0; blank: "
                     "the last", "text", "", placeholder="last", width=5)]]

    def compute(v):
        ids = lm.encode(v["prompt"])
        position = parse_position(v["position"], len(ids))
        view = lens_view(lm, v["prompt"], v["track"].strip(), k, position)
        return {"tokens": lm.vocab.decode(ids), "position": view.position,
                "stages": [stage_label(s) for s in view.stages], "top": [_pairs(col) for col in view.top],
                "track": view.track, "track_probs": view.track_probs, "track_ranks": view.track_ranks}

    return Explorer("lens", rows, compute, lm.name, {"k": k})


# ----------------------------------------------------------------------------- Part 1
@registered("pattern", lambda: [pattern_viewer(_model(), [_prompts()["confident"]])])
def pattern_viewer(lm, prompts: Sequence[str], layer: int = 0, head: int = 0) -> Explorer:
    """Any head's attention pattern on any prompt: rows are the positions that read, columns the
    positions they read from."""
    cfg = lm.model.cfg
    rows = [[prompt_control(prompts),
             Control("layer", "layer", "which layer's head to show", "choice", layer, options=tuple(range(cfg.n_layers))),
             Control("head", "head", "which head of that layer", "choice", head, options=tuple(range(cfg.n_heads)))]]

    def compute(v):
        view = pattern_view(lm, v["prompt"], v["layer"], v["head"])
        return {"tokens": view.tokens, "layer": view.layer, "head": view.head, "pattern": view.pattern}

    return Explorer("pattern", rows, compute, lm.name)


ABLATION_KINDS = {"zero": "zero: write nothing", "mean": "mean: write the average over the reference rounds",
                  "resample": "resample: write what another round wrote"}


@registered("ablation", lambda: [ablation_explorer(_model(), [_prompts()["confident"]]),
                              ablation_explorer(_model(), [_prompts()["confident"]], kind="mean")])
def ablation_explorer(lm, prompts: Sequence[str], track: str = "", kind: str = "zero") -> Explorer:
    """A switch for every head and MLP, and how a switched-off component is replaced (zero, mean or
    resample ablation): switch any off and watch the results page and the patterns."""
    from lib.analysis.ablation import KINDS, ablation_view, all_heads, head_name, reference_set

    cfg = lm.model.cfg
    rows = [[prompt_control(prompts),
             token_control("track", "follow the token", FOLLOW, track, placeholder="the intact model's answer")],
            [Control("kind", "switched off means", "zero: the component writes nothing; mean: its average write at "
                     "that position over the reference rounds; resample: its write on one other round", "choice",
                     kind, options=KINDS, shown=tuple(ABLATION_KINDS[k] for k in KINDS))],
            *head_toggles(cfg.n_layers, cfg.n_heads),
            [Control(f"MLP{layer}", f"MLP {layer}", f"switch block {layer}'s MLP off", "toggle", False)
             for layer in range(cfg.n_layers) if cfg.has_mlp]]
    rows = [r for r in rows if r]

    def compute(v):
        mlps = [layer for layer in range(cfg.n_layers) if v.get(f"MLP{layer}")]
        view = ablation_view(lm, v["prompt"], switched_off(v, cfg.n_layers, cfg.n_heads), v["track"].strip() or None,
                             mlps=mlps, kind=v["kind"])
        heads = all_heads(lm.model)
        return {"tokens": view.tokens, "off": [head_name(h) for h in view.off] + [f"MLP {m}" for m in view.mlps_off],
                "kind": view.kind, "page": _pairs(view.page),
                "heads": [head_name(h) for h in heads], "patterns": [view.patterns[h] for h in heads],
                "track": view.track, "track_prob": view.track_prob, "track_prob_intact": view.track_prob_intact}

    note = (f"Mean and resample ablation read the reference set: {reference_set(lm).label}. Mean ablation writes "
            "a component's average write at each position over those rounds; resample ablation its write on one "
            "of them (the first draw of seed 0 among the rounds at least as long as the prompt)."
            if cfg.n_layers and lm.meta.get("corpus") else "")
    return Explorer("ablation", rows, compute, lm.name, note=note)


@registered("patching", lambda: [patching_explorer(_model())])
def patching_explorer(lm, clean: str = "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo", corrupted: str = "",
                      swap: bool = True, prompts: Sequence[str] = (), target: str = "vice",
                      against: str = "Tarso") -> Explorer:
    """Activation patching: a clean and a corrupted prompt of equal length, the grid of the fraction of the
    logit difference each head's write (and each MLP's output, and the residual stream before each block
    and after the last) at each position brings back into the corrupted run, and the results page of one
    cell."""
    from lib.analysis.ablation import all_heads, head_name
    from lib.analysis.patching import double_model, patch, patch_one, swap_players

    cfg = lm.model.cfg
    # Rows: every head, every MLP, then the residual stream before each block ("resid L"; the last,
    # "resid n_layers", is the stream after the last block).
    components = [head_name(h) for h in all_heads(lm.model)] + [f"MLP{layer}" for layer in range(cfg.n_layers)
                                                                 if cfg.has_mlp]
    n_writes = len(components)
    components += [f"resid {layer}" for layer in range(cfg.n_layers + 1)]
    rows = [[prompt_control([clean, *prompts], "clean", "clean prompt")],
            [Control("corrupted", "corrupted prompt", "as many tokens as the clean one; by default the clean one, "
                     "with its players swapped", "text", corrupted or clean, width=34),
             Control("swap", "swap players", "swap the last call's caller, everywhere in the corrupted prompt, with a "
                     "player of the other kind", "toggle", swap)],
            [token_control("target", "target", "the token whose logit leads; blank: the clean run's answer", target,
                           placeholder="clean answer"),
             token_control("against", "against", "the rival; blank: the corrupted run's answer", against,
                           placeholder="corrupted answer")],
            [Control("cell", "show", "which component's patch to show the results page of", "choice", components[0],
                     options=tuple(components)),
             Control("position", "at position", "which position's patch, counted from 0; blank: the last", "text",
                     "", placeholder="last", width=5)]]

    def compute(v):
        corrupted_text = swap_players(v["corrupted"]) if v["swap"] else v["corrupted"]
        r = patch(lm, v["clean"], corrupted_text, v["target"].strip() or None, v["against"].strip() or None)
        T = len(r.clean)
        position = parse_position(v["position"], T)
        grid = [list(map(float, r.heads[layer, h])) for layer, h in all_heads(lm.model)]
        grid += [list(map(float, r.mlps[layer])) for layer in range(r.mlps.shape[0])]
        grid += [list(map(float, row)) for row in r.resid]
        i = components.index(v["cell"])
        name, head = ((f"blocks.{i // cfg.n_heads}.attn.head_out", i % cfg.n_heads) if i < len(all_heads(lm.model))
                      else (f"blocks.{v['cell'][3:]}.mlp_out", None) if i < n_writes
                      else (r.stages[i - n_writes], None))
        import torch
        from lib.model.readout import softmax

        model = double_model(lm.model)
        _, source = model.run_with_cache(lm.encode(r.clean))
        probs = softmax(patch_one(model, lm.encode(r.corrupted), source, name, position, head)[-1])
        order = torch.argsort(probs, descending=True, stable=True)[:8].tolist()
        return {"clean": r.clean, "corrupted": r.corrupted, "target": r.target, "against": r.against,
                "clean_diff": r.clean_diff, "corrupted_diff": r.corrupted_diff, "rows": components, "grid": grid,
                "cell": v["cell"], "position": position, "recovered": grid[i][position],
                "page": [[lm.vocab.tokens[k], float(probs[k])] for k in order]}

    return Explorer("patching", rows, compute, lm.name)


KV_SIZES = (("layers", "layers", "how many blocks, each with its own cache"),
            ("context", "context (tokens)", "how many tokens the cache holds"),
            ("heads", "heads", "key-value heads per layer"),
            ("d_head", "d_head", "numbers in one head's key (and in its value)"))


def _whole(label: str, text) -> int:
    try:
        return int(str(text).strip())
    except ValueError:
        raise CourseError(say("box_whole", label=label, got=repr(str(text).strip()))) from None


@registered("kv_cache", lambda: [kv_cache_calculator()])
def kv_cache_calculator(layers: int = 32, context: int = 32768, heads: int = 32, d_head: int = 128,
                        bytes_per_element: float = 2) -> Explorer:
    """The memory of a KV cache: type the sizes, read the total."""
    from lib.analysis.inventory import kv_cache_bytes

    boxes = [Control(name, label, description, "text", str(value), width=9)
             for (name, label, description), value in zip(KV_SIZES, (layers, context, heads, d_head))]
    boxes.append(Control("bytes", "bytes per number", "2 for 16-bit numbers, 1 for 8-bit, 0.5 for 4-bit", "text",
                         f"{bytes_per_element:g}", width=6))

    def compute(v):
        sizes = [_whole(label, v[name]) for name, label, _ in KV_SIZES]
        text = str(v["bytes"]).strip()
        try:
            per = float(text)
        except ValueError:
            raise CourseError(say("box_number", got=repr(text))) from None
        try:
            total = kv_cache_bytes(*sizes, per)
        except OverflowError:
            total = math.inf
        require(math.isfinite(total), say("cache_overflow"))
        return {**{name: str(n) for (name, _, _), n in zip(KV_SIZES, sizes)}, "bytes": per, "total": float(total)}

    return Explorer("kv_cache", [boxes[:3], boxes[3:]], compute)


# ----------------------------------------------------------------------------- Part 2
@registered("tsne", lambda: [tsne_explorer(), tsne_explorer("known-clusters", 10)])
def tsne_explorer(points: str = "calling-game", perplexity: float | None = None, seeds: tuple[int, int] = (0, 1),
                  steps: int | None = None) -> Explorer:
    """Two t-SNE layouts of the same points side by side, one per seed, with perplexity on a slider;
    on a set with iteration stops (the known clusters), a third slider picks how many iterations ran.
    `perplexity`: one of the set's stops (by default 5, or the lowest stop of a set without it).

    Only the perplexities the point set allows are offered (each must stay below its number of
    points); every layout the sliders reach was computed in advance and is read from the store."""
    from lib.analysis.maps.views import SEEDS, grid_key, step_stops, tsne_grid, valid_perplexities
    from lib.content.point_sets import POINT_SETS, WORD_SETS, point_set

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
    return Explorer("tsne", rows, compute, args=args, note=note)


@registered("plane", lambda: [plane_builder()])
def plane_builder(points: str = "calling-game", axis_1: str = "Paolo - Pietro",
                  axis_2: str = "Tarso + Cefa - capo - vice") -> Explorer:
    """A concept plane from two axes the reader types: tokens, or sums and differences of tokens."""
    from lib.analysis.maps.views import plane_view
    from lib.content.point_sets import POINT_SETS, WORD_SETS, point_set

    rows = [[Control("points", "points", "which embedding rows to place on the plane", "choice", points,
                     options=WORD_SETS, shown=tuple(POINT_SETS[n] for n in WORD_SETS))],
            [Control(name, label, description, "text", value, width=24) for name, label, description, value in (
                ("axis_1", "axis 1", "a token, or a sum and difference of tokens, such as Paolo - Pietro", axis_1),
                ("axis_2", "axis 2", "a second direction; the part of it along axis 1 is removed", axis_2))]]

    def compute(v):
        view = plane_view(v["points"], v["axis_1"], v["axis_2"])
        ps = point_set(v["points"])
        return {"points": v["points"], "points_label": POINT_SETS[v["points"]], "axes": list(view.axes_text),
                "labels": list(ps.labels),
                "groups": list(ps.groups), "coords": view.coords.tolist(), "spread": view.spread,
                "raw_overlap": view.raw_overlap}

    return Explorer("plane", rows, compute, args={"labels": {n: POINT_SETS[n] for n in WORD_SETS}})


@registered("path", lambda: [path_explorer(_model()),
                          path_explorer(_model("hand-wired"), "<BOS> the king is", "queen", "king")])
def path_explorer(lm, prompt: str = "<BOS> Pietro chiama Paolo", toward: str = "Tarso", against: str = "Paolo",
                  prompts: Sequence[str] = ()) -> Explorer:
    """Switch heads and MLPs off and watch the residual stream's path on a concept plane change."""
    from lib.analysis.ablation import head_name
    from lib.analysis.trajectory import path_view

    cfg = lm.model.cfg
    rows = [[prompt_control([prompt, *prompts])],
            [token_control("toward", "axis toward", "the token the first axis points at", toward),
             token_control("against", "second axis", "the token the second axis points at, made orthogonal to the "
                           "first", against)],
            *head_toggles(cfg.n_layers, cfg.n_heads),
            [Control(f"MLP{layer}", f"MLP {layer}", f"switch block {layer}'s MLP off", "toggle", False)
             for layer in range(cfg.n_layers) if cfg.has_mlp]]

    def compute(v):
        heads = switched_off(v, cfg.n_layers, cfg.n_heads)
        mlps = [layer for layer in range(cfg.n_layers) if v.get(f"MLP{layer}")]
        view = path_view(lm, v["prompt"], heads, mlps, v["toward"].strip(), v["against"].strip())
        off = [head_name(h) for h in view.heads_off] + [f"MLP {m}" for m in view.mlps_off]
        return {"tokens": _tokens(lm, v["prompt"]), "toward": v["toward"].strip(), "against": v["against"].strip(),
                "stages": [stage_label(s) for s in view.intact.stages], "intact": view.intact.coords.tolist(),
                "ablated": view.ablated.coords.tolist() if off else None, "off": off, "prob": view.prob,
                "prob_intact": view.prob_intact}

    return Explorer("path", rows, compute, lm.name)

# Part 1's map (the game's rules checker, the whole machine) registers its explorers where it is defined.
from lib.explorers import machine  # noqa: E402,F401

# The hand-worked chapters' explorers live in a module of their own; importing it registers them.
from lib.explorers import hand_worked  # noqa: E402,F401

# ----------------------------------------------------------------------------- explorers defined in their own modules
from lib.explorers import real_attention  # noqa: E402,F401  (registers the real model's attention explorer)
