"""The website's version of each explorer: which controls it offers, over which grid, in which parts.

Every table is filled by the same figure functions the live widgets call (lib.explorers.pictures).
Where a live control takes free text (a prompt, a token, a number), the website offers the
chapter's own choices in a menu; where the combinations would be too many to ship (every subset of
ten switches), the website holds those with at most `MAX_OFF` switched off and says so.
"""
from __future__ import annotations

from lib.pictures import charts
from lib.explorers import views as explorers
from lib.explorers import pictures as figs
from lib.model.readout import prompt_logits
from lib.explorers.static import Part, StaticExplorer, const, select, slider, toggle

MAX_OFF = 3
TEMPERATURE_STOPS = [10 ** (-1 + 0.05 * i) for i in range(41)]      # the kernel slider's own stops
SAMPLING_TEMPERATURES = [0.1, 0.5, 1.0, 2.0, 5.0]
SAMPLING_TOP_K = ["", "1", "3"]
SAMPLING_TOP_P = ["", "0.5", "0.9"]
SAMPLING_SEEDS = list(range(10))
LENS_TOKENS = ["", "Tarso", "Cefa", "capo", "vice", "Paolo", "Pietro"]
KV_LABELS = ("layers", "context (tokens)", "heads", "d_head", "bytes per number")
KV_CHOICES = ([12, 24, 32, 48, 80, 96], [1024, 4096, 32768, 131072], [8, 12, 32, 96], [64, 128], [1, 2, 4])
PLANE_AXES = {
    "calling-game": ["Paolo - Pietro", "Tarso + Cefa - capo - vice", "Tarso", "capo", "chiama - perde",
                     "Paolo", "Paolo - Paolo"],
    "real-language": ["king - queen", "man - woman", "dog - cat", "red - blue", "big - small", "the - a",
                      "king - king"],
}


def _part(table: str, keys) -> Part:
    return Part(table, tuple(keys))


def _label(t: float) -> str:
    return f"{t:.2f}"


def _few_off(**values) -> bool:
    return sum(v == "on" for k, v in values.items() if k.startswith("off_")) <= MAX_OFF


def temperature(lm, prompts, value: float, k: int) -> StaticExplorer:
    stops = {_label(t): t for t in TEMPERATURE_STOPS}
    ex = StaticExplorer([[select("prompt", "prompt", prompts, prompts[0]),
                          slider("temperature", "temperature", list(stops), _label(value))]],
                        [_part("page", ("prompt", "temperature"))])
    ex.fill("page", ("prompt", "temperature"), lambda prompt, temperature: figs.temperature_figure(
        lm, prompt, stops[temperature], k))
    return ex


def sampling(lm, prompts, k: int) -> StaticExplorer:
    stops = {_label(t): t for t in SAMPLING_TEMPERATURES}
    ex = StaticExplorer(
        [[select("prompt", "prompt", prompts, prompts[0]), slider("temperature", "temperature", list(stops), "1.00")],
         [select("top_k", "top-k", SAMPLING_TOP_K, "", shown=["all"] + SAMPLING_TOP_K[1:]),
          select("top_p", "top-p", SAMPLING_TOP_P, "", shown=["1 (off)"] + SAMPLING_TOP_P[1:]),
          toggle("greedy", "greedy (always the top word)", hint="pick the most probable token instead of rolling")],
         [slider("seed", "seed", SAMPLING_SEEDS, 0)]],
        [_part("pick", ("prompt", "temperature", "top_k", "top_p", "greedy", "seed")),
         _part("page", ("prompt", "temperature", "top_k", "top_p"))],
        note=f"On the website: temperatures {', '.join(stops)}; top-k and top-p from a menu; seeds 0 to "
             f"{SAMPLING_SEEDS[-1]}. In JupyterLab any value.")
    logits = {p: prompt_logits(lm, p) for p in prompts}    # one forward pass per prompt
    ex.fill("page", ("prompt", "temperature", "top_k", "top_p"),
            lambda prompt, temperature, top_k, top_p: figs.sampling_page(lm, prompt, stops[temperature], top_k, top_p,
                                                                         k, logits[prompt]))
    ex.fill("pick", ("prompt", "temperature", "top_k", "top_p", "greedy", "seed"),
            lambda prompt, temperature, top_k, top_p, greedy, seed: figs.sampling_pick(
                lm, prompt, stops[temperature], top_k, top_p, greedy == "on", int(seed), k, logits[prompt]))
    return ex


