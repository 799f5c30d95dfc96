"""Predict and investigate exercises checked on the website, without a kernel.

A check that the page can run declares its twin once, beside the check, with `site_check`: the rule
it applies (a number within a tolerance, a whole number, one of a list of options, or "open": the
check's own decision, written out in the page's computation as in the check), the sentences it
says (templates with named fields), the inputs the page's computation reads (`args`: a prompt, the
sizes of a model; never the answer), and the name of that computation in its chapter's `page.js`
(`COMPUTE[compute]`, lib/chapters/PART/UNIT/page.js, which the build gathers into `units.js` for the page's
`checks.js`). The Python check calls `twin.judge(answer, lm)`, which gets the expected value, the
known wrong values and the fields from `values` (the library's computation) and applies the rule;
the page runs its own computation (the shipped models run in the page) and applies the same rule
with the same sentences. So the expected value is computed where the check runs, never shipped:
the class site (`make book SOLUTIONS=hide`) holds neither solutions nor the values a check compares
against, and its answer boxes work all the same.

`declarations()` is what the page reads (generated into `exercise_checks.js` when the site is built);
`SITE_CHECKS` is the registry the tests iterate (tests/browser/test_site_checks.py types, for each,
the right answer, the known wrong ones and garbage, and holds the page's verdict and message to the
library's).
"""
from __future__ import annotations

import re

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Mapping

from lib.exercises import Feedback, NOT_ANSWERED, check_choice, check_number, check_whole_number, shown, unanswered
from lib.exercises.reading import Unread, read_number, read_text, unquoted
from lib import units
from lib.exercises.catalogue import ROOT, catalogue
from lib.model.store import load

RULES = ("number", "whole", "choice", "open")
READINGS = ("number", "text", "tuple")   # how an open check's box is read (the others: by their rule)
GENERATED = "exercise_checks.js"

SITE_CHECKS: dict[str, "SiteCheck"] = {}
_COMPUTED: dict[tuple, "Values"] = {}


@dataclass(frozen=True)
class Values:
    """What a check compares an answer with, as the library computes it (the page computes the same)."""
    expected: object
    hints: Mapping[str, object] = field(default_factory=dict)   # key of a text in `texts` -> a known wrong value
    options: tuple | None = None                                 # a choice's options
    fields: Mapping[str, object] = field(default_factory=dict)   # named values the texts print


