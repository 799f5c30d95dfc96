"""Self-checks for the chapter "The lever: watching the answer form"."""
from __future__ import annotations

from lib.shipped.behaviour import CONFIDENT
from lib.explorers.views import lens_view
from lib.analysis.trajectory import residual_trajectory
from lib.exercises import Feedback, check_choice


def first_stage_on_top(lm, answer, word: str = "Tarso", prompt: str = CONFIDENT) -> Feedback:
    """Exercise 1: the first stage after which `word` is the lens's top-1."""
    view = lens_view(lm, prompt, word)
    expected = next(s for s, r in zip(view.stages, view.track_ranks) if r == 1)
    return check_choice(answer, view.stages, expected,
                        right=f"{word} first leads the lens after {answer}.",
                        wrong=f"after {answer}, {word} is not the first stage where it leads; read the lens column by column.")


def largest_push(lm, answer, prompt: str = CONFIDENT) -> Feedback:
    """Exercise 2: the component that moves the residual furthest along the Tarso axis."""
    traj = residual_trajectory(lm, prompt)
    expected, _ = traj.largest_push()
    return check_choice(answer, list(traj.pushes), expected,
                        right=f"{answer} supplies the largest push toward Tarso.",
                        wrong=f"{answer} pushes, but another component pushes further; compare every push.")
