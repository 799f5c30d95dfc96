"""The course's look: one palette and one way to draw a results page, shared by every chapter.

`show(fig, alt)` puts a figure on the page with a text description computed from the same numbers
it draws, so the description cannot drift from the picture (a description typed into the page's
metadata would go stale the day the model is retrained).
"""
from __future__ import annotations

import base64
import html
import io
import textwrap
import warnings

import numpy as np

from lib.analysis.lens import stage_label

from lib.pictures.colours import GROUP_COLOURS, PALETTE, ink_on, text_shade  # noqa: F401  (the figures' palette, one home)
from lib.pictures.legibility import PAGE_PX, PHONE_PX, check, problems  # noqa: F401  (chapters that end with plt.show() call check)

# The figures' resolution and the widest a figure may be drawn: the page's column at DPI, so that
# a figure is shown at the size it was drawn and its text at the size it was set.
# (A figure is saved with its tight bounding box and 0.1 in of margin on each side: PAGE_WIDTH leaves
# room for the margins, so the saved image is the column's width, not a little more.)
DPI = 100
PAGE_WIDTH = PAGE_PX / DPI - 0.2


def subplots(nrows: int = 1, ncols: int = 1, height: float = 3.0, width: float = PAGE_WIDTH, **kw):
    """plt.subplots at the page's width (at most), laid out by matplotlib's constrained layout so
    that titles, labels and colour bars stay inside the canvas."""
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=(min(width, PAGE_WIDTH), height), dpi=DPI, layout="constrained", **kw)


def title(ax, text: str, fontsize: float = 10, **kw):
    """An axes' title cut into lines, at spaces, that fit the axes' width (about 0.6 em a character),
    so that the titles of small multiples neither run into each other nor off the canvas."""
    width_px = ax.get_position().width * ax.figure.get_figwidth() * 72      # in points
    most = max(8, int(width_px / (0.6 * fontsize)))
    lines = [line for part in text.split("\n") for line in (textwrap.wrap(part, most) or [""])]
    return ax.set_title("\n".join(lines), fontsize=fontsize, **kw)


_title = title      # for the functions below whose argument is called `title`


def cell_text(ax, image, x, y, s: str, value: float, **kw):
    """Text on a heatmap's cell, in the ink that reads on the colour `image` (an AxesImage) gives
    `value`: white on dark cells, black on light ones (lib.pictures.colours.ink_on)."""
    ground = image.cmap(image.norm(value))
    return ax.text(x, y, s, ha="center", va="center", color=ink_on(ground), **kw)


def png_bytes(fig, dpi: float, close: bool = True) -> bytes:
    """`fig` as a PNG of at most 256 colours (a palette: a chart drawn in a few colours and their
    anti-aliased edges loses nothing visible, and the page carries a third of the bytes), then closed
    (unless `close` is False)."""
    import matplotlib.pyplot as plt
    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    if close:
        plt.close(fig)
    buffer.seek(0)
    image = Image.open(buffer).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def show(fig, alt: str) -> None:
    """Display `fig` as a PNG image whose alt text is `alt`, then close it.

    The image goes out as HTML (an <img> with the PNG inline) because the book's builder takes an
    image's alt text only from the page source, never from the output; a PNG and the text itself
    ride along for readers that cannot show HTML."""
    from IPython.display import display

    alt = " ".join(alt.split())
    check(fig)
    narrow = phone_png(fig, fig.dpi)
    png = base64.b64encode(png_bytes(fig, fig.dpi)).decode("ascii")
    img = picture(png, narrow, alt, "course-figure")
    display({"text/html": img, "image/png": png, "text/plain": alt}, raw=True)


def phone_png(fig, dpi: float) -> tuple[str, float] | None:
    """`fig` laid out again at a phone's column (PHONE_PX, at the same text size) as a base64 PNG, with the width
    in CSS px from which the page shows it (below the width the figure as drawn needs); None when the figure
    already fits a phone, or does not read at that width (its panels too narrow for their words: it then
    scrolls sideways in its output, as course.css lets it)."""
    width, height = fig.get_size_inches()
    if width * dpi <= PHONE_PX:
        return None
    fig.set_size_inches((PHONE_PX - 20) / dpi, height)     # the saved margins (0.1 in each side) fill the rest
    try:
        # A trial: a layout matplotlib cannot make that narrow (it warns that the axes collapsed) is no phone version.
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            found = problems(fig, dpi)
            data = None if found else png_bytes(fig, dpi, close=False)
        if found or said:
            return None
        return base64.b64encode(data).decode("ascii"), width * dpi + PHONE_MARGIN_PX
    finally:
        fig.set_size_inches(width, height)


# A phone's page beside its column (the theme's padding); a viewport narrower than a figure plus this shows the
# phone version.
PHONE_MARGIN_PX = 48