@dataclass(frozen=True)
class SiteCheck:
    module: str        # the chapter unit whose checks module declares it (lib.units.checks(module))
    check: str         # the check function's name in it
    rule: str          # number, whole or choice
    compute: str | None  # the page's computation of the same Values, in its unit's page.js COMPUTE; None where
    # the page does not compute them (t-SNE runs the library stores; sampled rounds): the default site
    # ships the values, the class site says to check it live
    values: Callable   # the library's: values(lm) -> Values (or values() for a check without a model)
    what: str = ""     # a number's name in the messages ("The weight")
    tol: float | None = None                 # a number's tolerance (absolute)
    rel_tol: float | None = None             # or relative: tol = rel_tol * the expected value
    texts: Mapping[str, str] = field(default_factory=dict)  # right/wrong (choice) and a text per hint
    args: Mapping | Callable = field(default_factory=dict)   # what the page's computation reads (or a
    # function returning it, for inputs the library works out, such as a prompt drawn from a set)
    model: str | tuple[str, ...] | None = None   # the shipped model (or models, in the check's order) it reads
    reads: str | None = None                 # an open check's reading of the box: number, text or tuple
    units: tuple[str, ...] = ()              # words a number in the box may carry ("GB", "tokens")
    words: tuple[str, ...] | Callable | None = None   # a text box's tokens: one typed in another case is it
    # (or a function returning them, as `args`)
    own: str = ""      # the label of a second box for the learner's own text: the check is of their text (its
    # `values(text)` runs SmolLM2 on it; on the page, the real model the reader loads runs it: `COMPUTE(args with
    # the text, null, real)`), so no value can be shipped and the class site's box works once the model is loaded
    own_example: str = ""   # a text of the learner's kind, the one the tests (and `computed()`) check with
    # An open check ("open") decides by itself, as the library's function is written: its sentences
    # are `texts`, said through `say`, and the page's computation decides the same way. Its `values`
    # are examples for the tests only (a right answer, and a wrong one per text key), never shipped.

    @property
    def name(self) -> str:
        return f"{self.module}.{self.check}"

    @property
    def models(self) -> tuple[str, ...]:
        return () if self.model is None else (self.model,) if isinstance(self.model, str) else tuple(self.model)

    @property
    def reading(self) -> str:
        """How the page's box is read: `reads` for an open check, else its rule."""
        return self.reads if self.rule == "open" else self.rule

    @property
    def vocabulary(self) -> tuple[str, ...] | None:
        return tuple(self.words()) if callable(self.words) else self.words

    def read(self, answer):
        """A text answer as the box reads it (lib.exercises.reading), for an open check's own decision:
        a number box's number (an `Unread` stays text), a text box's words; any other answer as it is."""
        if not isinstance(answer, str):
            return answer
        if self.reading == "number":
            value = read_number(answer, units=self.units)
            return answer.strip() if isinstance(value, Unread) else value
        if self.reading == "text":
            return read_text(answer, self.vocabulary)
        return answer

    def load_models(self) -> tuple:
        return tuple(load(m) for m in self.models)

    def computed(self, *lms) -> Values:
        """The library's values, worked out once per model however often a learner checks."""
        if self.own:
            return self.values_of(self.own_example)
        lms = tuple(lm for lm in lms if lm is not None)
        key = (self.name,) + tuple((getattr(lm, "name", None), id(getattr(lm, "model", lm))) for lm in lms)
        if key not in _COMPUTED:
            _COMPUTED[key] = self.values(*lms)
        return _COMPUTED[key]

    def values_of(self, text: str) -> Values:
        """An own-text check's values on `text`, worked out once per text."""
        key = (self.name, "text", str(text))
        if key not in _COMPUTED:
            _COMPUTED[key] = self.values(str(text))
        return _COMPUTED[key]

    def say(self, key: str, ok: bool = False, **fields) -> Feedback:
        """An open check's verdict, with its declared sentence `key` filled with `fields`."""
        return Feedback(ok, self.texts[key].format(**fields))

    def judge(self, answer, *lms) -> Feedback:
        """The check: `answer` against the library's values, with the declared sentences."""
        if self.rule == "open":
            raise TypeError(f"{self.name} is an open check: it decides by itself and says its texts with `say`")
        if unanswered(answer):
            return Feedback(False, NOT_ANSWERED, answered=False)
        return self._judged(answer, self.computed(*lms))

    def judge_text(self, text, answer) -> Feedback:
        """An own-text check (`own`): `answer` against the values the library computes on the learner's `text`."""
        if unanswered(text):
            return Feedback(False, NOT_ANSWERED, answered=False)
        if unanswered(answer):
            return Feedback(False, NOT_ANSWERED, answered=False)
        return self._judged(answer, self.values_of(text))

    def _judged(self, answer, v: Values) -> Feedback:
        fill = lambda key, **more: self.texts[key].format(**v.fields, **more)   # noqa: E731
        if self.rule == "number":
            tol = self.tol if self.tol is not None else self.rel_tol * v.expected
            return check_number(answer, v.expected, tol=tol, what=self.what, units=self.units,
                                hints={value: fill(key) for key, value in v.hints.items()})
        if self.rule == "whole":
            return check_whole_number(answer, v.expected, what=self.what, units=self.units,
                                      hints={value: fill(key) for key, value in v.hints.items()})
        said = {"answer": answer, "shown": shown(answer)}
        return check_choice(answer, v.options, v.expected, right=fill("right", **said), wrong=fill("wrong", **said),
                            hints={value: fill(key, **said) for key, value in v.hints.items()})

    @property
    def shipped(self) -> bool:
        return self.compute is None

    def declaration(self, mode: str = "fold") -> dict:
        """What the page reads: everything but the expected values, which the page computes. A twin
        without a computation ships its values on the default site; on the class site ("hide") it
        is only marked live."""
        out = {"check": self.name, "rule": self.rule, "reads": self.reading, "compute": self.compute, "what": self.what,
               "tol": self.tol, "rel_tol": self.rel_tol, "texts": dict(self.texts), "model": self.model,
               "args": dict(self.args() if callable(self.args) else self.args), "units": list(self.units),
               "words": None if self.vocabulary is None else list(self.vocabulary), "own": self.own}
        if not self.shipped:
            return out
        if mode == "hide":
            return {"check": self.name, "rule": self.rule, "live": True}
        v = self.computed(*self.load_models())
        return {**out, "values": {"expected": v.expected, "hints": [[k, w] for k, w in v.hints.items()],
                                  "options": list(v.options) if v.options is not None else None,
                                  "fields": dict(v.fields)}}


