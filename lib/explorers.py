"""Explorers: pure functions from a control's value to what a widget shows.

The kernel view (lib.widgets) calls these on every slider step; the same functions can be
tabulated over their control grids at build time for the static site.
"""
from __future__ import annotations

from .readout import check_temperature
from .search import model_search


def temperature_page(lm, prompt: str, temperature: float, k: int = 10) -> list[tuple[str, float]]:
    """The top-k candidates after `prompt` at `temperature`, best first, as (token, prob)."""
    check_temperature(temperature)
    ranked = model_search(lm, prompt, temperature).ranked()
    return [(w, p) for w, _, p in ranked[:k]]