def picture(png: str, narrow: tuple[str, float] | None, alt: str, cls: str) -> str:
    """An <img> of the PNG, inside a <picture> that gives a narrow screen the phone version when there is one."""
    img = f'<img src="data:image/png;base64,{png}" alt="{html.escape(alt, quote=True)}" class="{cls}" />'
    if narrow is None:
        return img
    return (f'<picture><source media="(max-width: {narrow[1]:.0f}px)" srcset="data:image/png;base64,{narrow[0]}" />'
            f"{img}</picture>")


def group_colours(groups) -> dict[str, str]:
    """{group: colour} for the distinct groups in `groups`, in order of first appearance."""
    distinct = list(dict.fromkeys(groups))
    return {g: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, g in enumerate(distinct)}


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
        _title(ax, title, fontsize=11, loc="left")
    style_axes(ax)
    return ax


def number_grids(panels, height: float = 2.2, fontsize: float = 9):
    """Small grids of numbers side by side, each shaded by its values and titled: [(title, matrix), ...]
    (the convolution's image, maps and pooled maps). Each number is written in the ink its cell needs."""
    fig, axes = subplots(1, len(panels), height=height)
    for ax, (name, m) in zip(np.atleast_1d(axes), panels):
        m = np.asarray(m)
        image = ax.imshow(m, cmap="Blues", vmin=min(0, m.min()), vmax=max(1, m.max()))
        for (i, j), v in np.ndenumerate(m):
            cell_text(ax, image, j, i, f"{v:g}", v, fontsize=fontsize)
        _title(ax, name, fontsize=fontsize)
        ax.set_xticks([]), ax.set_yticks([])
    return fig


