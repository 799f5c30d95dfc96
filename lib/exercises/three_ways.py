"""Self-checks for the chapter "Three ways to look"."""
from __future__ import annotations

from lib.explorers.map_views import layouts, plane_view, point_set
from lib.analysis.maps import nearest_indices
from lib.exercises import Feedback, check_choice, check_number


def tarso_capo_spread(answer) -> Feedback:
    """Exercise 1: the share of the spread on the (Tarso, capo) concept plane."""
    expected = plane_view("calling-game", "Tarso", "capo").spread
    return check_number(answer, expected, tol=2e-3, what="The share",
                        hints={expected * 100: "that is a percentage; give the share between 0 and 1."})


def page_neighbour(coords, labels, word: str) -> str:
    """The token nearest to `word` on a 2-D page."""
    return labels[int(nearest_indices(coords, 1)[list(labels).index(word), 0])]


def pietro_page_neighbour(answer) -> Feedback:
    """Exercise 2: Pietro's nearest token in the perplexity-10, seed-3 t-SNE layout."""
    labels = point_set("calling-game").labels
    expected = page_neighbour(layouts("calling-game", 10.0, [3])[0], labels, "Pietro")
    return check_choice(answer, labels, expected, right=f"{answer} sits next to Pietro in the seed-3 layout.",
                        wrong=f"{answer} is not Pietro's nearest token on that page; measure the 2-D distances.")
