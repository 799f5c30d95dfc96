"""Live views for a kernel: ipywidgets controls around the explorers, drawn with matplotlib.

Every explorer is built by `explorer_box`: controls, a message line and a figure. On each change
it calls the explorer's pure function; a `CourseError` (an unknown word, an empty prompt, a top-p
of 2) is shown as a sentence in the message line and the last good figure stays, so a bad value
never becomes a traceback in front of a learner and nothing on screen is lost.

The figure is an <img> with alt text written from what it shows (an HTML widget, not an Output
widget), so a screen reader hears the new page after every change, and the saved page shows the
default state with its description.
"""
from __future__ import annotations

import base64
import html
import io
from typing import Callable, Sequence

import matplotlib.pyplot as plt

from . import explorers, figures
from .errors import CourseError

STYLE = {"description_width": "initial"}


def prompt_box(prompts: Sequence[str], width: str = "26em"):
    """A text box with the chapter's prompts offered, where any other prompt may be typed."""
    import ipywidgets as W

    return W.Combobox(value=prompts[0], options=list(prompts), description="prompt", ensure_option=False,
                      layout=W.Layout(width=width), style=STYLE)


def figure_html(fig, alt: str, dpi: int = 96) -> str:
    """A matplotlib figure as an <img> tag with its alt text (the figure is closed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" style="max-width:100%">'


def explorer_box(rows: Sequence[Sequence], compute: Callable[[], object], draw: Callable[[object], object],
                 describe: Callable[[object], str]):
    """Lay out rows of controls over a figure; redraw on every change.

    `compute()` reads the controls and returns what to show (or raises `CourseError`);
    `draw(view)` makes a matplotlib figure of it; `describe(view)` says in words what it shows.
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
        draw(view)
        figure.value = figure_html(plt.gcf(), describe(view))

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
        fig, ax = plt.subplots(figsize=(6, 3.2))
        figures.results_page(ax, page, title=f"{prompt.value}  ->  (temperature {slider.value:.2f})")
        fig.tight_layout()

    def describe(page):
        return (f"Bar chart of the most probable next tokens after {prompt.value} at temperature "
                f"{slider.value:.2f}: {_top(page)}.")

    return explorer_box([[prompt, slider]],
                        lambda: explorers.temperature_page(lm, prompt.value, slider.value, k), draw, describe)


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
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        how = "greedy" if view.greedy else f"roll with seed {seed.value}"
        figures.sampling_page(ax, view, title=f"{view.survivors} tokens survive; {how} picks {view.chosen}")
        fig.tight_layout()

    def describe(view):
        how = "greedy decoding" if view.greedy else f"the roll with seed {seed.value}"
        return (f"Bar chart of the next-token page after {prompt.value} at temperature {temperature.value:.2f}. "
                f"{view.survivors} tokens survive truncation; {how} picks {view.chosen}. Distribution rolled on: "
                + _top((r.token, r.final) for r in view.rows if r.final > 0) + ".")

    return explorer_box([[prompt, temperature], [top_k, top_p, use_greedy], [seed]], compute, draw, describe)


def lens_explorer(lm, prompts: list[str], track: str = "", k: int = 3):
    """The logit lens on any prompt: the ranking after each stage, and one token's climb."""
    import ipywidgets as W

    prompt = prompt_box(prompts)
    tracked = W.Text(value=track, placeholder="the final winner", description="follow the token",
                     layout=W.Layout(width="16em"), style=STYLE)

    def draw(view):
        fig, (left, right) = plt.subplots(1, 2, figsize=(9, 2.9), gridspec_kw={"width_ratios": [3, 2]})
        figures.lens_grid(left, view)
        figures.lens_climb(right, view)
        fig.tight_layout()

    def describe(view):
        stages = "; ".join(f"after {s}: {top[0][0]} {top[0][1]:.3f}" for s, top in zip(view.stages, view.top))
        climb = ", ".join(f"{p:.3f}" for p in view.track_probs)
        return (f"Logit lens on {prompt.value}. Top token {stages}. Probability of {view.track} "
                f"stage by stage: {climb}.")

    return explorer_box([[prompt, tracked]], lambda: explorers.lens_view(lm, prompt.value, tracked.value, k),
                        draw, describe)
