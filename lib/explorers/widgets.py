"""Live views for a kernel: ipywidgets controls around the explorers.

Every explorer is built by `explorer_box`: controls, a message line and a chart. On each change
it calls the explorer's pure function; a `CourseError` (an unknown word, an empty prompt, a top-p
of 2) is shown as a sentence in the message line and the last good chart stays, so a bad value
never becomes a traceback in front of a learner and nothing on screen is lost.

The charts are SVG from `lib.pictures.charts` (a matplotlib PNG takes longer than a slider step may), each
with a description in words that a screen reader announces, and that the saved page keeps.
"""
from __future__ import annotations

import html
from typing import Callable, Sequence

from lib.explorers import pictures as figs
from lib.explorers import static_specs
from lib.errors import CourseError
from lib.explorers.static import StaticExplorer, building

STYLE = {"description_width": "initial"}


def prompt_box(prompts: Sequence[str], width: str = "26em"):
    """A text box with the chapter's prompts offered, where any other prompt may be typed."""
    import ipywidgets as W

    return W.Combobox(value=prompts[0], options=list(prompts), description="prompt", ensure_option=False,
                      layout=W.Layout(width=width), style=STYLE)


def explorer_box(rows: Sequence[Sequence], compute: Callable[[], object], draw: Callable[[object], str],
                 static: Callable[[], "StaticExplorer"] | None = None):
    """Lay out rows of controls over a chart; redraw on every change.

    `compute()` reads the controls and returns what to show (or raises `CourseError`);
    `draw(view)` returns the chart as an SVG string. `static()` builds the explorer's version for
    the website (lib.explorers.static); it is called only while the book is built.
    """
    import ipywidgets as W

    class ExplorerBox(W.VBox):
        """A VBox that, while the book is built, also carries its static version as text/html:
        the website shows that, JupyterLab the live widget."""

        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            if static is not None and building():
                bundle = dict(bundle)
                bundle["text/html"] = static().render()
            return bundle

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
    box = ExplorerBox([W.HBox(list(row)) for row in rows] + [message, figure])
    box.add_class("course-explorer")
    return box


def _same(x):
    return x


def temperature_explorer(lm, prompts: list[str], temperature: float = 1.0, k: int = 10):
    """A temperature slider and a prompt box over the model's results page."""
    import ipywidgets as W

    slider = W.FloatLogSlider(value=temperature, base=10, min=-1, max=1, step=0.05,
                              description="temperature", readout_format=".2f", style=STYLE)
    prompt = prompt_box(prompts)
    return explorer_box([[prompt, slider]], lambda: figs.temperature_figure(lm, prompt.value, slider.value, k), _same,
                        static=lambda: static_specs.temperature(lm, prompts, temperature, k))


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
        return figs.sampling_figure(lm, prompt.value, temperature.value, top_k.value, top_p.value, use_greedy.value,
                                    seed.value, k)

    return explorer_box([[prompt, temperature], [top_k, top_p, use_greedy], [seed]], compute, _same,
                        static=lambda: static_specs.sampling(lm, prompts, k))


def lens_explorer(lm, prompts: list[str], track: str = "", k: int = 3):
    """The logit lens on any prompt: the ranking after each stage, and one token's climb."""
    import ipywidgets as W

    prompt = prompt_box(prompts)
    tracked = W.Text(value=track, placeholder="the final winner", description="follow the token",
                     layout=W.Layout(width="16em"), style=STYLE)
    return explorer_box([[prompt, tracked]], lambda: figs.lens_figure(lm, prompt.value, tracked.value, k), _same,
                        static=lambda: static_specs.lens(lm, prompts, track, k))


def pattern_viewer(lm, prompts: list[str], layer: int = 0, head: int = 0):
    """Any head's attention pattern on any prompt: rows are the positions that read, columns the
    positions they read from."""
    import ipywidgets as W

    prompt = prompt_box(prompts)
    layer_pick = W.Dropdown(options=list(range(lm.model.cfg.n_layers)), value=layer, description="layer",
                            layout=W.Layout(width="9em"), style=STYLE)
    head_pick = W.Dropdown(options=list(range(lm.model.cfg.n_heads)), value=head, description="head",
                           layout=W.Layout(width="9em"), style=STYLE)
    return explorer_box([[prompt, layer_pick, head_pick]],
                        lambda: figs.pattern_figure(lm, prompt.value, layer_pick.value, head_pick.value), _same,
                        static=lambda: static_specs.pattern(lm, prompts, layer, head))


def ablation_explorer(lm, prompts: list[str], track: str = ""):
    """A toggle for every head: switch heads off and watch the results page and the patterns."""
    import ipywidgets as W

    from lib.analysis.ablation import all_heads, head_name

    prompt = prompt_box(prompts)
    tracked = W.Text(value=track, placeholder="the intact model's answer", description="follow the token",
                     layout=W.Layout(width="16em"), style=STYLE)
    heads = all_heads(lm.model)
    toggles = [W.ToggleButton(value=False, description=head_name(h), tooltip=f"switch layer {h[0]} head {h[1]} off",
                              layout=W.Layout(width="5.5em")) for h in heads]

    def compute():
        off = [h for h, t in zip(heads, toggles) if t.value]
        return figs.ablation_figure(lm, prompt.value, off, tracked.value.strip() or None)

    for t in toggles:
        t.add_class("course-head-toggle")
    return explorer_box([[prompt, tracked], toggles], compute, _same,
                        static=lambda: static_specs.ablation(lm, prompts, track))


