"""The registry of the library's figure functions, each drawn with the arguments a chapter gives it.

`tests/pictures/test_legibility.py` draws every entry (Agg) and holds it to lib.pictures.legibility:
nothing outside the canvas, no text too small on the page, no tick labels or titles over each other,
text on a coloured ground at WCAG contrast. (The chapters' own figures meet the same rules when the
book is built: figures.show, figures.with_alt and figures.check warn, and a warning fails the build.)

Adding a figure function: register an example here with `@example("name")`, returning the figure.
"""
from __future__ import annotations

from typing import Callable

import lib
from lib.analysis.lens import lens_view
from lib.analysis.maps import pca
from lib.analysis.trajectory import residual_trajectory
from lib.content.conveyor import referee, run_belt
from lib.content.convolution import ocr_pass
from lib.content.point_sets import point_set
from lib.content.prompts import CONFIDENT, UNCERTAIN
from lib.content.worked_examples import FILTERS, stroke_image
from lib.model.readout import prompt_logits, results_page
from lib.pictures import figures

FIGURES: dict[str, Callable] = {}


def example(name: str):
    def register(draw):
        FIGURES[name] = draw
        return draw
    return register


def _lm():
    return lib.load("calling-game")


@example("results_page: three pages side by side (hallucination)")
def _results_pages():
    lm = _lm()
    fig, axes = figures.subplots(1, 3, height=2.9)
    for ax, prompt in zip(axes, ("<BOS> Pietro chiama Pietro", "<BOS> banana chiama", "<BOS> Tarso Tarso Tarso")):
        page = results_page(prompt_logits(lm, prompt), lm.vocab.tokens)
        figures.results_page(ax, [(c.token, c.prob) for c in page], title=prompt, k=6)
    return fig


@example("results_page: ten lines, two pages (search-by-hand)")
def _results_pages_ten():
    lm = _lm()
    fig, axes = figures.subplots(1, 2, height=3.4)
    for ax, prompt, xmax in ((axes[0], CONFIDENT, 1.0), (axes[1], UNCERTAIN, 0.5)):
        page = results_page(prompt_logits(lm, prompt), lm.vocab.tokens)
        figures.results_page(ax, [(c.token, c.prob) for c in page], title=prompt, highlight="Tarso", xmax=xmax)
    return fig


@example("lens_grid over lens_climb (lever)")
def _lens():
    view = lens_view(_lm(), CONFIDENT, "Tarso")
    fig, (top, bottom) = figures.subplots(2, 1, height=5.6, gridspec_kw={"height_ratios": [3, 2]})
    figures.lens_grid(top, view)
    figures.lens_climb(bottom, view)
    return fig


@example("trajectory (lever, residual-path)")
def _trajectory():
    fig, ax = figures.subplots(height=3.2, width=6.5)
    figures.trajectory(ax, residual_trajectory(_lm(), CONFIDENT))
    return fig


@example("belt_strip (tools)")
def _belt():
    return figures.belt_strip(run_belt(_lm(), "<BOS>", referee(seed=0)), "one round, the referee as the tool")


@example("scatter_map: the calling game's rows on PCA, with legend (three-ways)")
def _scatter():
    ps = point_set("calling-game")
    fig, ax = figures.subplots(height=4.2)
    figures.scatter_map(ax, pca(ps.vectors).coords[:, :2], list(ps.labels), list(ps.groups),
                        title="(b) PCA: top 2 hold most of the spread", xlabel="PC 1", ylabel="PC 2", legend=True)
    return fig


@example("number_grids: a convolution's five grids (why-attention)")
def _grids():
    image = stroke_image()
    run = ocr_pass(image, FILTERS)
    return figures.number_grids([("image", image), ("vertical filter: map", run["conv"]["vertical"]),
                                 ("after ReLU", run["relu"]["vertical"]),
                                 ("after 2x2 max-pool, stride 1", run["pool"]["vertical"]),
                                 ("horizontal filter: pooled", run["pool"]["horizontal"])])
