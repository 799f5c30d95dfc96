"""An explorer in a kernel: ipywidgets controls from its definition, the course's renderer for its picture.

`widget(explorer)` lays out one ipywidgets control per `Control`, a message line and the picture.
On every change it calls the explorer's `compute` and hands the view to the picture, an anywidget
whose JavaScript is the website's own renderer (`lib/explorers/js/render.js`): one drawing of each
picture, in JupyterLab and on the website. A `CourseError` (an unknown word, a top-p of 2) becomes a
sentence in the message line and the last good picture stays.

The same output also carries the website's version (`lib.explorers.page`), as text/html: the
website shows that (`nb_mime_priority_overrides` in _config.yml), JupyterLab the live widget.
"""
from __future__ import annotations

import html

import anywidget
import ipywidgets as W
import traitlets

from lib.errors import CourseError
from lib.explorers import page, web
from lib.explorers.boxes import nearest_stop, parse_number
from lib.explorers.registry import where_it_sits

STYLE = {"description_width": "initial"}
_VIEW_CLASS = None


def _view_class():
    """The anywidget that draws a view (defined on first use: its renderer is read only then)."""
    global _VIEW_CLASS
    if _VIEW_CLASS is None:
        class ExplorerView(anywidget.AnyWidget):
            _esm = web.kernel_renderer()
            _css = web.JS / "explorers.css"
            view = traitlets.Unicode("").tag(sync=True)
            data = traitlets.Dict({}).tag(sync=True)

        _VIEW_CLASS = ExplorerView
    return _VIEW_CLASS


def _number(c, tip):
    """A "number" control: a slider over its stops and a box beside it, linked both ways. The box's
    `value` is what `compute` reads: the number typed (or the text, when it is no number)."""
    stops, labels = list(c.options), list(c.labels())

    def text_of(v):
        return labels[stops.index(v)] if v in stops else (v if isinstance(v, str) else repr(v))

    class NumberControl(W.HBox):
        value = traitlets.Any()

    slider = W.SelectionSlider(options=list(zip(labels, stops)), value=stops[nearest_stop(stops, c.default)],
                               description=c.label, continuous_update=True, readout=False, style=STYLE,
                               layout=W.Layout(width="20em"), **tip)
    box = W.Text(value=text_of(c.default), layout=W.Layout(width=f"{(c.width or 8) * 0.6 + 2:.1f}em"), **tip)
    control = NumberControl([slider, box], value=c.default)
    # (A box's own tooltip trait breaks JupyterLab's view of it: the slider and the box carry the description.)
    control.description, control.slider, control.box = c.label, slider, box
    syncing = []

    def linked(move):
        """One side moved: `move` sets the others, which do not answer back."""
        def observer(change):
            if syncing:
                return
            syncing.append(1)
            try:
                move(change.new)
            finally:
                syncing.clear()
        return observer

    def from_slider(v):
        box.value, control.value = labels[slider.index], v

    def from_box(text):
        value = parse_number(text)
        if isinstance(value, (int, float)) and value > 0:     # text that is no positive number leaves the slider
            slider.value = stops[nearest_stop(stops, value)]
        control.value = value

    def mark(wrong, drawn):
        """The box was refused: the slider shows the value the picture keeps."""
        if not (wrong and isinstance(drawn, (int, float))):
            return
        held = bool(syncing)            # called inside the box's own move: its guard already holds
        syncing.append(1)
        try:
            slider.value = stops[nearest_stop(stops, drawn)]
        finally:
            if not held:
                syncing.clear()

    def from_value(v):                 # a value set from Python (a test, the benchmark)
        slider.value, box.value = stops[nearest_stop(stops, v)], text_of(v)

    control.mark = mark
    slider.observe(linked(from_slider), names="value")
    box.observe(linked(from_box), names="value")
    control.observe(linked(from_value), names="value")
    return control


def box_chars(c) -> int:
    """A text box's width in characters when its control gives none: a prompt's as wide as the longest prompt
    it offers, at least 40 (the page's twin is boxWidth in page.js)."""
    if c.kind != "prompt":
        return 40
    return max([40] + [len(str(p)) + 2 for p in (c.default, *c.options)])


def without_one_box(explorer, values: dict, good: dict | None, error: CourseError):
    """The box `compute` refused, found by giving each changed control back its last good value:
    (its name, the sentence naming it, the view with that box's good value, the values drawn), or None."""
    if good is None:
        return None
    labels = {c.name: c.label for c in explorer.controls}
    for name, value in values.items():
        if value == good.get(name) and type(value) is type(good.get(name)):
            continue
        tried = {**values, name: good[name]}
        try:
            data = explorer.compute(tried)
        except CourseError:
            continue
        kept = repr(good[name]) if isinstance(good[name], float) else str(good[name]).strip() or "blank"
        # The box is named, unless the sentence opens with its name already ("top-p must lie in...").
        said = str(error) if str(error).startswith(labels[name]) else f"{labels[name]}: {error}"
        return name, (f"{said}. The picture keeps the last {labels[name]} that worked ({kept}); "
                      "the other controls still work."), data, tried
    return None


