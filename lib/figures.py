"""The course's look: one palette and one way to draw a results page, shared by every chapter."""
from __future__ import annotations

PALETTE = {"main": "#3b6ea8", "accent": "#d1495b", "muted": "#9aa5b1", "good": "#2a9d8f"}


def style_axes(ax) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)


def results_page(ax, ranked, title: str = "", highlight: str | None = None, k: int = 10, xmax: float = 1.0):
    """Horizontal bars, best candidate on top: `ranked` is [(token, prob), ...], best first."""
    rows = list(ranked)[:k][::-1]
    tokens = [t for t, _ in rows]
    probs = [p for _, p in rows]
    colours = [PALETTE["accent"] if t == highlight else PALETTE["main"] for t in tokens]
    ax.barh(range(len(rows)), probs, color=colours)
    ax.set_yticks(range(len(rows)), tokens)
    ax.set_xlim(0, xmax)
    for i, p in enumerate(probs):
        ax.text(min(p, xmax) + 0.01 * xmax, i, f"{p:.3f}", va="center", fontsize=9)
    ax.set_xlabel("probability")
    if title:
        ax.set_title(title, fontsize=11, loc="left")
    style_axes(ax)
    return ax
