"""Self-checks for the chapter "Why attention".

The page works the vertical stroke through the pass; the exercises take a picture it never shows,
a T (ink along the second row and down the middle column), where the two filters disagree."""
from __future__ import annotations

import numpy as np

from lib.content.convolution import convolve, ocr_pass
from lib.content.worked_examples import FILTERS
from lib.exercises import Feedback
from lib.exercises.site import Values, site_check

STOP = (1, 1)   # the centre stop: rows 1 to 3, columns 1 to 3


def t_shape() -> np.ndarray:
    """A 5x5 image of a T: ink along row 1 and down column 2."""
    img = np.zeros((5, 5))
    img[1, :] = 1
    img[:, 2] = 1
    return img


_ARGS = {"image": t_shape().tolist(), "filters": {name: f.tolist() for name, f in FILTERS.items()},
         "stop": STOP}


def _centre_values() -> Values:
    at = lambda name: int(convolve(t_shape(), FILTERS[name])[STOP])   # noqa: E731
    return Values(at("horizontal"), hints={"vertical": at("vertical")})


CENTRE_RESPONSE = site_check(__name__, "centre_response", rule="whole", compute="filterAt", values=_centre_values,
                             what="The response", args={**_ARGS, "filter": "horizontal", "other": "vertical"}, texts={
                                 "vertical": "that is the vertical filter's response; use the horizontal one."})


def centre_response(answer) -> Feedback:
    """The horizontal filter at the centre stop of the T (a whole number: the image is ink or blank,
    the filter's weights whole)."""
    return CENTRE_RESPONSE.judge(answer)


def _class_values() -> Values:
    result = ocr_pass(t_shape(), FILTERS)
    return Values(result["classes"][int(np.argmax(np.asarray(result["probs"])))], options=tuple(result["classes"]))


PREDICTED_CLASS = site_check(__name__, "predicted_class", rule="choice", compute="ocrClass", values=_class_values,
                             args=_ARGS, texts={
    "right": "the {answer} detector scores highest after ReLU and pooling, and wins the softmax.",
    "wrong": "the {answer} detector scores lower on this image than the other: follow each filter's map through "
             "ReLU and pooling, or run the pass and read the scores."})


def predicted_class(answer) -> Feedback:
    """The class the OCR pass picks for the T."""
    return PREDICTED_CLASS.judge(answer)
