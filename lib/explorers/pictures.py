"""Every explorer's picture as a function of its control values: one place that both the live widgets
(lib.explorers.widgets) and the website's precomputed grids (lib.explorers.static) call, so they cannot differ.

Each function computes the explorer's view with the pure functions of lib.explorers.views and friends,
and draws it as SVG with lib.pictures.charts, with a description in words for screen readers. A bad value
raises CourseError with a sentence saying what is allowed.
"""
from __future__ import annotations

import html

from lib.pictures import charts
from lib.explorers import views as explorers
from lib.analysis.lens import stage_label
from lib.pictures.figures import PALETTE
from lib.model.readout import prompt_logits


def _top(pairs, n: int = 5) -> str:
    return ", ".join(f"{t} {p:.3f}" for t, p in list(pairs)[:n])


# ----------------------------------------------------------------------------- Part 3
def temperature_figure(lm, prompt: str, temperature: float, k: int = 10) -> str:
    page = explorers.temperature_page(lm, prompt, temperature, k)
    alt = (f"Bar chart of the most probable next tokens after {prompt} at temperature "
           f"{temperature:.2f}: {_top(page)}.")
    return charts.bar_chart(page, alt, title=f"{prompt}  ->  (temperature {temperature:.2f})")


def sampling_chart(view, alt: str, title: str) -> str:
    """The page after the temperature (pale) and the distribution rolled on (solid)."""
    rows = [(r.token, r.final) for r in view.rows]
    texts = [f"{r.final:.3f}" if r.final > 0 else "cut" for r in view.rows]
    legend = [(PALETTE["muted"], "after temperature"), (PALETTE["main"], "rolled on (after truncation)")]
    return charts.bar_chart(rows, alt, title=title, ghost=[r.heated for r in view.rows], value_text=texts,
                            legend=legend)


def _sampling_view(lm, prompt, temperature, top_k, top_p, greedy, seed, k, logits=None):
    return explorers.sampling_view(lm, prompt, temperature, explorers.parse_top_k(top_k),
                                   explorers.parse_top_p(top_p), greedy, seed, k, logits)


def sampling_page(lm, prompt: str, temperature: float, top_k, top_p, k: int = 10, logits=None) -> str:
    """The reshaped page; it does not depend on the seed (the roll happens after)."""
    view = _sampling_view(lm, prompt, temperature, top_k, top_p, False, 0, k, logits)
    alt = (f"Bar chart of the next-token page after {prompt} at temperature {temperature:.2f}. "
           f"{view.survivors} tokens survive truncation. Distribution rolled on: "
           + _top((r.token, r.final) for r in view.rows if r.final > 0) + ".")
    return sampling_chart(view, alt, f"{prompt}: {view.survivors} tokens survive truncation")


def sampling_pick(lm, prompt: str, temperature: float, top_k, top_p, greedy: bool, seed: int, k: int = 10,
                  logits=None) -> str:
    """The line that says which token this roll (or greedy decoding) picks."""
    view = _sampling_view(lm, prompt, temperature, top_k, top_p, greedy, seed, k, logits)
    how = "Greedy decoding" if view.greedy else f"The roll with seed {seed}"
    p = dict((r.token, r.final) for r in view.rows).get(view.chosen, 0.0)
    return f'<p class="course-pick" role="status">{how} picks <b>{html.escape(view.chosen)}</b> (p = {p:.3f})</p>'


def sampling_figure(lm, prompt: str, temperature: float, top_k, top_p, greedy: bool, seed: int, k: int = 10) -> str:
    """`top_k` and `top_p` as the reader typed them ("" for no limit)."""
    logits = prompt_logits(lm, prompt)      # one forward pass for the pick and the page
    return (sampling_pick(lm, prompt, temperature, top_k, top_p, greedy, seed, k, logits)
            + sampling_page(lm, prompt, temperature, top_k, top_p, k, logits))


