"""Live views for a kernel: ipywidgets controls around the explorers.

Every explorer is built by `explorer_box`: controls, a message line and a chart. On each change
it calls the explorer's pure function; a `CourseError` (an unknown word, an empty prompt, a top-p
of 2) is shown as a sentence in the message line and the last good chart stays, so a bad value
never becomes a traceback in front of a learner and nothing on screen is lost.

The charts are SVG from `lib.charts` (a matplotlib PNG takes longer than a slider step may), each
with a description in words that a screen reader announces, and that the saved page keeps.
"""
from __future__ import annotations

import html
from typing import Callable, Sequence

from . import charts, explorers
from .errors import CourseError

STYLE = {"description_width": "initial"}


def prompt_box(prompts: Sequence[str], width: str = "26em"):
    """A text box with the chapter's prompts offered, where any other prompt may be typed."""
    import ipywidgets as W

    return W.Combobox(value=prompts[0], options=list(prompts), description="prompt", ensure_option=False,
                      layout=W.Layout(width=width), style=STYLE)


def explorer_box(rows: Sequence[Sequence], compute: Callable[[], object], draw: Callable[[object], str]):
    """Lay out rows of controls over a chart; redraw on every change.

    `compute()` reads the controls and returns what to show (or raises `CourseError`);
    `draw(view)` returns the chart as an SVG string.
    """
    import ipywidgets as W

    message = W.HTML()
    figure = W.HTML()
    figure.add_class("course-figure")

    def update(*_):
        try:
            view = compute()
        except CourseError as e:
            message.value = f'<span class="course-error" role="alert" style="color:#bc4c00">{html.escape(str(e), quote=False)}</span>'
            return
        message.value = ""
        figure.value = draw(view)

    for row in rows:
        for control in row:
            control.observe(update, names="value")
    update()
    box = W.VBox([W.HBox(list(row)) for row in rows] + [message, figure])
    box.add_class("course-explorer")
    return box


def _top(pairs, n: int = 5) -> str:
    return ", ".join(f"{t} {p:.3f}" for t, p in list(pairs)[:n])


def temperature_explorer(lm, prompts: list[str], temperature: float = 1.0, k: int = 10):
    """A temperature slider and a prompt box over the model's results page."""
    import ipywidgets as W

    slider = W.FloatLogSlider(value=temperature, base=10, min=-1, max=1, step=0.05,
                              description="temperature", readout_format=".2f", style=STYLE)
    prompt = prompt_box(prompts)

    def draw(page):
        alt = (f"Bar chart of the most probable next tokens after {prompt.value} at temperature "
               f"{slider.value:.2f}: {_top(page)}.")
        return charts.bar_chart(page, alt, title=f"{prompt.value}  ->  (temperature {slider.value:.2f})")

    return explorer_box([[prompt, slider]],
                        lambda: explorers.temperature_page(lm, prompt.value, slider.value, k), draw)


def sampling_explorer(lm, prompts: list[str], k: int = 10):
    """Temperature, greedy, top-k, top-p and a seed over one prompt: the reshaped page, what
    survives the truncation, and the token one seeded roll of the die picks."""
    import ipywidgets as W

    prompt = prompt_box(prompts)
    temperature = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.05, description="temperature",
                                   readout_format=".2f", style=STYLE)
    top_k = W.Text(value="", placeholder="all", description="top-k", layout=W.Layout(width="10em"), style=STYLE)
    top_p = W.Text(value="", placeholder="1 (off)", description="top-p", layout=W.Layout(width="10em"), style=STYLE)
    use_greedy = W.Checkbox(value=False, description="greedy (always the top word)", indent=False)
    seed = W.IntSlider(value=0, min=0, max=20, description="seed", style=STYLE)

    def compute():
        return explorers.sampling_view(lm, prompt.value, temperature.value, explorers.parse_top_k(top_k.value),
                                       explorers.parse_top_p(top_p.value), use_greedy.value, seed.value, k)

    def draw(view):
        how = "greedy decoding" if view.greedy else f"the roll with seed {seed.value}"
        alt = (f"Bar chart of the next-token page after {prompt.value} at temperature {temperature.value:.2f}. "
               f"{view.survivors} tokens survive truncation; {how} picks {view.chosen}. Distribution rolled on: "
               + _top((r.token, r.final) for r in view.rows if r.final > 0) + ".")
        return sampling_chart(view, alt, f"{view.survivors} tokens survive; {how} picks {view.chosen}")

    return explorer_box([[prompt, temperature], [top_k, top_p, use_greedy], [seed]], compute, draw)