def lens(lm, prompts, track: str, k: int) -> StaticExplorer:
    tokens = LENS_TOKENS if track in LENS_TOKENS else [track] + LENS_TOKENS
    ex = StaticExplorer([[select("prompt", "prompt", prompts, prompts[0]),
                          select("track", "follow the token", tokens, track,
                                 shown=[t or "(the final winner)" for t in tokens])]],
                        [_part("lens", ("prompt", "track"))])
    ex.fill("lens", ("prompt", "track"), lambda prompt, track: figs.lens_figure(lm, prompt, track, k))
    return ex


def pattern(lm, prompts, layer: int, head: int) -> StaticExplorer:
    cfg = lm.model.cfg
    ex = StaticExplorer([[select("prompt", "prompt", prompts, prompts[0]),
                          select("layer", "layer", range(cfg.n_layers), layer),
                          select("head", "head", range(cfg.n_heads), head)]],
                        [_part("pattern", ("prompt", "layer", "head"))])
    ex.fill("pattern", ("prompt", "layer", "head"),
            lambda prompt, layer, head: figs.pattern_figure(lm, prompt, int(layer), int(head)))
    return ex


def _switch_name(head) -> str:
    return f"off_L{head[0]}H{head[1]}"


def _heads_or_layers(heads, names, loose: int = 2):
    """Which settings of the head switches the website holds: up to `loose` heads off anywhere,
    plus any number of whole layers off (the chapter asks for all of layer 0). Also applied to a
    part's subset of the switches, where it accepts every projection of a held setting."""
    layer_of = dict(zip(names, (h[0] for h in heads)))
    size = {layer: sum(1 for h in heads if h[0] == layer) for layer in set(layer_of.values())}

    def allowed(**values) -> bool:
        on = [n for n, v in values.items() if n in layer_of and v == "on"]
        whole = {layer for layer in size if sum(layer_of[n] == layer for n in on) == size[layer]}
        return sum(layer_of[n] not in whole for n in on) <= loose

    return allowed


def ablation(lm, prompts, track: str) -> StaticExplorer:
    from lib.analysis.ablation import all_heads, head_name

    heads = all_heads(lm.model)
    names = [_switch_name(h) for h in heads]
    allowed = _heads_or_layers(heads, names)

    def off_of(values):
        return [h for h, n in zip(heads, names) if values.get(n) == "on"]

    parts = [_part("page", ["prompt"] + names)]
    held = "up to two heads, or whole layers,"
    ex = StaticExplorer([[select("prompt", "prompt", prompts, prompts[0])],
                         [toggle(n, head_name(h), hint=f"switch layer {h[0]} head {h[1]} off")
                          for h, n in zip(heads, names)]], parts,
                        note=f"On the website: the followed token is the intact model's answer"
                             f"{' (' + track + ')' if track else ''}, and {held} may be off. "
                             "In JupyterLab any prompt, any token, any heads.",
                        missing=f"The website holds every choice of {held} switched off; switch a head back on, "
                                "or open the chapter in JupyterLab to try this one.")
    ex.fill("page", ["prompt"] + names,
            lambda prompt, **v: figs.ablation_page(lm, prompt, off_of(v), track or None), allowed=allowed)
    for h, n in zip(heads, names):
        if h[1] == 0:
            parts.append(const(charts.ROW_OPEN))    # one row of heads per layer
        # A head's picture depends on the heads of earlier layers, and on itself (faded when off).
        keys = ["prompt"] + [m for g, m in zip(heads, names) if g[0] < h[0]] + [n]
        ex.fill(f"head {head_name(h)}", keys,
                lambda prompt, _h=h, **v: figs.ablation_head(lm, prompt, off_of(v), _h), allowed=allowed)
        parts.append(_part(f"head {head_name(h)}", keys))
        if h[1] == lm.model.cfg.n_heads - 1:
            parts.append(const(charts.ROW_CLOSE))
    return ex


