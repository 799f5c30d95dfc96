"""Self-checks for the chapter "Why attention"."""
from __future__ import annotations

import numpy as np

from lib.content.convolution import convolve, ocr_pass
from lib.content.worked_examples import FILTERS
from lib.exercises import Feedback, check_choice, check_number


def horizontal_stroke() -> np.ndarray:
    """A 5x5 image with ink along the middle row."""
    img = np.zeros((5, 5))
    img[2, :] = 1
    return img


def centre_response(answer) -> Feedback:
    """Exercise 1: the horizontal filter at the centre window of the horizontal stroke."""
    expected = float(convolve(horizontal_stroke(), FILTERS["horizontal"])[1, 1])
    wrong_filter = float(convolve(horizontal_stroke(), FILTERS["vertical"])[1, 1])
    return check_number(answer, expected, tol=1e-9, what="The response",
                        hints={wrong_filter: "that is the vertical filter's response; use the horizontal one."})


def predicted_class(answer) -> Feedback:
    """Exercise 2: the class the OCR pass picks for the horizontal stroke."""
    result = ocr_pass(horizontal_stroke(), FILTERS)
    best = result["classes"][int(np.argmax(np.asarray(result["probs"])))]
    return check_choice(answer, result["classes"], best, right=f"the {answer} detector fires and wins the softmax.",
                        wrong="that detector stays silent on this image; run the pass and read the probabilities.")