def sampling_chart(view, alt: str, title: str) -> str:
    """The page after the temperature (pale), the distribution rolled on (solid), the pick (accent)."""
    rows = [(r.token, r.final) for r in view.rows]
    texts = [f"{r.final:.3f}" if r.final > 0 else "cut" for r in view.rows]
    legend = [(charts.PALETTE["muted"], "after temperature"), (charts.PALETTE["main"], "rolled on (after truncation)"),
              (charts.PALETTE["accent"], "picked")]
    return charts.bar_chart(rows, alt, title=title, highlight=view.chosen, ghost=[r.heated for r in view.rows],
                            value_text=texts, legend=legend)


def lens_explorer(lm, prompts: list[str], track: str = "", k: int = 3):
    """The logit lens on any prompt: the ranking after each stage, and one token's climb."""
    import ipywidgets as W

    prompt = prompt_box(prompts)
    tracked = W.Text(value=track, placeholder="the final winner", description="follow the token",
                     layout=W.Layout(width="16em"), style=STYLE)

    def draw(view):
        stages = "; ".join(f"after {s}: {top[0][0]} {top[0][1]:.3f}" for s, top in zip(view.stages, view.top))
        climb = ", ".join(f"{p:.3f}" for p in view.track_probs)
        alt = (f"Logit lens on {prompt.value}. Top token {stages}. Probability of {view.track} "
               f"stage by stage: {climb}.")
        return charts.lens_chart(view, alt)

    return explorer_box([[prompt, tracked]], lambda: explorers.lens_view(lm, prompt.value, tracked.value, k), draw)


def pattern_viewer(lm, prompts: list[str], layer: int = 0, head: int = 0):
    """Any head's attention pattern on any prompt: rows are the positions that read, columns the
    positions they read from."""
    import ipywidgets as W

    prompt = prompt_box(prompts)
    layer_pick = W.Dropdown(options=list(range(lm.model.cfg.n_layers)), value=layer, description="layer",
                            layout=W.Layout(width="9em"), style=STYLE)
    head_pick = W.Dropdown(options=list(range(lm.model.cfg.n_heads)), value=head, description="head",
                           layout=W.Layout(width="9em"), style=STYLE)

    def draw(view):
        last = ", ".join(f"{t} {p:.2f}" for t, p in zip(view.tokens, view.pattern[-1]))
        alt = (f"Attention pattern of layer {view.layer}, head {view.head} on {prompt.value}. "
               f"The last position attends to: {last}.")
        return charts.heatmap(view.pattern, view.tokens, view.tokens, alt,
                              title=f"layer {view.layer}, head {view.head}", masked_upper=True)

    return explorer_box([[prompt, layer_pick, head_pick]],
                        lambda: explorers.pattern_view(lm, prompt.value, layer_pick.value, head_pick.value), draw)


def ablation_explorer(lm, prompts: list[str], track: str = ""):
    """A toggle for every head: switch heads off and watch the results page and the patterns."""
    import ipywidgets as W

    from .ablation import ablation_view, all_heads, head_name

    prompt = prompt_box(prompts)
    tracked = W.Text(value=track, placeholder="the intact model's answer", description="follow the token",
                     layout=W.Layout(width="16em"), style=STYLE)
    heads = all_heads(lm.model)
    toggles = [W.ToggleButton(value=False, description=head_name(h), tooltip=f"switch layer {h[0]} head {h[1]} off",
                              layout=W.Layout(width="5.5em")) for h in heads]

    def compute():
        off = [h for h, t in zip(heads, toggles) if t.value]
        return ablation_view(lm, prompt.value, off, tracked.value.strip() or None)

    def draw(view):
        off = ", ".join(head_name(h) for h in view.off) or "none"
        alt_page = (f"With heads switched off: {off}. After {prompt.value} the model now gives "
                    f"{view.track} {view.track_prob:.3f} (intact: {view.track_prob_intact:.3f}). Best next tokens: "
                    + _top(view.page) + ".")
        page = charts.bar_chart(view.page, alt_page, highlight=view.track,
                                title=f"heads off: {off}  |  P({view.track}) {view.track_prob:.3f} "
                                      f"(intact {view.track_prob_intact:.3f})")
        grid = charts.heatmap_grid([(head_name(h), p) for h, p in view.patterns.items()], view.tokens, view.tokens,
                                   f"Attention patterns of all {len(view.patterns)} heads on {prompt.value}; "
                                   f"switched off: {off}.", per_row=lm.model.cfg.n_heads,
                                   dimmed=[head_name(h) for h in view.off])
        return page + grid

    for t in toggles:
        t.add_class("course-head-toggle")
    return explorer_box([[prompt, tracked], toggles], compute, draw)