def site_check(module: str, check: str, *, rule: str, compute: str | None, values: Callable, **kw) -> SiteCheck:
    """Declare the page twin of the check `check` of a chapter's checks module (module: that module's
    __name__, lib.chapters.PART.UNIT.checks, or the unit's name) and register it."""
    module = module[:-len(".checks")].rsplit(".", 1)[-1] if module.endswith(".checks") else module.rsplit(".", 1)[-1]
    if rule not in RULES:
        raise ValueError(f"{module}.{check}: rule {rule!r} is not one of {', '.join(RULES)}")
    kw["texts"] = MappingProxyType(dict(kw.get("texts", {})))
    if not callable(kw.get("args")):
        kw["args"] = MappingProxyType(dict(kw.get("args", {})))
    twin = SiteCheck(module, check, rule, compute, values, **kw)
    if rule == "choice" and not {"right", "wrong"} <= set(twin.texts):
        raise ValueError(f"{twin.name}: a choice declares its right and wrong texts")
    if twin.own and (compute is None or rule == "open" or not twin.own_example):
        raise ValueError(f"{twin.name}: an own-text check is computed in the page (its values are of the learner's "
                         "text) and declares an example of such a text for the tests")
    if rule == "open" and (twin.reads not in READINGS or compute is None):
        raise ValueError(f"{twin.name}: an open check reads its box as one of {', '.join(READINGS)} "
                         "and the page computes its decision (it has no values to ship)")
    if twin.name in SITE_CHECKS:
        raise ValueError(f"{twin.name} declared twice")
    SITE_CHECKS[twin.name] = twin
    return twin


def registry() -> dict[str, SiteCheck]:
    """Every declared twin: the check modules imported, each declares its own."""
    units.load("checks")
    return SITE_CHECKS


def typed_answer(text: str, rule: str, units=(), words=None):
    """What a reader typed in the page's box, as the library's check receives it, read by the one rule
    of lib.exercises.reading: for a number or a whole number, the number however it is written (0,482,
    48.2%, 1/4, 27 126, with the box's `units` after it), else the text (a comma that could be read two
    ways included: the check says so); for a choice, the text without its outer spaces (the check reads
    case and quotes); for a text, the words (`words`: the tokens one typed in another case stands for);
    for a tuple, its items (separated by commas, or else by spaces; in parentheses or brackets or not;
    an item in quotes is a string, any other is read as a number is). (rules.js's typedAnswer reads the
    box the same way.)"""
    s = text.strip()
    if s == "":
        return ...
    if rule == "choice":
        return s
    if rule == "text":
        return read_text(s, words)
    if rule == "tuple":
        if len(s) >= 2 and (s[0], s[-1]) in (("(", ")"), ("[", "]")):
            s = s[1:-1].strip()
        s = AND.sub(",", s)                       # "vice and Cefa" as "vice, Cefa"
        items = [i.strip() for i in s.split(",")] if "," in s else s.split()
        if len(items) > 1 and items[-1] == "":
            items.pop()              # a trailing comma, as in ("L0H3", 2,)
        return tuple(_item(i) for i in items)
    value = read_number(s, whole=rule == "whole", units=units)
    return s if isinstance(value, Unread) else value


