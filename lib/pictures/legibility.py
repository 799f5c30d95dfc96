"""Whether a matplotlib figure reads on the page: measured on the drawn figure, not judged by eye.

`problems(fig)` draws the figure (Agg) and lists, in words:

- text outside the canvas (a clipped title, legend or tick label);
- text too small where the page shows it: every text must be at least MIN_TEXT_PX CSS pixels as
  shown at 1280 px and at 390 px (issue 39). A figure wider than the book's column (PAGE_PX) would be
  shrunk to it at desktop width, so its text would shrink too (`page_scale`); the course draws none
  that wide (lib.pictures.figures.PAGE_WIDTH). A phone's column (about 342 px) is narrower than most
  figures: there the site does not shrink a figure but lets it scroll sideways in its output
  (_assets/course.css; tests/browser/test_site.py holds the site to it), so a figure is shown at the
  size it was drawn at both widths and one scale covers both;
- two tick labels of one axis that overlap, or a title, axis label or text in the axes that overlaps
  a tick label, an axis label or a title;
- text on a coloured ground (a heatmap's cell, a bar, a box) below WCAG's contrast: 4.5:1, or 3:1 for
  large text. The ground is read from the figure drawn without its text, under the text's own box, so
  it is the colour the colour map and its norm gave the cell (or the patch its face colour).

`check(fig)` warns (FigureLegibilityWarning) with the list: the book's build fails on any warning a
chapter prints, so every figure the chapters show is held to these rules with the chapters' own data.
"""
from __future__ import annotations

import warnings

import numpy as np

from lib.pictures.colours import CONTRAST_LARGE, CONTRAST_TEXT, luminance

# The book theme's article column at desktop width, in CSS pixels (measured on the built site at
# 1280 px; a wider window does not widen it). A figure is never shown wider.
PAGE_PX = 672
# A phone's column at 390 px (the theme's padding aside): a figure wider than this is drawn again at this width
# for phones where its words still read there (lib.pictures.figures.phone_png).
PHONE_PX = 342
# The smallest text a figure may show on the page, in CSS pixels, at 1280 px and at 390 px (issue 39;
# the page's body text is 16 px). At the figures' 100 dpi that is 7.92 points: 8-point text passes.
MIN_TEXT_PX = 11.0
# WCAG's large text: 18 pt (24 CSS px), or 14 pt bold (18.7 CSS px).
LARGE_PX, LARGE_BOLD_PX = 24.0, 18.66
# Overlaps smaller than this many pixels on either side are rounding, not a clash.
SLACK = 1.0


class FigureLegibilityWarning(UserWarning):
    """A figure would not read on the page (see lib.pictures.legibility)."""


def page_scale(fig, dpi: float | None = None) -> float:
    """CSS pixels on the page per figure pixel, for a figure saved at `dpi` (the figure's own by default)."""
    dpi = dpi or fig.dpi
    width_px = fig.get_figwidth() * dpi
    return min(1.0, PAGE_PX / width_px) * (dpi / fig.dpi)


def _drawn_ticklabels(axis):
    """The tick labels an axis actually draws: visible, not empty, at a tick inside the view."""
    lo, hi = sorted(axis.get_view_interval())
    tol = 1e-9 * max(abs(hi - lo), 1e-300)
    out = []
    for locs, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks), (axis.get_minorticklocs(), axis.get_minor_ticks)):
        for loc, tick in zip(locs, ticks(len(locs))):
            if not (lo - tol <= loc <= hi + tol) or not tick.get_visible():
                continue
            out += [t for t in (tick.label1, tick.label2) if t.get_visible() and t.get_text().strip()]
    return out


def _shown(t) -> bool:
    return bool(t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible()))


def _name(t) -> str:
    text = " ".join(t.get_text().split())
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _overlap(a, b) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > SLACK and min(a.y1, b.y1) - max(a.y0, b.y0) > SLACK


