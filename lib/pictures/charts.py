"""SVG charts for the explorers: drawn as text in well under a millisecond, readable by screen readers.

A slider step must redraw within the course's budget (50 ms). Rendering a matplotlib figure to
PNG takes longer than that on a small machine (its text rendering alone costs about 100 ms), so
the explorers draw their pictures as SVG instead, in the book's palette and font. Each chart is
one <svg role="img"> whose aria-label and <title> say in words what it shows.
"""
from __future__ import annotations

import html
from typing import Sequence

from lib.analysis.lens import stage_label
from lib.pictures.figures import PALETTE

FONT = "DejaVu Sans, Verdana, sans-serif"


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _svg(width: int, height: int, alt: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="course-chart" role="img" aria-label="{_esc(alt)}" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{FONT}" '
            f'font-size="12" style="max-width:100%;height:auto"><title>{_esc(alt)}</title>{TEXT_DEFAULTS}{"".join(body)}</svg>')


def _text(x, y, s, anchor="start", size=12, weight="normal", fill="#222", baseline="middle") -> str:
    # Only what differs from the defaults set on the <svg> (start, 12, normal, #222, middle) is
    # written: the website ships thousands of these charts, and every byte counts there.
    extra = "".join(f' {name}="{value}"' for name, value, default in (
        ("text-anchor", anchor, "start"), ("dominant-baseline", baseline, "middle"), ("font-size", size, 12),
        ("font-weight", weight, "normal"), ("fill", fill, "#222")) if value != default)
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{_esc(s)}</text>'


# The defaults of every <text> in a chart; a <text> states only what differs.
TEXT_DEFAULTS = '<style>text{dominant-baseline:middle;fill:#222}</style>'



def bar_chart(rows: Sequence[tuple[str, float]], alt: str, title: str = "", highlight: str | None = None,
              ghost: Sequence[float] | None = None, value_text: Sequence[str] | None = None,
              legend: Sequence[tuple[str, str]] = (), xmax: float = 1.0, label_width: int = 110,
              width: int = 600) -> str:
    """Horizontal bars, first row on top: the results page of the course, as SVG.

    `ghost` draws pale bars behind the solid ones (for example the page before truncation);
    `value_text` replaces the printed number of each row; `legend` is [(colour, label), ...].
    """
    row_h, top, plot_w = 22, 30 if title else 10, width - label_width - 60
    height = top + row_h * len(rows) + 44 + (18 if legend else 0)

    def x(v: float) -> float:
        return label_width + plot_w * min(max(v, 0.0), xmax) / xmax

    body = []
    if title:
        body.append(_text(label_width, 14, title, size=13))
    for i, (token, value) in enumerate(rows):
        y = top + i * row_h
        if ghost is not None:
            body.append(f'<rect x="{label_width}" y="{y + 2}" width="{x(ghost[i]) - label_width:.1f}" '
                        f'height="{row_h - 4}" fill="{PALETTE["muted"]}" fill-opacity="0.35"/>')
        colour = PALETTE["accent"] if token == highlight else PALETTE["main"]
        body.append(f'<rect x="{label_width}" y="{y + 5}" width="{x(value) - label_width:.1f}" '
                    f'height="{row_h - 10}" fill="{colour}"/>')
        body.append(_text(label_width - 6, y + row_h / 2, token, anchor="end",
                          weight="bold" if token == highlight else "normal"))
        shown = value_text[i] if value_text is not None else f"{value:.3f}"
        end = max(x(value), x(ghost[i]) if ghost is not None else 0)
        body.append(_text(end + 4, y + row_h / 2, shown, size=11))
    axis_y = top + row_h * len(rows) + 2
    body.append(f'<line x1="{label_width}" y1="{axis_y}" x2="{label_width + plot_w}" y2="{axis_y}" stroke="#444"/>')
    for k in range(6):
        v = xmax * k / 5
        body.append(f'<line x1="{x(v):.1f}" y1="{axis_y}" x2="{x(v):.1f}" y2="{axis_y + 4}" stroke="#444"/>')
        body.append(_text(x(v), axis_y + 14, f"{v:g}", anchor="middle", size=11))
    body.append(_text(label_width + plot_w / 2, axis_y + 32, "probability", anchor="middle"))
    lx = label_width
    for colour, label in legend:
        ly = axis_y + 48
        body.append(f'<rect x="{lx}" y="{ly - 5}" width="12" height="10" fill="{colour}"/>')
        body.append(_text(lx + 16, ly, label, size=11))
        lx += 30 + 7 * len(label)
    return _svg(width, height, alt, body)