def kv_cache_calculator(layers: int = 32, context: int = 32768, heads: int = 32, d_head: int = 128,
                        bytes_per_element: float = 2):
    """The memory of a KV cache: type the sizes, read the total."""
    import ipywidgets as W

    defaults = (layers, context, heads, d_head, bytes_per_element)
    boxes = [W.Text(value=str(v), description=d, layout=W.Layout(width="13em"), style=STYLE)
             for d, v in zip(static_specs.KV_LABELS, defaults)]

    def parse(box, whole: bool):
        text = box.value.strip()
        try:
            return int(text) if whole else float(text)
        except ValueError:
            kind = "a whole number" if whole else "a number"
            raise CourseError(f"{box.description} must be {kind}, got {text!r}") from None

    def compute():
        return figs.kv_cache_figure(*[parse(b, whole=i < 4) for i, b in enumerate(boxes)])

    return explorer_box([boxes[:3], boxes[3:]], compute, _same, static=lambda: static_specs.kv_cache(defaults))


def tsne_explorer(points: str = "calling-game", perplexity: float = 5, seeds: tuple[int, int] = (0, 1)):
    """Two t-SNE layouts of the same points side by side, one per seed, with perplexity on a slider.

    Every layout the controls can reach on a point set is computed when the set is first shown
    (0.5 s for the 28 rows, 3 s for the 84), so a perplexity or seed step only looks one up."""
    import ipywidgets as W

    from lib.explorers.map_views import PERPLEXITIES, POINT_SETS, SEEDS

    which = W.Dropdown(options=[(v, k) for k, v in POINT_SETS.items()], value=points, description="points",
                       style=STYLE, layout=W.Layout(width="26em"))
    perp = W.SelectionSlider(options=list(PERPLEXITIES), value=perplexity, description="perplexity",
                             continuous_update=True, style=STYLE, layout=W.Layout(width="30em"))
    left = W.SelectionSlider(options=list(SEEDS), value=seeds[0], description="left seed", style=STYLE)
    right = W.SelectionSlider(options=list(SEEDS), value=seeds[1], description="right seed", style=STYLE)
    return explorer_box([[which, perp], [left, right]],
                        lambda: figs.tsne_figure(which.value, perp.value, left.value, right.value), _same,
                        static=lambda: static_specs.tsne(points, perplexity, seeds))


def plane_builder(points: str = "calling-game", axis_1: str = "Paolo - Pietro",
                  axis_2: str = "Tarso + Cefa - capo - vice"):
    """A concept plane from two axes the reader types: tokens, or sums and differences of tokens."""
    import ipywidgets as W

    from lib.explorers.map_views import POINT_SETS

    which = W.Dropdown(options=[(v, k) for k, v in POINT_SETS.items()], value=points, description="points",
                       style=STYLE, layout=W.Layout(width="26em"))
    first = W.Text(value=axis_1, description="axis 1", continuous_update=False, style=STYLE,
                   layout=W.Layout(width="22em"))
    second = W.Text(value=axis_2, description="axis 2", continuous_update=False, style=STYLE,
                    layout=W.Layout(width="22em"))
    return explorer_box([[which], [first, second]], lambda: figs.plane_figure(which.value, first.value, second.value),
                        _same, static=lambda: static_specs.plane(points, axis_1, axis_2))


def path_explorer(lm, prompt: str = "<BOS> Pietro chiama Paolo", toward: str = "Tarso", against: str = "Paolo"):
    """Switch heads and MLPs off and watch the residual stream's path on the concept plane change."""
    import ipywidgets as W

    from lib.analysis.ablation import all_heads, head_name

    heads = all_heads(lm.model)
    layers = range(lm.model.cfg.n_layers)
    head_toggles = [W.ToggleButton(value=False, description=head_name(h), tooltip=f"switch layer {h[0]} head {h[1]} off",
                                   layout=W.Layout(width="5.5em")) for h in heads]
    mlp_toggles = [W.ToggleButton(value=False, description=f"MLP {layer}", tooltip=f"switch block {layer}'s MLP off",
                                  layout=W.Layout(width="6em")) for layer in layers]

    def compute():
        return figs.path_figure(lm, prompt, [h for h, t in zip(heads, head_toggles) if t.value],
                                [layer for layer, t in zip(layers, mlp_toggles) if t.value], toward, against)

    for t in head_toggles + mlp_toggles:
        t.add_class("course-head-toggle")
    return explorer_box([head_toggles, mlp_toggles], compute, _same,
                        static=lambda: static_specs.path(lm, prompt, toward, against))