def lens_figure(lm, prompt: str, track: str = "", k: int = 3) -> str:
    view = explorers.lens_view(lm, prompt, track, k)
    stages = "; ".join(f"after {s}: {top[0][0]} {top[0][1]:.3f}" for s, top in zip(view.stages, view.top))
    climb = ", ".join(f"{p:.3f}" for p in view.track_probs)
    alt = f"Logit lens on {prompt}. Top token {stages}. Probability of {view.track} stage by stage: {climb}."
    return charts.lens_chart(view, alt)


# ----------------------------------------------------------------------------- Part 1
def pattern_figure(lm, prompt: str, layer: int, head: int) -> str:
    view = explorers.pattern_view(lm, prompt, layer, head)
    last = ", ".join(f"{t} {p:.2f}" for t, p in zip(view.tokens, view.pattern[-1]))
    alt = f"Attention pattern of layer {view.layer}, head {view.head} on {prompt}. The last position attends to: {last}."
    return charts.heatmap(view.pattern, view.tokens, view.tokens, alt, title=f"layer {view.layer}, head {view.head}",
                          masked_upper=True)


def ablation_page(lm, prompt: str, off, track: str | None = None, view=None) -> str:
    """The results page with the heads in `off` switched off (`view`: the ablation_view, if known)."""
    from lib.analysis.ablation import ablation_view, head_name

    view = view or ablation_view(lm, prompt, off, track)
    names = ", ".join(head_name(h) for h in view.off) or "none"
    alt = (f"With heads switched off: {names}. After {prompt} the model now gives {view.track} "
           f"{view.track_prob:.3f} (intact: {view.track_prob_intact:.3f}). Best next tokens: " + _top(view.page) + ".")
    return charts.bar_chart(view.page, alt, highlight=view.track,
                            title=f"heads off: {names}  |  P({view.track}) {view.track_prob:.3f} "
                                  f"(intact {view.track_prob_intact:.3f})")


def ablation_head(lm, prompt: str, off, head, view=None) -> str:
    """One head's pattern with the heads in `off` switched off (faded if it is one of them).

    A head's pattern depends only on the heads of earlier layers (and on whether it is itself off,
    for the fading), which is what lets the website store each head's picture separately."""
    from lib.analysis.ablation import ablation_view, head_name

    view = view or ablation_view(lm, prompt, off, None)
    name = head_name(head)
    is_off = head in view.off
    alt = f"Attention pattern of head {name} on {prompt}" + (", switched off." if is_off else ".")
    svg = charts.heatmap_grid([(name, view.patterns[head])], view.tokens, view.tokens, alt,
                              per_row=1, dimmed=[name] if is_off else [])
    return charts.cell(svg, basis=150)


def ablation_figure(lm, prompt: str, off, track: str | None = None) -> str:
    from lib.analysis.ablation import ablation_view, all_heads

    view = ablation_view(lm, prompt, off, track)      # one run serves the page and every head
    heads = all_heads(lm.model)
    rows = [charts.ROW_OPEN + "".join(ablation_head(lm, prompt, off, h, view) for h in heads if h[0] == layer)
            + charts.ROW_CLOSE for layer in range(lm.model.cfg.n_layers)]
    return ablation_page(lm, prompt, off, track, view) + "".join(rows)


def kv_cache_figure(layers, context, heads, d_head, bytes_per_element) -> str:
    from lib.analysis.inventory import kv_cache_bytes

    size = kv_cache_bytes(layers, context, heads, d_head, bytes_per_element)
    text = (f"2 x {layers} layers x {context:,} tokens x {heads} heads x {d_head} x {bytes_per_element:g} bytes = "
            f"{size:,.0f} bytes = {size / 1e9:,.2f} GB ({size / 2 ** 30:,.2f} GiB)")
    return f'<p class="course-kv-result" role="status"><strong>{html.escape(text)}</strong></p>'