def _blue(p: float) -> str:
    """A light-to-dark blue ramp (close to matplotlib's "Blues") for a probability in [0, 1]."""
    lo, hi = (247, 251, 255), (8, 48, 107)
    t = round(min(max(p, 0.0), 1.0) * 50) / 50    # 51 shades: cells of a shade are drawn as one path
    return "#%02x%02x%02x" % tuple(round(a + (b - a) * t) for a, b in zip(lo, hi))


def lens_chart(view, alt: str, width: int = 760) -> str:
    """The logit lens as SVG: a grid of the best tokens after each stage, shaded by probability,
    and beside it the followed token's probability stage by stage."""
    n, k = len(view.stages), len(view.top[0])
    cell_w, cell_h, left, top = 86, 40, 30, 10
    grid_w = left + n * cell_w
    body = []
    for j, col in enumerate(view.top):
        for i, (tok, p) in enumerate(col):
            x, y = left + j * cell_w, top + i * cell_h
            body.append(f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{_blue(p)}"/>')
            colour = "white" if p > 0.6 else "#222"
            weight = "bold" if tok == view.track else "normal"
            body.append(_text(x + cell_w / 2, y + 13, tok, anchor="middle", fill=colour, weight=weight))
            body.append(_text(x + cell_w / 2, y + 28, f"{p:.3f}", anchor="middle", size=11, fill=colour, weight=weight))
        body.append(_text(left + j * cell_w + cell_w / 2, top + k * cell_h + 10, stage_label(view.stages[j]),
                          anchor="middle", size=11))
    for i in range(k):
        body.append(_text(left - 6, top + i * cell_h + cell_h / 2, f"#{i + 1}", anchor="end", size=11))
    # The followed token's climb, on the right.
    px, pw, ph, py = grid_w + 60, width - grid_w - 80, k * cell_h - 10, top + 6
    body.append(f'<line x1="{px}" y1="{py + ph}" x2="{px + pw}" y2="{py + ph}" stroke="#444"/>')
    body.append(f'<line x1="{px}" y1="{py}" x2="{px}" y2="{py + ph}" stroke="#444"/>')
    for v in (0, 0.5, 1):
        body.append(_text(px - 4, py + ph * (1 - v), f"{v:g}", anchor="end", size=10))
    pts = [(px + pw * j / max(n - 1, 1), py + ph * (1 - p)) for j, p in enumerate(view.track_probs)]
    body.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                % (PALETTE["accent"], " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)))
    for (a, b), p, r in zip(pts, view.track_probs, view.track_ranks):
        body.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3.5" fill="{PALETTE["accent"]}"/>')
        body.append(_text(a, b - 9, f"{p:.2f} #{r}", anchor="middle", size=9))
    body.append(_text(px + pw / 2, py + ph + 16, f"P({view.track}) after each stage", anchor="middle", size=11))
    return _svg(width, top + k * cell_h + 40, alt, body)


def _heatmap_body(x0: float, y0: float, matrix, rows: Sequence[str], cols: Sequence[str], cell: int,
                  title: str = "", show_values: bool = True, masked_upper: bool = False) -> tuple[list[str], float, float]:
    """The elements of one heatmap whose top-left corner is (x0, y0); returns (elements, width, height).

    `masked_upper` draws the cells above the diagonal hatched grey: the causal mask's forbidden cells.
    """
    label_w = 8 + 7 * max((len(r) for r in rows), default=1)
    top = 18 if title else 0
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
                cells.setdefault("#eeeeee", []).append(f"M{x:g} {y:g}h{side}v{side}h-{side}z")
                continue
            v = float(matrix[i][j])
            cells.setdefault(_blue(v), []).append(f"M{x:g} {y:g}h{side}v{side}h-{side}z")
            if show_values:
                body.append(_text(x + cell / 2, y + cell / 2, f"{v:.2f}", anchor="middle", size=9,
                                  fill="white" if v > 0.6 else "#222"))
    body[1 if title else 0:1 if title else 0] = [f'<path fill="{fill}" d="{"".join(d)}"/>' for fill, d in cells.items()]
    h = top + len(rows) * cell
    for j, c in enumerate(cols):
        x, y = x0 + label_w + j * cell + cell / 2, y0 + h + 6
        body.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="10" text-anchor="end" '
                    f'transform="rotate(-45 {x:.1f} {y:.1f})" fill="#222">{_esc(c)}</text>')
    col_h = 8 + 5 * max((len(c) for c in cols), default=1)
    return body, label_w + len(cols) * cell, h + col_h


def heatmap(matrix, rows: Sequence[str], cols: Sequence[str], alt: str, title: str = "", cell: int = 34,
            masked_upper: bool = False) -> str:
    """One attention pattern (or any [0, 1] matrix): rows are queries, columns keys."""
    body, w, h = _heatmap_body(4, 4, matrix, rows, cols, cell, title, masked_upper=masked_upper)
    return _svg(int(w + 12), int(h + 12), alt, body)


def heatmap_grid(items: Sequence[tuple[str, object]], rows: Sequence[str], cols: Sequence[str], alt: str,
                 per_row: int = 4, cell: int = 22, dimmed: Sequence[str] = ()) -> str:
    """Small multiples: several patterns over the same tokens, `per_row` to a line. Titles listed in
    `dimmed` (for example the heads switched off) are drawn faded, with "(off)" after the title."""
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


def _plane_scale(pts, left: int, top: int, pw: float, ph: float, include_origin: bool = False):
    """Two functions mapping data x and y to SVG coordinates, with 8% margins; the limits too."""
    import numpy as np

    lo, hi = pts.min(0), pts.max(0)
    if include_origin:
        lo, hi = np.minimum(lo, 0), np.maximum(hi, 0)
    pad = np.maximum((hi - lo) * 0.08, 1e-9)
    lo, hi = lo - pad, hi + pad

    def sx(v):
        return left + pw * (v - lo[0]) / (hi[0] - lo[0])

    def sy(v):
        return top + ph * (hi[1] - v) / (hi[1] - lo[1])

    return sx, sy, lo, hi


def scatter_chart(points, labels: Sequence[str], groups: Sequence[str], alt: str, title: str = "",
                  xlabel: str = "", ylabel: str = "", axes: bool = True, width: int = 380, height: int = 360,
                  legend: bool = True) -> str:
    """Labelled points coloured by group. `axes=False` draws no axis lines or numbers (for t-SNE,
    whose axes mean nothing); otherwise the two axes cross at zero and carry their names."""
    import numpy as np

    from lib.pictures.figures import group_colours

    pts = np.asarray(points, float)
    colours = group_colours(groups)
    top = 26 if title else 8
    bottom = 30 + (16 * ((len(colours) + 3) // 4) if legend else 0)
    left, right = 34, 14
    pw, ph = width - left - right, height - top - bottom
    sx, sy, lo, hi = _plane_scale(pts, left, top, pw, ph)

    body = []
    if title:
        body.append(_text(left, 13, title, size=13))
    if axes:
        if lo[0] < 0 < hi[0]:
            body.append(f'<line x1="{sx(0):.1f}" y1="{top}" x2="{sx(0):.1f}" y2="{top + ph}" stroke="#bbb"/>')
        if lo[1] < 0 < hi[1]:
            body.append(f'<line x1="{left}" y1="{sy(0):.1f}" x2="{left + pw}" y2="{sy(0):.1f}" stroke="#bbb"/>')
        body.append(_text(left + pw / 2, top + ph + 14, xlabel, anchor="middle", size=11))
        body.append(f'<text x="12" y="{top + ph / 2:.1f}" text-anchor="middle" font-size="11" fill="#222" '
                    f'transform="rotate(-90 12 {top + ph / 2:.1f})">{_esc(ylabel)}</text>')
    else:
        body.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#ddd"/>')
        body.append(_text(left + pw / 2, top + ph + 14, "no axes: only who sits next to whom counts",
                          anchor="middle", size=11, fill="#666"))
    for (x, y), label, group in zip(pts, labels, groups):
        c = colours[group]
        body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.5" fill="{c}"><title>{_esc(label)} ({_esc(group)})'
                    f'</title></circle>')
        body.append(_text(sx(x) + 5, sy(y) - 5, label, size=10, fill=c))
    if legend:
        for i, (group, c) in enumerate(colours.items()):
            lx, ly = left + (i % 4) * (pw / 4), top + ph + 32 + 16 * (i // 4)
            body.append(f'<rect x="{lx:.1f}" y="{ly - 5}" width="10" height="10" fill="{c}"/>')
            body.append(_text(lx + 14, ly, group, size=10))
    return _svg(width, height, alt, body)


ROW_OPEN = '<div class="course-row" style="display:flex;flex-wrap:wrap;gap:8px">'
ROW_CLOSE = "</div>"


def cell(svg: str, basis: int = 320) -> str:
    """One chart in a row of charts."""
    return f'<div style="flex:1 1 {basis}px;min-width:0">{svg}</div>'


def side_by_side(svgs: Sequence[str], basis: int = 320) -> str:
    """Charts in one row that wraps on a narrow screen."""
    return ROW_OPEN + "".join(cell(s, basis) for s in svgs) + ROW_CLOSE


def path_chart(paths: Sequence[tuple[str, object, str]], stages: Sequence[str], alt: str, title: str = "",
               xlabel: str = "", ylabel: str = "", width: int = 640, height: int = 400) -> str:
    """Paths through a plane, one point per stage, each [(label, coords [stage, 2], colour), ...];
    the first path's stages are named, the others are drawn over it."""
    import numpy as np

    allpts = np.concatenate([np.asarray(c, float) for _, c, _ in paths])
    top, bottom, left, right = (26 if title else 8), 48, 40, 20
    pw, ph = width - left - right, height - top - bottom
    sx, sy, _, _ = _plane_scale(allpts, left, top, pw, ph, include_origin=True)

    body = [_text(left, 13, title, size=13)] if title else []
    body.append(f'<line x1="{sx(0):.1f}" y1="{top}" x2="{sx(0):.1f}" y2="{top + ph}" stroke="#bbb"/>')
    body.append(f'<line x1="{left}" y1="{sy(0):.1f}" x2="{left + pw}" y2="{sy(0):.1f}" stroke="#bbb"/>')
    body.append(_text(left + pw / 2, top + ph + 14, xlabel, anchor="middle", size=11))
    body.append(f'<text x="12" y="{top + ph / 2:.1f}" text-anchor="middle" font-size="11" fill="#222" '
                f'transform="rotate(-90 12 {top + ph / 2:.1f})">{_esc(ylabel)}</text>')
    for k, (label, coords, colour) in enumerate(paths):
        c = np.asarray(coords, float)
        d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(c))
        dash = ' stroke-dasharray="5 4"' if k else ""
        body.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for i, (x, y) in enumerate(c):
            body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{colour}"><title>{_esc(label)}: '
                        f'{_esc(stages[i])} ({x:.2f}, {y:.2f})</title></circle>')
            if k == 0:
                body.append(_text(sx(x) + 6, sy(y) - 8, stages[i], size=10, fill="#444"))
        lx = left + k * 220
        body.append(f'<line x1="{lx}" y1="{height - 12}" x2="{lx + 24}" y2="{height - 12}" stroke="{colour}" '
                    f'stroke-width="2"{dash}/>')
        body.append(_text(lx + 30, height - 12, label, size=11))
    return _svg(width, height, alt, body)
