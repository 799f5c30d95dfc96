"""An explorer, declared once: its controls and what it computes.

An `Explorer` names its view (the picture it draws), lists its controls in rows, and says how to
compute the view from the controls' values. Everything else follows from that one declaration:
- in a kernel, `lib.explorers.kernel` builds one ipywidgets control per `Control` and calls
  `compute` on every change;
- on the website, the page reads the same declaration (as JSON, `Explorer.spec`), builds native
  controls from it and computes the same view with the shipped model running in the page
  (the view's twin in its chapter's `page.js`, `VIEWS`, one function per view, tested against `compute`);
- in both, one renderer draws the view (`lib/explorers/js/render.js`).

A view is plain data (numbers, text, lists): what the picture shows, and nothing about how.
A value a control cannot take raises `CourseError` from `compute` (and from the page's twin),
with the same sentence in both, which the explorer shows in its message line.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

# The registry (lib.explorers.registry), as the explorers' definitions name it.
from lib.explorers.registry import (REGISTRY, Registered, every_example, registered,  # noqa: F401
                                    registered_views, where_it_sits)

KINDS = ("prompt", "token", "text", "choice", "toggle", "number")


@dataclass(frozen=True)
class Control:
    """One control. `kind`:
    - "prompt": a prompt typed as words (or built from the model's tokens on the website);
      `options` are the chapter's prompts, offered as suggestions (with `precomputed`, the website
      offers them only, as a menu: what the site's build computed; a kernel still takes any);
    - "token": one token of the model, or blank;
    - "text": free text that `compute` parses (a top-k, a seed, an axis such as "Paolo - Pietro");
    - "choice": one of `options` (shown as `shown`), as a menu or, with `slider`, a slider;
    - "toggle": on or off;
    - "number": any number, typed in a box, beside a slider over `options` (its stops, shown as
      `shown`) for the common range, linked both ways: the slider's stop writes the box, a typed
      number moves the slider to its nearest stop (or to its end, out of its range). Its value is the
      number typed (`boxes.parse_number`: text that is no number stays text), and `compute` checks it.
    `description` says what the control does: a tooltip, and what a screen reader announces.
    `follows` = (name, {option: value}): this control's value depends on the choice `name` (an axis is
    written in the words of the point set chosen): when that choice changes, this control is reset to the
    value given for the new option, in a kernel and on the page alike.
    """
    name: str
    label: str
    description: str
    kind: str
    default: Any
    options: tuple = ()
    shown: tuple[str, ...] = ()
    slider: bool = False
    placeholder: str = ""
    width: int = 0                   # a text box's width, in characters (0: the kind's own)
    precomputed: bool = False        # the website offers `options` only (computed when the site was built)
    follows: tuple = ()              # (choice control, {its option: this control's value there})

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: unknown control kind {self.kind!r}; kinds: {', '.join(KINDS)}")
        if self.kind == "choice":
            if self.default not in self.options:
                raise ValueError(f"{self.name}: default {self.default!r} is not one of its options")
            if self.shown and len(self.shown) != len(self.options):
                raise ValueError(f"{self.name}: {len(self.shown)} labels for {len(self.options)} options")
        if self.kind == "number":
            if not self.options or list(self.options) != sorted(self.options) or self.options[0] <= 0:
                raise ValueError(f"{self.name}: a number's slider needs increasing positive stops")
            if self.shown and len(self.shown) != len(self.options):
                raise ValueError(f"{self.name}: {len(self.shown)} labels for {len(self.options)} stops")

    def spec(self) -> dict:
        out = {"name": self.name, "label": self.label, "description": self.description, "kind": self.kind,
               "default": self.default}
        if self.kind == "choice":
            out.update(options=list(self.options), shown=list(self.labels()), slider=self.slider)
        elif self.kind == "number":
            out.update(options=list(self.options), shown=list(self.labels()))
        elif self.options:
            out["options"] = list(self.options)
        if self.placeholder:
            out["placeholder"] = self.placeholder
        if self.width:
            out["width"] = self.width
        if self.precomputed:
            out["precomputed"] = True
        if self.follows:
            out["follows"] = {"control": self.follows[0], "values": dict(self.follows[1])}
        return out

    def labels(self) -> tuple[str, ...]:
        return self.shown or tuple(str(o) for o in self.options)


@dataclass
class Explorer:
    view: str                                   # the picture: drawn by render.js (or the unit's pictures.js), its twin in the unit's page.js
    rows: list[list[Control]]
    compute: Callable[[dict], dict]             # the controls' values -> the view
    model: str | None = None                    # the shipped model the page runs
    args: dict = field(default_factory=dict)    # this instance's fixed settings, given to the page's twin
    note: str = ""                              # a sentence under the controls
    # The "where this sits" line holds only while a control (or an arg) named here has one of these
    # values: (name, values). The embedding table is the game model's, not MiniLM's rows or synthetic points.
    where_if: tuple = ()
    _box: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        names = [c.name for c in self.controls]
        if len(names) != len(set(names)):
            raise ValueError(f"{self.view}: two controls share a name")
        by_name = {c.name: c for c in self.controls}
        for c in self.controls:
            if c.follows:
                leader = by_name.get(c.follows[0])
                if leader is None or leader.kind != "choice" or set(c.follows[1]) != set(leader.options):
                    raise ValueError(f"{self.view}: {c.name} follows {c.follows[0]}, which must be a choice "
                                     f"with a value of {c.name} for each of its options")

    def where_holds(self, values: dict) -> bool:
        """Whether the "where this sits" line is true of the picture the `values` draw."""
        if not self.where_if:
            return True
        name, allowed = self.where_if
        return values.get(name, self.args.get(name)) in allowed

    @property
    def controls(self) -> list[Control]:
        return [c for row in self.rows for c in row]

    def defaults(self) -> dict:
        return {c.name: c.default for c in self.controls}

    def widget(self):
        """The live box in a kernel (lib.explorers.kernel), built on first use."""
        if self._box is None:
            # The kernel's module imports ipywidgets and anywidget, which a definition, the site's build
            # and the tests that never show a widget need not load: deferred until a widget is shown.
            from lib.explorers.kernel import widget
            self._box = widget(self)
        return self._box

    def _repr_mimebundle_(self, **kwargs):
        return self.widget()._repr_mimebundle_(**kwargs)

    def spec(self) -> dict:
        """The declaration as the page reads it ("where": the line its registration gives, saying where
        it sits on the machine of Part 1's map)."""
        out = {"view": self.view, "model": self.model, "args": self.args, "note": self.note,
               "where": where_it_sits(self.view), "rows": [[c.spec() for c in row] for row in self.rows]}
        if self.where_if:
            out["where_if"] = {"name": self.where_if[0], "values": list(self.where_if[1])}
        return out


# ----------------------------------------------------------------------------- controls the explorers share

def log_stops(low: float, high: float, n: int, digits: int = 3) -> tuple[float, ...]:
    """`n` + 1 stops evenly spaced in the logarithm from `low` to `high`, each rounded to `digits`
    significant digits: the value a slider shows is the value used, in the kernel and the page."""
    stops = []
    for i in range(n + 1):
        v = float(f"{10 ** (math.log10(low) + (math.log10(high) - math.log10(low)) * i / n):.{digits}g}")
        if not stops or v != stops[-1]:
            stops.append(v)
    return tuple(stops)


def shown_number(v: float, digits: int = 3) -> str:
    """A stop as its slider shows it: `digits` significant digits, trailing zeros kept (0.100)."""
    return f"{v:#.{digits}g}".rstrip(".")


TEMPERATURES = log_stops(0.1, 10.0, 400)


def prompt_control(prompts: Sequence[str], name: str = "prompt", label: str = "prompt") -> Control:
    return Control(name, label, "the words the model reads, separated by spaces; try any you like", "prompt",
                   prompts[0], options=tuple(prompts))


def text_menu(default: str, options, name: str = "prompt", label: str = "prompt") -> Control:
    """A real-model explorer's text control: on the website a menu of the texts the build ran, until the reader
    loads the model into the page (lib.explorers.smollm2; then a box for any text); in a kernel any text."""
    offered = tuple(options) if default in options else (default, *options)
    return Control(name, label, "the text the model reads: in a kernel, or once the real model is loaded into the "
                   "page, type any; until then choose one of those run when the site was built", "prompt", default,
                   options=offered, precomputed=True)


def temperature_control(default: float = 1.0) -> Control:
    """A slider over 0.1 to 10 and a box that takes any temperature the read-out accepts."""
    from lib.model.readout import MIN_TEMPERATURE  # deferred: the read-out imports torch, a definition need not

    return Control("temperature", "temperature", "divides every logit before the softmax: below 1 sharpens the page, "
                   f"above 1 flattens it; slide from {shown_number(TEMPERATURES[0])} to {shown_number(TEMPERATURES[-1])}, "
                   f"or type any number from {MIN_TEMPERATURE:g} up", "number", default,
                   options=TEMPERATURES, shown=tuple(shown_number(t) for t in TEMPERATURES), width=7)


FOLLOW = "the token whose probability the picture follows; blank: the model's own answer"


def token_control(name: str, label: str, description: str, default: str = "", placeholder: str = "") -> Control:
    return Control(name, label, description, "token", default, placeholder=placeholder)


def head_toggles(n_layers: int, n_heads: int) -> list[list[Control]]:
    """One row of switches per layer, one switch per head, named as the library names heads."""
    return [[Control(f"L{layer}H{head}", f"L{layer}H{head}", f"switch layer {layer} head {head} off", "toggle",
                     False) for head in range(n_heads)] for layer in range(n_layers)]


def switched_off(values: dict, n_layers: int, n_heads: int) -> list[tuple[int, int]]:
    """The heads whose switches are on, as (layer, head)."""
    return [(layer, head) for layer in range(n_layers) for head in range(n_heads) if values.get(f"L{layer}H{head}")]