def _item(text: str):
    """An item of a tuple: a quoted text without its quotes, else a number where it reads as one, else the text."""
    bare = unquoted(text)
    if bare != text:
        return bare
    if text == "":
        return ""
    value = read_number(text, whole=True)
    return text if isinstance(value, Unread) else value


# "and" between the items of a list (checks.js reads the box the same way).
AND = re.compile(r",?\s+and\s+")


def twins_by_label(root: Path | None = None) -> dict[str, SiteCheck]:
    """Each predict or investigate exercise whose check has a twin, by its label."""
    twins = registry()
    return {e.label: twins[f"{e.module}.{e.checks[0]}"] for e in catalogue(root or ROOT)
            if e.kind in ("predict", "investigate") and len(e.checks) == 1 and f"{e.module}.{e.checks[0]}" in twins}


def declarations(root: Path | None = None, mode: str = "fold") -> dict[str, dict]:
    """The page's table, by label (`mode`: "hide" for the class site)."""
    return {label: twin.declaration(mode) for label, twin in twins_by_label(root).items()}


def coverage(root: Path | None = None) -> tuple[int, int, int]:
    """(predict and investigate exercises the page checks by computing, those whose values the default
    site ships, all of them)."""
    total = sum(e.kind in ("predict", "investigate") for e in catalogue(root or ROOT))
    twins = twins_by_label(root).values()
    return sum(not t.shipped for t in twins), sum(t.shipped for t in twins), total


def coverage_markdown(root: Path | None = None) -> str:
    """The instructors' page's paragraph on the website's answer boxes, counted from the registry."""
    asked = [e for e in catalogue(root or ROOT) if e.kind in ("predict", "investigate")]
    twins = twins_by_label(root)
    computed = [e.label for e in asked if e.label in twins and not twins[e.label].shipped]
    shipped = [e.label for e in asked if e.label in twins and twins[e.label].shipped]
    live = [e.label for e in asked if e.label not in twins]
    refs = lambda labels: ", ".join(f"{{ref}}`{label}`" for label in labels)   # noqa: E731
    text = (f"{len(computed)} of the {len(asked)} predict and investigate exercises check on the website by "
            "computing, in the page, what their check compares with (the shipped models run there, as the "
            "explorers do), so their boxes work on the class site as well and ship no answer.")
    if shipped:
        text += (f" {len(shipped)} more check on the default site from values it ships with them, where the page "
                 "does not compute them (t-SNE runs the library stores; rounds the library samples, some with torch's "
                 "sampler, which the page does not repeat, some in more passes than a click can wait for): "
                 f"{refs(shipped)}; the class site leaves those values out and sends the learner to the live "
                 "notebook instead.")
    if live:
        text += f" {len(live)} check only live, in a notebook: {refs(live)}."
    return text


def module_text(mode: str = "fold") -> str:
    """exercise_checks.js: the table, and whether this is the class site (mode "hide")."""
    return ("// Generated from the course's Python library (lib/exercises/site.py) when the site is built.\n"
            f"export const SOLUTIONS = {json.dumps(mode)};\n"
            f"export const EXERCISE_CHECKS = {json.dumps(declarations(mode=mode), ensure_ascii=False, allow_nan=False)};\n")


def install(folder: Path, mode: str = "fold") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / GENERATED
    path.write_text(module_text(mode))
    return path
