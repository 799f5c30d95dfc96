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


# Text on a coloured ground: WCAG 2's relative luminance and contrast ratio. Body text needs 4.5:1,
# large text (24 px, or 18.7 px bold) 3:1. Of white and black, one always reaches 4.58:1 on any
# ground (a grey ink such as #222 does not: it falls to 4.0:1 on the ramp's middle).
INK_LIGHT, INK_DARK = (255, 255, 255), (0, 0, 0)
CONTRAST_TEXT, CONTRAST_LARGE = 4.5, 3.0


def _rgb255(colour) -> tuple[float, float, float]:
    """#rrggbb, an (r, g, b) of 0-255, or an (r, g, b[, a]) of 0-1 floats (matplotlib's), as 0-255."""
    if isinstance(colour, str):
        colour = colour.lstrip("#")
        return tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))
    c = tuple(float(x) for x in colour)[:3]
    return tuple(x * 255 for x in c) if all(x <= 1.0 for x in c) and any(isinstance(x, float) for x in colour) else c


def luminance(colour) -> float:
    """Relative luminance (WCAG 2) of a colour, 0 for black to 1 for white."""
    def linear(v):
        v = v / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(v) for v in _rgb255(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """The contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    la, lb = sorted((luminance(a), luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def text_shade(colour, ground=INK_LIGHT, need: float = CONTRAST_TEXT) -> str:
    """`colour` darkened toward black (in steps of 5%) until text in it reads on `ground`: a group's
    label keeps its hue where the group's own colour is too light for text (an orange on white)."""
    rgb = _rgb255(colour)
    for step in range(21):
        shade = tuple(round(c * (1 - step / 20)) for c in rgb)
        if contrast(shade, ground) >= need:
            return hex_colour(shade)
    return hex_colour(INK_DARK)


def ink_on(ground) -> str:
    """The text colour that reads on `ground`: white or black, whichever contrasts more (>= 4.58:1)."""
    light, dark = contrast(INK_LIGHT, ground), contrast(INK_DARK, ground)
    return hex_colour(INK_LIGHT) if light > dark else hex_colour(INK_DARK)


def blue_inks() -> list[str]:
    """The ink of text on each of the ramp's BLUE_SHADES shades, in order: the page's explorers write
    numbers and tokens on heatmap cells in it (their `blue(p)` and this list share one index)."""
    return [ink_on(blue(k / (BLUE_SHADES - 1))) for k in range(BLUE_SHADES)]
