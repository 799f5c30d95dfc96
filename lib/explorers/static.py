"""Explorers on the published website, without a kernel.

In a kernel an explorer recomputes on every change. The website has no kernel, so when the book is
built each explorer is also computed over a grid of its control values, by the very function the
kernel calls, and the pictures are shipped in the page with a small script
(`_assets/course-explorers.js`) that swaps them as the reader moves a control. The default picture is
in the page as it is, so the page reads the same without JavaScript.

A static explorer is:
- controls, in rows: a `select`, a `range` (a slider over a list of stops) or a `toggle` (a button
  that is pressed or not), each with a visible label;
- parts: the figure is the concatenation of parts, each looked up in a table by the values of the
  controls it depends on (so the two panels of the t-SNE explorer share one table, and a head's
  pattern does not repeat for every combination of the other heads);
- tables: {key: html} where the key joins the positions of the part's control values among their
  options with "|" (short keys, whatever the prompts), or {key: {"error": message}} where the live
  explorer would show a message instead of a picture. In the page, every distinct piece of HTML is
  stored once and the tables hold its number (greedy decoding picks the same token for every seed).

The grids are computed only while the book is built (`BUILD_FLAG` in the environment): a reader's
kernel never pays for them.
"""
from __future__ import annotations

import hashlib
import html
import itertools
import json
import os
from dataclasses import dataclass, field
from typing import Callable, Sequence

from lib.errors import CourseError

BUILD_FLAG = "COURSE_STATIC_EXPLORERS"
SEP = "|"
_rendered = 0   # explorers rendered by this process: keeps element ids unique on a page


def building() -> bool:
    """Whether this process is executing the chapters for the website."""
    return os.environ.get(BUILD_FLAG) == "1"


@dataclass(frozen=True)
class Control:
    name: str
    label: str
    kind: str                    # "select" | "range" | "toggle"
    options: tuple[str, ...]     # the values, as text ("on"/"off" for a toggle)
    value: str                   # the default
    shown: tuple[str, ...] = ()  # what a select shows for each option, if not the option itself
    hint: str = ""               # a toggle's tooltip and accessible description ("switch ... off")

    def __post_init__(self):
        if self.kind not in ("select", "range", "toggle"):
            raise ValueError(f"unknown control kind {self.kind!r}")
        if self.value not in self.options:
            raise ValueError(f"{self.name}: default {self.value!r} is not one of its options")


def select(name: str, label: str, options: Sequence, value, shown: Sequence[str] = ()) -> Control:
    return Control(name, label, "select", tuple(str(o) for o in options), str(value), tuple(shown))


def slider(name: str, label: str, stops: Sequence, value) -> Control:
    return Control(name, label, "range", tuple(str(s) for s in stops), str(value))


def toggle(name: str, label: str, pressed: bool = False, hint: str = "") -> Control:
    return Control(name, label, "toggle", ("off", "on"), "on" if pressed else "off", hint=hint)


@dataclass(frozen=True)
class Part:
    table: str = ""
    keys: tuple[str, ...] = ()
    html: str = ""               # a constant part (the opening or closing of a row of charts)


def const(markup: str) -> Part:
    return Part(html=markup)