def problems(fig, dpi: float | None = None) -> list[str]:
    """What keeps `fig` from reading on the page (empty if nothing), for a figure saved at `dpi`."""
    from matplotlib.colors import to_rgba
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    W, H = fig.canvas.get_width_height()
    scale = page_scale(fig, dpi) * (dpi or fig.dpi) / 72.0      # CSS px per point, on the page
    out: list[str] = []

    # Every text the figure draws, by role. Tick labels come from their axes (an axis keeps spare ones).
    all_ticklabels, ticks, framing, inside = set(), [], [], []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            all_ticklabels |= {id(t.label1) for t in axis.get_major_ticks() + axis.get_minor_ticks()}
            all_ticklabels |= {id(t.label2) for t in axis.get_major_ticks() + axis.get_minor_ticks()}
            if ax.axison and axis.get_visible():
                ticks.append(_drawn_ticklabels(axis))
    framing_ids = set()
    for ax in fig.axes:
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            framing_ids.add(id(t))
            if _shown(t) and (ax.axison or t in (ax.title, ax._left_title, ax._right_title)):
                framing.append(t)
        inside += [t for t in ax.texts if _shown(t)]
    if fig._suptitle is not None and _shown(fig._suptitle):
        framing.append(fig._suptitle)
    seen = {id(t) for t in framing + inside} | all_ticklabels
    others = [t for t in fig.findobj(Text) if id(t) not in seen and id(t) not in framing_ids and _shown(t)]
    texts = [t for group in ticks for t in group] + framing + inside + others
    box = {id(t): Text.get_window_extent(t, renderer) for t in texts}

    for t in texts:
        b = box[id(t)]
        if b.x0 < -SLACK or b.y0 < -SLACK or b.x1 > W + SLACK or b.y1 > H + SLACK:
            out.append(f"text {_name(t)} is cut off: it lies outside the figure's canvas")
        px = t.get_fontsize() * scale
        if px < MIN_TEXT_PX - 0.05:
            out.append(f"text {_name(t)} is {px:.1f} px on the page (at least {MIN_TEXT_PX:g}): "
                       f"the figure is {fig.get_figwidth():.1f} in wide for a {PAGE_PX} px column")

    for group in ticks:                             # tick labels of one axis, against each other
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if _overlap(box[id(a)], box[id(b)]):
                    out.append(f"tick labels {_name(a)} and {_name(b)} overlap")
    tick_labels = [t for group in ticks for t in group]
    for i, a in enumerate(framing + inside):        # titles, axis labels, texts against all the frame
        for b in tick_labels + framing[i + 1:] if i < len(framing) else tick_labels + framing:
            if a is not b and _overlap(box[id(a)], box[id(b)]):
                out.append(f"{_name(a)} overlaps {_name(b)}")

    # Contrast: the ground is the figure drawn without any text, under each text's box.
    # (The layout engine is held still meanwhile: without its text, constrained layout would move the axes.)
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.lines import Line2D

    # Lines and markers are left out of the ground too: a label beside a point is not on a coloured
    # ground; images, bars and boxes are.
    marks = fig.findobj(lambda a: isinstance(a, (Line2D, PathCollection, LineCollection)))
    visible = [(t, t.get_visible()) for t in texts + marks]
    engine = fig.get_layout_engine()
    for t, _ in visible:
        t.set_visible(False)
    try:
        fig.set_layout_engine("none")
        fig.canvas.draw()
        ground = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(float)
    finally:
        for t, v in visible:
            t.set_visible(v)
        fig.set_layout_engine(engine)
    for t in texts:
        b = box[id(t)]
        x0, x1 = int(max(0, np.floor(b.x0))), int(min(W, np.ceil(b.x1)))
        y0, y1 = int(max(0, np.floor(H - b.y1))), int(min(H, np.ceil(H - b.y0)))
        if x1 <= x0 or y1 <= y0:
            continue
        patch = ground[y0:y1, x0:x1].reshape(-1, 3)
        ink = to_rgba(t.get_color())
        l_ink = luminance(tuple(float(c) for c in ink[:3]))
        lin = np.where(patch / 255 <= 0.04045, patch / 255 / 12.92, ((patch / 255 + 0.055) / 1.055) ** 2.4)
        l_ground = lin @ np.array([0.2126, 0.7152, 0.0722])
        ratios = (np.maximum(l_ground, l_ink) + 0.05) / (np.minimum(l_ground, l_ink) + 0.05)
        ratio = float(np.percentile(ratios, 25))    # three quarters of the text's box must read
        px = t.get_fontsize() * scale
        bold = t.get_fontweight() in ("bold", "heavy", "extra bold", "black", "semibold", "demibold") or \
            (isinstance(t.get_fontweight(), (int, float)) and t.get_fontweight() >= 600)
        need = CONTRAST_LARGE if px >= LARGE_PX or (bold and px >= LARGE_BOLD_PX) else CONTRAST_TEXT
        if ratio < need:
            out.append(f"text {_name(t)} has contrast {ratio:.2f}:1 on its ground (at least {need:g}:1)")
    return list(dict.fromkeys(out))


def check(fig, dpi: float | None = None) -> None:
    """Warn (FigureLegibilityWarning) if `fig` would not read on the page; see `problems`."""
    found = problems(fig, dpi)
    if found:
        warnings.warn("this figure would not read on the page: " + "; ".join(found), FigureLegibilityWarning,
                      stacklevel=2)
