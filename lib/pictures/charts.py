"""SVG heatmaps for the chapters' figures (attention patterns), readable by screen readers.

Every word is at least 11 px, and a chart is shown at the size it is drawn at every width: on a phone
one wider than the column scrolls sideways in its output (_assets/course.css), as the matplotlib
figures do (lib.pictures.legibility).

Each chart is one <svg role="img"> whose aria-label and <title> say in words what it shows. (The
explorers draw their pictures in JavaScript, lib/explorers/js/render.js, in a kernel and on the
website alike.)
"""
from __future__ import annotations

import html
from typing import Sequence

from lib.pictures.colours import MASKED, blue, hex_colour, ink_on
from lib.pictures.legibility import PAGE_PX


FONT = "DejaVu Sans, Verdana, sans-serif"
# The widest a character of these fonts runs, in em (DejaVu Sans Bold's capitals; its average is ~0.6):
# a title is given this much room, so that it is never cut off at the chart's edge.
EM_WIDE = 0.7
# The smallest cell a grid of patterns may shrink to so that its row fits the page: the columns' names,
# 11 px words written at 45 degrees, need 19 px between neighbours not to run into each other.
MIN_CELL = 19


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _svg(width: int, height: int, alt: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="course-chart course-heatmap" role="img" aria-label="{_esc(alt)}" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{FONT}" '
            f'font-size="12" style="height:auto"><title>{_esc(alt)}</title>{TEXT_DEFAULTS}{"".join(body)}</svg>')


def _text(x, y, s, anchor="start", size=12, weight="normal", fill="#222", baseline="middle") -> str:
    # Only what differs from the defaults set on the <svg> (start, 12, normal, #222, middle) is written.
    extra = "".join(f' {name}="{value}"' for name, value, default in (
        ("text-anchor", anchor, "start"), ("dominant-baseline", baseline, "middle"), ("font-size", size, 12),
        ("font-weight", weight, "normal"), ("fill", fill, "#222")) if value != default)
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{_esc(s)}</text>'


# The defaults of every <text> in these charts (and only these: a <style> applies to the whole page);
# a <text> states only what differs.
TEXT_DEFAULTS = '<style>svg.course-heatmap text{dominant-baseline:middle;fill:#222}</style>'


def _heatmap_body(x0: float, y0: float, matrix, rows: Sequence[str], cols: Sequence[str], cell: int,
                  title: str = "", show_values: bool = True, masked_upper: bool = False) -> tuple[list[str], float, float]:
    """The elements of one heatmap whose top-left corner is (x0, y0); returns (elements, width, height).

    `masked_upper` draws the cells above the diagonal hatched grey: the causal mask's forbidden cells.
    """
    label_w = 8 + 7 * max((len(r) for r in rows), default=1)
    top = 18 if title else 0
    title_w = EM_WIDE * 12 * len(title) if title else 0
    body = [_text(x0 + label_w, y0 + 10, title, size=12, weight="bold")] if title else []
    # Cells of one colour are drawn as one path (a square per cell): far fewer bytes than a <rect>
    # each, which matters for the website's precomputed explorers.
    cells: dict[str, list[str]] = {}
    side = cell - 1
    for i, r in enumerate(rows):
        body.append(_text(x0 + label_w - 4, y0 + top + i * cell + cell / 2, r, anchor="end", size=11))
        for j, _ in enumerate(cols):
            x, y = x0 + label_w + j * cell, y0 + top + i * cell
            if masked_upper and j > i:
                cells.setdefault(hex_colour(MASKED), []).append(f"M{x:g} {y:g}h{side}v{side}h-{side}z")
                continue
            v = float(matrix[i][j])
            cells.setdefault(blue(v), []).append(f"M{x:g} {y:g}h{side}v{side}h-{side}z")
            if show_values:
                body.append(_text(x + cell / 2, y + cell / 2, f"{v:.2f}", anchor="middle", size=11,
                                  fill=ink_on(blue(v))))
    body[1 if title else 0:1 if title else 0] = [f'<path fill="{fill}" d="{"".join(d)}"/>' for fill, d in cells.items()]
    h = top + len(rows) * cell
    for j, c in enumerate(cols):
        x, y = x0 + label_w + j * cell + cell / 2, y0 + h + 6
        body.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="11" text-anchor="end" '
                    f'transform="rotate(-45 {x:.1f} {y:.1f})" fill="#222">{_esc(c)}</text>')
    col_h = 8 + 5.5 * max((len(c) for c in cols), default=1)
    return body, label_w + max(len(cols) * cell, title_w), h + col_h


def heatmap(matrix, rows: Sequence[str], cols: Sequence[str], alt: str, title: str = "", cell: int = 34,
            masked_upper: bool = False) -> str:
    """One attention pattern (or any [0, 1] matrix): rows are queries, columns keys."""
    body, w, h = _heatmap_body(4, 4, matrix, rows, cols, cell, title, masked_upper=masked_upper)
    return _svg(int(w + 12), int(h + 12), alt, body)


def heatmap_grid(items: Sequence[tuple[str, object]], rows: Sequence[str], cols: Sequence[str], alt: str,
                 per_row: int = 4, cell: int = 22, dimmed: Sequence[str] = ()) -> str:
    """Small multiples: several patterns over the same tokens, `per_row` to a line. Titles listed in
    `dimmed` (for example the heads switched off) are drawn faded, with "(off)" after the title."""
    # As many to a line as fit the page's column, the cells shrunk down to MIN_CELL first.
    label_w = 8 + 7 * max((len(r) for r in rows), default=1)
    for fit in range(min(per_row, len(items)), 0, -1):
        room = int(((PAGE_PX - 8) / fit - 16 - label_w) / max(len(cols), 1))
        if room >= MIN_CELL or fit == 1:
            per_row, cell = fit, max(min(cell, room), MIN_CELL)
            break
    bodies, w, h = [], 0.0, 0.0
    for n, (title, matrix) in enumerate(items):
        off = title in dimmed
        body, w, h = _heatmap_body(0, 0, matrix, rows, cols, cell, title + (" (off)" if off else ""),
                                   show_values=False, masked_upper=True)
        x, y = 4 + (n % per_row) * (w + 16), 4 + (n // per_row) * (h + 10)
        bodies.append(f'<g transform="translate({x:.1f},{y:.1f})"' + (' opacity="0.35"' if off else "") + ">"
                      + "".join(body) + "</g>")
    n_rows = (len(items) + per_row - 1) // per_row
    return _svg(int(min(len(items), per_row) * (w + 16) + 8), int(n_rows * (h + 10) + 8), alt, bodies)