def _control(c):
    """The ipywidgets control for one `Control`; its value is what `compute` reads."""
    tip = {"tooltip": c.description} if c.description else {}
    if c.kind == "number":
        return _number(c, tip)
    if c.kind == "toggle":
        return W.ToggleButton(value=bool(c.default), description=c.label, layout=W.Layout(width="auto"), **tip)
    if c.kind == "choice":
        options = list(zip(c.labels(), c.options))
        if c.slider:
            return W.SelectionSlider(options=options, value=c.default, description=c.label, continuous_update=True,
                                     style=STYLE, layout=W.Layout(width="26em"), **tip)
        return W.Dropdown(options=options, value=c.default, description=c.label, style=STYLE, **tip)
    # A box about as wide as the text it expects, beside its label.
    chars = (c.width or box_chars(c)) + len(c.label)
    layout = W.Layout(width=f"{chars * 0.6 + 2:.1f}em")
    if c.kind == "prompt":
        return W.Combobox(value=c.default, options=list(c.options), description=c.label, ensure_option=False,
                          style=STYLE, layout=layout, **tip)
    return W.Text(value=str(c.default), placeholder=c.placeholder, description=c.label, style=STYLE, layout=layout,
                  **tip)


def choose(explorer, controls, content) -> bool:
    """A click on a part of the picture marked data-choose="control=value" (the machine's map), or several
    such pairs joined by "&" (a cell of the patching grid: "cell=L0H3&position=5"), sent by the renderer as
    {"choose": ...}: a menu takes the option whose value or text is `value`, a text box takes `value`, as on
    the website (page.js). Anything else (an unknown control or option) is ignored. Returns whether a
    control was set."""
    if not isinstance(content, dict) or not isinstance(content.get("choose"), str):
        return False
    declared = {c.name: c for c in explorer.controls}
    found = []
    for pair in content["choose"].split("&"):
        name, _, value = pair.partition("=")
        c = declared.get(name)
        if c is None:
            continue
        if c.kind == "text":
            found.append((name, value))
            continue
        if c.kind != "choice":
            continue
        for option, label in zip(c.options, c.labels()):
            if str(option) == value or label == value:
                found.append((name, option))
                break
    for name, value in found:
        controls[name].value = value
    return bool(found)


def widget(explorer):
    """The explorer's live box: rows of controls, a message line, the picture."""
    class ExplorerBox(W.VBox):
        def _repr_mimebundle_(self, **kwargs):
            bundle = dict(super()._repr_mimebundle_(**kwargs))
            bundle["text/html"] = page.html(explorer, self.figure.data or None)
            return bundle

    controls = {c.name: _control(c) for c in explorer.controls}
    message = W.HTML()
    figure = _view_class()(view=explorer.view)
    good = {}                   # the values of the picture on show (a refused box falls back to its value here)
    where_note = W.HTML()
    say_error = lambda text: (f'<span class="course-error" role="alert" style="color:#bc4c00">'  # noqa: E731
                              f'{html.escape(text, quote=False)}</span>')

    def update(*_):
        values = {name: w.value for name, w in controls.items()}
        wrong = None
        try:
            data = explorer.compute(values)
        except CourseError as e:
            found = without_one_box(explorer, values, good or None, e)
            if found is None:
                message.value = say_error(str(e))
                return
            wrong, text, data, values = found
            message.value = say_error(text)
        else:
            message.value = ""
        for name, w in controls.items():
            if hasattr(w, "mark"):
                w.mark(name == wrong, good.get(name))
        good.clear()
        good.update(values)
        where_note.layout.display = None if explorer.where_holds(values) else "none"
        figure.data = data

    # A control that follows a choice (an axis in the chosen word set's words) takes its value for the new
    # option; the picture is drawn once, when the followers are set.
    following = {}
    for c in explorer.controls:
        if c.follows:
            following.setdefault(c.follows[0], []).append(c)
    resetting = []

    def moved(change):
        if change.owner in leaders and following.get(leaders[change.owner]):
            resetting.append(1)
            try:
                for f in following[leaders[change.owner]]:
                    controls[f.name].value = f.follows[1][change.new]
            finally:
                resetting.clear()
        if not resetting:
            update()

    leaders = {controls[name]: name for name in following}
    for w in controls.values():
        w.observe(moved, names="value")
    figure.on_msg(lambda _, content, buffers: choose(explorer, controls, content))
    update()
    rows = [W.HBox([controls[c.name] for c in row], layout=W.Layout(flex_flow="row wrap")) for row in explorer.rows]
    notes = [W.HTML(f'<p class="course-note">{html.escape(explorer.note)}</p>')] if explorer.note else []
    where = where_it_sits(explorer.view)
    if where:
        where_note.value = (f'<p class="course-note">Where this sits on the machine (Part 1\'s map): '
                            f'{html.escape(where)}</p>')
        notes.append(where_note)
    box = ExplorerBox(rows + notes + [message, figure])
    box.add_class("course-explorer")
    box.controls, box.message, box.figure = controls, message, figure
    return box