@dataclass
class StaticExplorer:
    rows: list[list[Control]]
    parts: list[Part]
    tables: dict[str, dict[str, object]] = field(default_factory=dict)
    note: str = ""               # a sentence under the controls (what the website's grid covers)
    missing: str = "this combination is not on the website; open the chapter in JupyterLab to try it"

    @property
    def controls(self) -> dict[str, Control]:
        return {c.name: c for row in self.rows for c in row}

    def fill(self, table: str, keys: Sequence[str], make: Callable[..., str],
             allowed: Callable[..., bool] | None = None) -> None:
        """Compute `table` over every combination of the options of the controls `keys` (those that
        `allowed(**values)` accepts, if given).

        `make(**values)` returns the part's HTML; a CourseError becomes the message the reader sees."""
        controls = self.controls
        out: dict[str, object] = {}
        for combo in itertools.product(*(controls[k].options for k in keys)):
            values = dict(zip(keys, combo))
            if allowed is not None and not allowed(**values):
                continue
            try:
                out[self.key(values, keys)] = make(**values)
            except CourseError as e:
                out[self.key(values, keys)] = {"error": str(e)}
        self.tables[table] = out

    def key(self, values: dict[str, str], keys: Sequence[str]) -> str:
        controls = self.controls
        return SEP.join(str(controls[k].options.index(values[k])) for k in keys)

    def lookup(self, values: dict[str, str]) -> tuple[list[str], str]:
        """(the parts' HTML, the message) for a setting of the controls, as the page's script does it."""
        parts = []
        for part in self.parts:
            if not part.table:
                parts.append(part.html)
                continue
            entry = self.tables[part.table].get(self.key(values, part.keys))
            if entry is None:
                return [], self.missing
            if isinstance(entry, dict):
                return [], entry["error"]
            parts.append(entry)
        return parts, ""

    def data(self) -> dict:
        strings: dict[str, int] = {}
        tables = {name: {k: (v if isinstance(v, dict) else strings.setdefault(v, len(strings)))
                         for k, v in table.items()} for name, table in self.tables.items()}
        return {"controls": {c.name: list(c.options) for c in self.controls.values()},
                "parts": [{"table": p.table, "keys": list(p.keys), "html": p.html} for p in self.parts],
                "tables": tables, "strings": list(strings), "missing": self.missing}

    def render(self) -> str:
        defaults = {c.name: c.value for c in self.controls.values()}
        parts, message = self.lookup(defaults)
        global _rendered
        _rendered += 1
        uid = f"cx{_rendered}-{hashlib.sha1(json.dumps(self.data()['parts']).encode()).hexdigest()[:8]}"
        rows = "".join(f'<div class="course-controls">{"".join(_control_html(c, uid) for c in row)}</div>'
                       for row in self.rows)
        note = f'<p class="course-note">{html.escape(self.note)}</p>' if self.note else ""
        # The data goes in a JSON script element; "</" is escaped so no string can close it.
        payload = json.dumps(self.data(), separators=(",", ":")).replace("</", "<\\/")
        return (f'<div class="course-explorer course-static" id="{uid}">{rows}{note}'
                f'<p class="course-message" role="alert">{html.escape(message)}</p>'
                f'<div class="course-figure" aria-live="polite">{"".join(parts)}</div>'
                f'<script type="application/json" class="course-explorer-data">{payload}</script></div>')


def _control_html(c: Control, uid: str) -> str:
    cid = f"{uid}-{c.name}"
    label = html.escape(c.label)
    if c.kind == "select":
        shown = c.shown or c.options
        opts = "".join(f'<option value="{html.escape(o)}"{" selected" if o == c.value else ""}>{html.escape(t)}</option>'
                       for o, t in zip(c.options, shown))
        return (f'<label class="course-control" for="{cid}">{label} '
                f'<select id="{cid}" data-control="{c.name}">{opts}</select></label>')
    if c.kind == "range":
        i = c.options.index(c.value)
        return (f'<label class="course-control" for="{cid}">{label} '
                f'<input type="range" id="{cid}" data-control="{c.name}" min="0" max="{len(c.options) - 1}" '
                f'step="1" value="{i}" aria-valuetext="{html.escape(c.value)}">'
                f'<output for="{cid}">{html.escape(c.value)}</output></label>')
    pressed = "true" if c.value == "on" else "false"
    hint = f' title="{html.escape(c.hint)}" aria-description="{html.escape(c.hint)}"' if c.hint else ""
    return (f'<button type="button" class="course-toggle" id="{cid}" data-control="{c.name}" '
            f'aria-pressed="{pressed}"{hint}>{label}</button>')
