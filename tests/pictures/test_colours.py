"""The course's colours (lib.pictures.colours): the heatmap's ramp from its light end to its dark one in a fixed
number of shades, clamped; WCAG 2's luminance and contrast at their known values; every ink reaching 4.5:1 on
its ground; a group's label darkened only as far as it must be."""
import matplotlib
import numpy as np
import pytest

from lib.pictures import figures
from lib.pictures.colours import (BLUE_HIGH, BLUE_LOW, BLUE_SHADES, GROUP_COLOURS, PALETTE, blue, blue_inks, contrast,
                                  hex_colour, ink_on, luminance, text_shade)


def test_the_inks_reach_wcag_contrast():
    grounds = [figures.PALETTE[k] for k in PALETTE] + list(GROUP_COLOURS) + ["#08306b", "#6b8ea6", "#f7fbff"]
    ramp = [tuple(int(255 * c) for c in matplotlib.colormaps["Blues"](x)[:3]) for x in np.linspace(0, 1, 41)]
    assert min(contrast(ink_on(g), g) for g in grounds + ramp) >= 4.5
    assert min(contrast(text_shade(c), (255, 255, 255)) for c in GROUP_COLOURS) >= 4.5
    assert abs(contrast((0, 0, 0), (255, 255, 255)) - 21.0) < 1e-9


def test_the_ramp_runs_from_its_light_end_to_its_dark_one_in_fixed_shades():
    assert blue(0.0) == hex_colour(BLUE_LOW) and blue(1.0) == hex_colour(BLUE_HIGH)
    assert blue(-3) == blue(0.0) and blue(7) == blue(1.0), "clamped to [0, 1]"
    shades = {blue(p) for p in np.linspace(0, 1, 1001)}
    assert len(shades) == BLUE_SHADES
    assert blue(0.5) == blue(0.5 + 0.4 / (BLUE_SHADES - 1)), "a probability takes its nearest shade"
    darker = [luminance(blue(k / (BLUE_SHADES - 1))) for k in range(BLUE_SHADES)]
    assert darker == sorted(darker, reverse=True)
    assert len(blue_inks()) == BLUE_SHADES and blue_inks()[0] == "#000000" and blue_inks()[-1] == "#ffffff"


def test_luminance_and_contrast_at_their_known_values():
    assert luminance("#ffffff") == pytest.approx(1.0) and luminance((0, 0, 0)) == 0.0
    assert luminance((1.0, 1.0, 1.0)) == pytest.approx(1.0), "matplotlib's 0-1 floats are read too"
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)     # the grey WCAG's examples name
    assert contrast("#3b6ea8", "#3b6ea8") == pytest.approx(1.0)


def test_a_label_keeps_its_hue_darkened_only_as_far_as_it_must():
    orange = (0xe9, 0xa0, 0x3b)
    steps = [hex_colour(tuple(round(c * (1 - k / 20)) for c in orange)) for k in range(21)]
    shade = text_shade(hex_colour(orange))
    k = steps.index(shade)
    assert k > 0 and contrast(shade, "#ffffff") >= 4.5 and contrast(steps[k - 1], "#ffffff") < 4.5
    assert text_shade("#08306b") == "#08306b", "dark enough already"
    assert ink_on("#08306b") == "#ffffff" and ink_on("#f7fbff") == "#000000"
