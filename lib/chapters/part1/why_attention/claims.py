"""The claims of the chapter `chapters/part1/why-attention.md`, each with its measurement.

The worked convolution is fixed: its claim says `seeded=False`.
"""
from __future__ import annotations

import functools

import numpy as np

from lib.claims.registry import NO_RUN
from lib.claims.words import Q
from lib.claims.registry import claim as register
from lib.content.convolution import convolve, ocr_pass
from lib.content.worked_examples import FILTERS, stroke_image

# Measured with torch on one thread (the chapter's models are tiny: see `lib.claims.registry.claim`).
claim = functools.partial(register, one_thread=True)


@claim("why-attention.filters", "why-attention",
       "The vertical-stroke filter fires where the stroke lines up with its centre column ({centre:.0f}, "
       "against {left:.0f} one column to the left); the horizontal filter stays silent on this image, every "
       "window cancelling to {horizontal:.0f}",
       words={"fires where the stroke lines up with its centre column": (Q("centre") > 0, Q("left") < 0),
              "every window cancelling to {horizontal:.0f}": Q("horizontal").eq(0)}, seeded=False,
       note="the worked convolution: the vertical filter's map peaks on the stroke, the horizontal one is all zero",
       scope=NO_RUN)
def _filters(seed):
    image = stroke_image()
    run = ocr_pass(image, FILTERS)
    return {"centre": float((image[0:3, 1:4] * FILTERS["vertical"]).sum()),
            "left": float((image[0:3, 0:3] * FILTERS["vertical"]).sum()),
            "horizontal": float(np.abs(convolve(image, FILTERS["horizontal"])).max()),
            "p": float(run["probs"][0])}
