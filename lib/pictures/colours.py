"""The course's colours, one home for the figures drawn by matplotlib and for the explorers' renderer.

The website's renderer (lib/explorers/js/render.js) reads these from the constants module the build
generates (`lib.explorers.web`), so a colour is changed here and nowhere else.
"""
from __future__ import annotations

# Named colours of lines, bars and highlights.
PALETTE = {"main": "#3b6ea8", "accent": "#d1495b", "muted": "#9aa5b1", "good": "#2a9d8f"}
# One colour per group of points on a map, in order of first appearance. Each reads on a white and
# on a dark page alike.
GROUP_COLOURS = ("#3b6ea8", "#d1495b", "#2a9d8f", "#e9a03b", "#8e6bbf", "#a0703f", "#6b7280", "#c2649a")
# The heatmaps' light-to-dark blue ramp (close to matplotlib's "Blues"), from 0 to 1 in BLUE_SHADES
# shades, and the grey of a cell the causal mask forbids.
BLUE_LOW, BLUE_HIGH, BLUE_SHADES = (247, 251, 255), (8, 48, 107), 51
MASKED = (238, 238, 238)


def blue(p: float) -> str:
    """The ramp's colour for a probability in [0, 1], as #rrggbb (one of BLUE_SHADES shades)."""
    steps = BLUE_SHADES - 1
    t = round(min(max(p, 0.0), 1.0) * steps) / steps
    return "#%02x%02x%02x" % tuple(round(a + (b - a) * t) for a, b in zip(BLUE_LOW, BLUE_HIGH))


def hex_colour(rgb) -> str:
    return "#%02x%02x%02x" % tuple(rgb)