def lens_grid(ax, view):
    """The logit lens as a grid: one column per stage, the best tokens down each column, shaded
    by probability; the tracked token is drawn in the accent colour."""
    k, n = len(view.top[0]), len(view.stages)
    shade = np.array([[p for _, p in col] for col in view.top]).T
    image = ax.imshow(shade, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for j, col in enumerate(view.top):
        for i, (tok, p) in enumerate(col):
            weight = "bold" if tok == view.track else "normal"
            cell_text(ax, image, j, i, f"{tok}\n{p:.3f}", p, fontsize=9, fontweight=weight)
    ax.set_xticks(range(n), [s.replace("blocks.", "block ").replace(".attn", "\n+attn").replace(".mlp", "\n+MLP")
                             for s in view.stages], fontsize=9)
    ax.set_yticks(range(k), [f"#{i + 1}" for i in range(k)])
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    return ax


def lens_climb(ax, view):
    """The tracked token's probability after each stage."""
    x = range(len(view.stages))
    ax.plot(x, view.track_probs, marker="o", color=PALETTE["accent"])
    for i, (p, r) in enumerate(zip(view.track_probs, view.track_ranks)):
        ax.annotate(f"{p:.3f} (#{r})", (i, p), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    ax.set_xticks(list(x), [s.replace("blocks.", "b").replace(".attn", " attn").replace(".mlp", " MLP")
                            for s in view.stages], fontsize=8)
    ax.set_ylim(0, 1.15)
    ax.set_xlim(-0.6, len(view.stages) - 0.4)   # room for the first and last points' labels
    ax.set_ylabel(f"P({view.track})")
    style_axes(ax)
    return ax


def trajectory(ax, traj, label: str = "", colour: str | None = None):
    """The last position's path across the stages on a concept plane, stages labelled."""
    xy = traj.coords
    colour = colour or PALETTE["main"]
    ax.plot(xy[:, 0], xy[:, 1], marker="o", color=colour, label=label or None)
    for i in range(len(xy) - 1):
        ax.annotate("", xy[i + 1], xy[i], arrowprops=dict(arrowstyle="->", color=colour, lw=1.2))
    # Stages that leave the point where it was (a block switched off) share one label, "embedding =
    # attention 0", instead of two printed over each other; labels go where they clear each other.
    ax.autoscale_view()
    px = ax.transData.transform(xy[:, :2])
    groups: list[list[int]] = []
    for i in range(len(xy)):
        if groups and np.hypot(*(px[i] - px[groups[-1][0]])) < 6:
            groups[-1].append(i)
        else:
            groups.append([i])
    names = [" = ".join(stage_label(traj.stages[i]) for i in g) for g in groups]
    spots = [xy[g[0], :2] for g in groups]
    for name, (x, y), offset in zip(names, spots, label_offsets(ax, spots, names, 8)):
        ax.annotate(name, (x, y), textcoords="offset points", xytext=offset, fontsize=8)
    ax.axvline(0, color=PALETTE["muted"], lw=0.6)
    ax.axhline(0, color=PALETTE["muted"], lw=0.6)
    ax.set_xlabel(f"along {traj.words[0]}")
    ax.set_ylabel(f"along {traj.words[1]} (orthogonalised)")
    style_axes(ax)
    return ax


WRITER_COLOURS = {"prompt": PALETTE["muted"], "model": PALETTE["main"], "tool": PALETTE["accent"]}


def belt_strip(belt, title: str = "", per_row: int = 12):
    """A conveyor belt (lib.content.conveyor) as a strip of tokens, coloured by who wrote each one,
    each token in the ink that reads on its box."""
    from matplotlib.patches import Rectangle

    rows = (len(belt.tokens) + per_row - 1) // per_row
    fig, ax = subplots(height=0.42 * rows + 0.75)
    for i, t in enumerate(belt.tokens):
        r, c = divmod(i, per_row)
        ax.add_patch(Rectangle((c, -r), 0.94, 0.8, color=WRITER_COLOURS[t.writer]))
        ax.text(c + 0.47, -r + 0.4, t.token, ha="center", va="center", fontsize=8, color=ink_on(WRITER_COLOURS[t.writer]))
    ax.set_xlim(0, per_row)
    ax.set_ylim(-rows + 0.9, 0.9)
    ax.axis("off")
    handles = [Rectangle((0, 0), 1, 1, color=c) for c in WRITER_COLOURS.values()]
    ax.legend(handles, ["prompt", "written by the model", "written by the tool"], loc="upper center",
              bbox_to_anchor=(0.5, 0), ncol=3, fontsize=8, frameon=False)
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    return fig


def print_matrix(name: str, m, rows, digits: int = 3) -> None:
    """A labelled matrix as text, one row per token (minus infinity written out), for the worked examples."""
    m = np.atleast_2d(np.asarray(m, dtype=float))
    print(f"{name}  shape {m.shape}")
    for label, row in zip(rows, m):
        print(f"  {label:>5s}  " + "  ".join("  -inf" if np.isneginf(v) else f"{v:6.{digits}f}" for v in row))


# Where a point's label may go, in points from the point: right, left, above, below, diagonals.
_LABEL_SPOTS = ((3, 2), (-3, 2), (3, -8), (-3, -8), (0, 6), (0, -11), (6, 8), (-6, 8), (6, -13), (-6, -13))


def label_offsets(ax, coords, labels, fontsize: int) -> list[tuple[float, float]]:
    """An offset for each point's label that keeps it clear of the labels placed before it, where
    one of a few spots next to the point allows (the first spot otherwise), so that crowded maps
    stay readable. Labels are sized from their length: no renderer is needed."""
    ax.autoscale_view()
    to_px = ax.figure.dpi / 72.0
    xy = ax.transData.transform(np.asarray(coords, float)[:, :2])
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for (px, py), label in zip(xy, labels):
        w, h = 0.6 * fontsize * len(str(label)) * to_px, fontsize * to_px

        def box(spot):
            dx, dy = spot[0] * to_px, spot[1] * to_px
            x0 = px + dx - (w if spot[0] < 0 else w / 2 if spot[0] == 0 else 0)
            return (x0, py + dy, x0 + w, py + dy + h)

        def clash(b):
            return sum(max(0.0, min(b[2], c[2]) - max(b[0], c[0])) * max(0.0, min(b[3], c[3]) - max(b[1], c[1]))
                       for c in placed)

        best = min(_LABEL_SPOTS, key=lambda spot: (clash(box(spot)) > 0, clash(box(spot))))
        placed.append(box(best))
        w_pts = 0.6 * fontsize * len(str(label))
        dx = best[0] - (w_pts if best[0] < 0 else w_pts / 2 if best[0] == 0 else 0)
        out.append((dx, best[1]))
    return out


def scatter_map(ax, coords, labels, groups, title: str = "", xlabel: str = "", ylabel: str = "",
                axes: bool = True, fontsize: int = 8, legend: bool = False):
    """Labelled points coloured by group: the course's map of an embedding space.

    `axes=False` hides the ticks (t-SNE: its axes mean nothing)."""
    colours = group_colours(groups)
    for (x, y), group in zip(coords, groups):
        ax.scatter(x, y, color=colours[group], s=16)
    offsets = label_offsets(ax, coords, labels, fontsize)
    for (x, y), label, group, offset in zip(coords, labels, groups, offsets):
        ax.annotate(label, (x, y), fontsize=fontsize, color=text_shade(colours[group]), xytext=offset,
                    textcoords="offset points")
    if title:
        _title(ax, title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if not axes:
        ax.set_xticks([])
        ax.set_yticks([])
    if legend:
        for group, colour in colours.items():
            ax.scatter([], [], color=colour, label=group)
        ax.legend(fontsize=8, frameon=False)
    style_axes(ax)
    return ax


def with_alt(fig, alt: str, dpi: int = DPI):
    """A matplotlib figure as an image whose text description is computed from the numbers it
    draws. (A notebook's image output takes its alt text only from typed cell metadata, which
    cannot follow the data.) The figure is closed so that it is not also drawn a second time."""
    from IPython.display import HTML

    check(fig, dpi)
    narrow = phone_png(fig, dpi)
    data = base64.b64encode(png_bytes(fig, dpi)).decode("ascii")
    # Shown at the size it was drawn, a phone given its own version where the figure reads at its width.
    return HTML(picture(data, narrow, alt, "course-plot"))