def kv_cache_calculator(layers: int = 32, context: int = 32768, heads: int = 32, d_head: int = 128,
                        bytes_per_element: float = 2):
    """The memory of a KV cache: type the sizes, read the total."""
    import ipywidgets as W

    from .inventory import kv_cache_bytes

    boxes = [W.Text(value=str(v), description=d, layout=W.Layout(width="13em"), style=STYLE)
             for d, v in (("layers", layers), ("context (tokens)", context), ("heads", heads),
                          ("d_head", d_head), ("bytes per number", bytes_per_element))]

    def parse(box, whole: bool):
        text = box.value.strip()
        try:
            return int(text) if whole else float(text)
        except ValueError:
            kind = "a whole number" if whole else "a number"
            raise CourseError(f"{box.description} must be {kind}, got {text!r}") from None

    def compute():
        values = [parse(b, whole=i < 4) for i, b in enumerate(boxes)]
        return values, kv_cache_bytes(*values)

    def draw(result):
        (L, T, H, Dh, B), size = result
        text = (f"2 x {L} layers x {T:,} tokens x {H} heads x {Dh} x {B:g} bytes = {size:,.0f} bytes "
                f"= {size / 1e9:,.2f} GB ({size / 2 ** 30:,.2f} GiB)")
        return f'<p class="course-kv-result" role="status"><strong>{html.escape(text)}</strong></p>'

    return explorer_box([boxes[:3], boxes[3:]], compute, draw)


