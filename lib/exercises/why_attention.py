"""Self-checks for the chapter "Why attention"."""
from __future__ import annotations

import numpy as np

from lib.content.convolution import convolve, ocr_pass
from lib.content.worked_examples import FILTERS
from lib.exercises import Feedback, check_choice, check_whole_number


def horizontal_stroke() -> np.ndarray:
    """A 5x5 image with ink along the middle row."""
    img = np.zeros((5, 5))
    img[2, :] = 1
    return img


def centre_response(answer) -> Feedback:
    """The horizontal filter at the centre stop of the horizontal stroke (a whole number: the image
    is ink or blank, the filter's weights whole)."""
    expected = int(convolve(horizontal_stroke(), FILTERS["horizontal"])[1, 1])
    wrong_filter = int(convolve(horizontal_stroke(), FILTERS["vertical"])[1, 1])
    return check_whole_number(answer, expected, what="The response", hints={
        wrong_filter: "that is the vertical filter's response; use the horizontal one."})


def predicted_class(answer) -> Feedback:
    """The class the OCR pass picks for the horizontal stroke."""
    result = ocr_pass(horizontal_stroke(), FILTERS)
    best = result["classes"][int(np.argmax(np.asarray(result["probs"])))]
    return check_choice(answer, result["classes"], best, right=f"the {answer} detector fires and wins the softmax.",
                        wrong="that detector stays silent on this image; run the pass and read the probabilities.")