def kv_cache(defaults) -> StaticExplorer:
    names = ("layers", "context", "heads", "d_head", "bytes")
    controls = []
    for name, label, choices, default in zip(names, KV_LABELS, KV_CHOICES, defaults):
        options = sorted(set(choices) | {default})
        controls.append(select(name, label, [f"{o:g}" for o in options], f"{default:g}"))
    ex = StaticExplorer([controls[:3], controls[3:]], [_part("size", names)],
                        note="On the website each size comes from a menu; in JupyterLab type any number.")
    ex.fill("size", names, lambda layers, context, heads, d_head, bytes: figs.kv_cache_figure(
        int(layers), int(context), int(heads), int(d_head), float(bytes)))
    return ex


def tsne(points: str, perplexity, seeds) -> StaticExplorer:
    from lib.explorers.map_views import PERPLEXITIES, POINT_SETS, SEEDS

    ex = StaticExplorer([[slider("perplexity", "perplexity", PERPLEXITIES, perplexity)],
                         [slider("left", "left seed", SEEDS, seeds[0]), slider("right", "right seed", SEEDS, seeds[1])]],
                        [const(charts.ROW_OPEN), _part("panel", ("perplexity", "left")),
                         _part("panel", ("perplexity", "right")), const(charts.ROW_CLOSE)],
                        note=f"On the website: {POINT_SETS[points]}. In JupyterLab the explorer offers both sets.")
    # Both panels share one table: keyed by (perplexity, seed), whichever side asks.
    ex.fill("panel", ("perplexity", "left"), lambda perplexity, left: figs.tsne_panel(points, perplexity, int(left)))
    return ex


def plane(points: str, axis_1: str, axis_2: str) -> StaticExplorer:
    from lib.explorers.map_views import POINT_SETS

    axes = PLANE_AXES[points]
    first = axes if axis_1 in axes else [axis_1] + axes
    second = axes if axis_2 in axes else [axis_2] + axes
    ex = StaticExplorer([[select("axis_1", "axis 1", first, axis_1), select("axis_2", "axis 2", second, axis_2)]],
                        [_part("plane", ("axis_1", "axis_2"))],
                        note=f"On the website: {POINT_SETS[points]}, axes from a menu. In JupyterLab type any "
                             "tokens, sums and differences, on either set.")
    ex.fill("plane", ("axis_1", "axis_2"), lambda axis_1, axis_2: figs.plane_figure(points, axis_1, axis_2))
    return ex


def path(lm, prompt: str, toward: str, against: str) -> StaticExplorer:
    from lib.analysis.ablation import all_heads, head_name

    heads = all_heads(lm.model)
    layers = list(range(lm.model.cfg.n_layers))
    names = [_switch_name(h) for h in heads] + [f"off_MLP{m}" for m in layers]
    ex = StaticExplorer([[toggle(n, head_name(h), hint=f"switch layer {h[0]} head {h[1]} off")
                          for h, n in zip(heads, names)],
                         [toggle(f"off_MLP{m}", f"MLP {m}", hint=f"switch block {m}'s MLP off") for m in layers]],
                        [_part("path", names)],
                        note=f"On the website any {MAX_OFF} components may be off at once; in JupyterLab any number.",
                        missing=f"The website holds every choice of up to {MAX_OFF} components off; switch one back "
                                "on, or open the chapter in JupyterLab to try more.")

    def make(**v):
        return figs.path_figure(lm, prompt, [h for h in heads if v[_switch_name(h)] == "on"],
                                [m for m in layers if v[f"off_MLP{m}"] == "on"], toward, against)

    ex.fill("path", names, make, allowed=_few_off)
    return ex