def _map_alt(kind: str, view_points: str, coords, labels, groups) -> str:
    """Words for a map: which group sits where, and each point's nearest neighbour on the page."""
    import numpy as np

    pts = np.asarray(coords, float)
    d = ((pts[:, None] - pts[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    pairs = "; ".join(f"{labels[i]} next to {labels[int(d[i].argmin())]}" for i in range(min(len(labels), 8)))
    return f"{kind} of {map_views_title(view_points)}, coloured by group. Nearest on the page: {pairs}."


def map_views_title(points: str) -> str:
    from .map_views import POINT_SETS
    return POINT_SETS.get(points, points)


def tsne_explorer(points: str = "calling-game", perplexity: float = 5, seeds: tuple[int, int] = (0, 1)):
    """Two t-SNE layouts of the same points side by side, one per seed, with perplexity on a slider.

    Every layout the controls can reach on a point set is computed when the set is first shown
    (0.5 s for the 28 rows, 3 s for the 84), so a perplexity or seed step only looks one up."""
    import ipywidgets as W

    from .map_views import PERPLEXITIES, POINT_SETS, SEEDS, point_set, tsne_view, warm_tsne
    which = W.Dropdown(options=[(v, k) for k, v in POINT_SETS.items()], value=points, description="points",
                       style=STYLE, layout=W.Layout(width="26em"))
    perp = W.SelectionSlider(options=list(PERPLEXITIES), value=perplexity, description="perplexity",
                             continuous_update=True, style=STYLE, layout=W.Layout(width="30em"))
    left = W.SelectionSlider(options=list(SEEDS), value=seeds[0], description="left seed", style=STYLE)
    right = W.SelectionSlider(options=list(SEEDS), value=seeds[1], description="right seed", style=STYLE)

    def draw(view):
        ps = point_set(view.points)
        panels = []
        for seed, y, kept in zip(view.seeds, view.layouts, view.kept):
            title = f"seed {seed}: {kept:.0%} of 5 nearest neighbours kept"
            alt = (_map_alt(f"t-SNE layout (perplexity {view.perplexity:g}, seed {seed})", view.points, y,
                            ps.labels, ps.groups) + f" {kept:.0%} of each point's 5 nearest neighbours kept.")
            panels.append(charts.scatter_chart(y, ps.labels, ps.groups, alt, title=title, axes=False))
        return charts.side_by_side(panels)

    def compute():
        warm_tsne(which.value)     # a no-op once the set's layouts are cached
        return tsne_view(which.value, perp.value, left.value, right.value)

    return explorer_box([[which, perp], [left, right]], compute, draw)


def plane_builder(points: str = "calling-game", axis_1: str = "Paolo - Pietro",
                  axis_2: str = "Tarso + Cefa - capo - vice"):
    """A concept plane from two axes the reader types: tokens, or sums and differences of tokens."""
    import ipywidgets as W

    from .map_views import POINT_SETS, plane_view, point_set

    which = W.Dropdown(options=[(v, k) for k, v in POINT_SETS.items()], value=points, description="points",
                       style=STYLE, layout=W.Layout(width="26em"))
    first = W.Text(value=axis_1, description="axis 1", continuous_update=False, style=STYLE,
                   layout=W.Layout(width="22em"))
    second = W.Text(value=axis_2, description="axis 2", continuous_update=False, style=STYLE,
                    layout=W.Layout(width="22em"))

    def draw(view):
        ps = point_set(view.points)
        t1, t2 = view.axes_text
        title = f"plane holds {view.spread:.0%} of the spread; axes' cosine before Gram-Schmidt {view.raw_overlap:+.2f}"
        alt = _map_alt(f"Concept plane with axis 1 = {t1} and axis 2 = {t2} made orthogonal to it", view.points,
                       view.coords, ps.labels, ps.groups) + f" The plane holds {view.spread:.0%} of the spread."
        return charts.scatter_chart(view.coords, ps.labels, ps.groups, alt, title=title, xlabel=t1,
                                    ylabel=f"{t2} (orthogonalised)", width=640, height=480)

    return explorer_box([[which], [first, second]], lambda: plane_view(which.value, first.value, second.value), draw)


def path_explorer(lm, prompt: str = "<BOS> Pietro chiama Paolo", toward: str = "Tarso", against: str = "Paolo"):
    """Switch heads and MLPs off and watch the residual stream's path on the concept plane change."""
    import ipywidgets as W

    from .ablation import all_heads, head_name
    from .figures import PALETTE
    from .trajectory import path_view

    heads = all_heads(lm.model)
    layers = range(lm.model.cfg.n_layers)
    head_toggles = [W.ToggleButton(value=False, description=head_name(h), tooltip=f"switch layer {h[0]} head {h[1]} off",
                                   layout=W.Layout(width="5.5em")) for h in heads]
    mlp_toggles = [W.ToggleButton(value=False, description=f"MLP {layer}", tooltip=f"switch block {layer}'s MLP off",
                                  layout=W.Layout(width="6em")) for layer in layers]

    def compute():
        return path_view(lm, prompt, [h for h, t in zip(heads, head_toggles) if t.value],
                         [layer for layer, t in zip(layers, mlp_toggles) if t.value], toward, against)

    def draw(view):
        off = ", ".join([head_name(h) for h in view.heads_off] + [f"MLP {m}" for m in view.mlps_off]) or "nothing"
        stages = [charts_stage(s) for s in view.intact.stages]
        end, end0 = view.ablated.coords[-1], view.intact.coords[-1]
        alt = (f"The last position of {prompt} on the plane ({toward}, {against} orthogonalised), after each stage. "
               f"Intact it ends at ({end0[0]:.2f}, {end0[1]:.2f}) with P({toward}) {view.prob_intact:.3f}; "
               f"with {off} switched off it ends at ({end[0]:.2f}, {end[1]:.2f}) with P({toward}) {view.prob:.3f}.")
        paths = [("intact", view.intact.coords, PALETTE["muted"])]
        if view.heads_off or view.mlps_off:
            paths.append((f"off: {off}", view.ablated.coords, PALETTE["accent"]))
        return charts.path_chart(paths, stages, alt,
                                 title=f"off: {off}  |  P({toward}) {view.prob:.3f} (intact {view.prob_intact:.3f})",
                                 xlabel=f"along {toward}", ylabel=f"along {against}, orthogonalised")

    for t in head_toggles + mlp_toggles:
        t.add_class("course-head-toggle")
    return explorer_box([head_toggles, mlp_toggles], compute, draw)


def charts_stage(stage: str) -> str:
    """'blocks.1.mlp' -> 'MLP 1', 'blocks.0.attn' -> 'attention 0', 'embed' -> 'embedding'."""
    if stage == "embed":
        return "embedding"
    _, layer, kind = stage.split(".")
    return f"{'MLP' if kind == 'mlp' else 'attention'} {layer}"