# ----------------------------------------------------------------------------- Part 2
def _map_alt(kind: str, points: str, coords, labels, groups) -> str:
    """Words for a map: what it is and each of the first points' nearest neighbour on the page."""
    import numpy as np

    from lib.explorers.map_views import POINT_SETS

    pts = np.asarray(coords, float)
    d = ((pts[:, None] - pts[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    pairs = "; ".join(f"{labels[i]} next to {labels[int(d[i].argmin())]}" for i in range(min(len(labels), 8)))
    return f"{kind} of {POINT_SETS.get(points, points)}, coloured by group. Nearest on the page: {pairs}."


def tsne_panel(points: str, perplexity, seed) -> str:
    """One t-SNE layout, in its cell of the explorer's row."""
    from lib.explorers.map_views import point_set, tsne_view, warm_tsne

    warm_tsne(points)       # a no-op once the set's layouts are cached
    view = tsne_view(points, perplexity, seed, seed)
    ps = point_set(points)
    y, kept = view.layouts[0], view.kept[0]
    alt = (_map_alt(f"t-SNE layout (perplexity {view.perplexity:g}, seed {view.seeds[0]})", points, y, ps.labels,
                    ps.groups) + f" {kept:.0%} of each point's 5 nearest neighbours kept.")
    return charts.cell(charts.scatter_chart(y, ps.labels, ps.groups, alt,
                                            title=f"seed {view.seeds[0]}: {kept:.0%} of 5 nearest neighbours kept",
                                            axes=False))


def tsne_figure(points: str, perplexity, seed_left, seed_right) -> str:
    # Each panel checks its own values; a bad one raises before anything is returned.
    return charts.ROW_OPEN + tsne_panel(points, perplexity, seed_left) + tsne_panel(points, perplexity, seed_right) \
        + charts.ROW_CLOSE


def plane_figure(points: str, axis_1: str, axis_2: str) -> str:
    from lib.explorers.map_views import plane_view, point_set

    view = plane_view(points, axis_1, axis_2)
    ps = point_set(points)
    t1, t2 = view.axes_text
    title = f"plane holds {view.spread:.0%} of the spread; axes' cosine before Gram-Schmidt {view.raw_overlap:+.2f}"
    alt = _map_alt(f"Concept plane with axis 1 = {t1} and axis 2 = {t2} made orthogonal to it", points, view.coords,
                   ps.labels, ps.groups) + f" The plane holds {view.spread:.0%} of the spread."
    return charts.scatter_chart(view.coords, ps.labels, ps.groups, alt, title=title, xlabel=t1,
                                ylabel=f"{t2} (orthogonalised)", width=640, height=480)


def path_figure(lm, prompt: str, heads_off=(), mlps_off=(), toward: str = "Tarso", against: str = "Paolo") -> str:
    from lib.analysis.ablation import head_name
    from lib.analysis.trajectory import path_view

    view = path_view(lm, prompt, heads_off, mlps_off, toward, against)
    off = ", ".join([head_name(h) for h in view.heads_off] + [f"MLP {m}" for m in view.mlps_off]) or "nothing"
    stages = [stage_label(s) for s in view.intact.stages]
    end, end0 = view.ablated.coords[-1], view.intact.coords[-1]
    alt = (f"The last position of {prompt} on the plane ({toward}, {against} orthogonalised), after each stage. "
           f"Intact it ends at ({end0[0]:.2f}, {end0[1]:.2f}) with P({toward}) {view.prob_intact:.3f}; "
           f"with {off} switched off it ends at ({end[0]:.2f}, {end[1]:.2f}) with P({toward}) {view.prob:.3f}.")
    paths = [("intact", view.intact.coords, PALETTE["muted"])]
    if view.heads_off or view.mlps_off:
        paths.append((f"off: {off}", view.ablated.coords, PALETTE["accent"]))
    return charts.path_chart(paths, stages, alt,
                             title=f"off: {off}  |  P({toward}) {view.prob:.4f} (intact {view.prob_intact:.4f})",
                             xlabel=f"along {toward}", ylabel=f"along {against}, orthogonalised")
