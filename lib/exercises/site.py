"""Predict and investigate exercises checked on the website, without a kernel.

A check that the page can run declares its twin once, beside the check, with `site_check`: the rule
it applies (a number within a tolerance, a whole number, one of a list of options), the sentences it
says (templates with named fields), the inputs the page's computation reads (`args`: a prompt, the
sizes of a model; never the answer), and the name of that computation in the page's `checks.js`
(`compute`). The Python check calls `twin.judge(answer, lm)`, which gets the expected value, the
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

import importlib
import json
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Mapping

from lib.exercises import Feedback, NOT_ANSWERED, check_choice, check_number, check_whole_number, shown, unanswered

RULES = ("number", "whole", "choice")
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
    module: str        # lib.exercises.<module>
    check: str         # the check function's name in it
    rule: str          # number, whole or choice
    compute: str | None  # the page's computation of the same Values, in checks.js's COMPUTE; None where
    # the page cannot compute them (a stored t-SNE run, sampled rounds, a prompt set): the default site
    # ships the values, the class site says to check it live
    values: Callable   # the library's: values(lm) -> Values (or values() for a check without a model)
    what: str = ""     # a number's name in the messages ("The weight")
    tol: float | None = None                 # a number's tolerance (absolute)
    rel_tol: float | None = None             # or relative: tol = rel_tol * the expected value
    texts: Mapping[str, str] = field(default_factory=dict)  # right/wrong (choice) and a text per hint
    args: Mapping | Callable = field(default_factory=dict)   # what the page's computation reads (or a
    # function returning it, for inputs the library works out, such as a prompt drawn from a set)
    model: str | None = None                 # the shipped model the check reads, if any

    @property
    def name(self) -> str:
        return f"{self.module}.{self.check}"

    def computed(self, lm=None) -> Values:
        """The library's values, worked out once per model however often a learner checks."""
        key = (self.name, getattr(lm, "name", None), id(getattr(lm, "model", lm)))
        if key not in _COMPUTED:
            _COMPUTED[key] = self.values(lm) if self.model else self.values()
        return _COMPUTED[key]

    def judge(self, answer, lm=None) -> Feedback:
        """The check: `answer` against the library's values, with the declared sentences."""
        if unanswered(answer):
            return Feedback(False, NOT_ANSWERED, answered=False)
        v = self.computed(lm)
        fill = lambda key, **more: self.texts[key].format(**v.fields, **more)   # noqa: E731
        if self.rule == "number":
            tol = self.tol if self.tol is not None else self.rel_tol * v.expected
            return check_number(answer, v.expected, tol=tol, what=self.what,
                                hints={value: fill(key) for key, value in v.hints.items()})
        if self.rule == "whole":
            return check_whole_number(answer, v.expected, what=self.what,
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
        out = {"check": self.name, "rule": self.rule, "compute": self.compute, "what": self.what,
               "tol": self.tol, "rel_tol": self.rel_tol, "texts": dict(self.texts), "model": self.model,
               "args": dict(self.args() if callable(self.args) else self.args)}
        if not self.shipped:
            return out
        if mode == "hide":
            return {"check": self.name, "rule": self.rule, "live": True}
        from lib.model.store import load

        v = self.computed(load(self.model) if self.model else None)
        return {**out, "values": {"expected": v.expected, "hints": [[k, w] for k, w in v.hints.items()],
                                  "options": list(v.options) if v.options is not None else None,
                                  "fields": dict(v.fields)}}


def site_check(module: str, check: str, *, rule: str, compute: str | None, values: Callable, **kw) -> SiteCheck:
    """Declare the page twin of lib.exercises.<module>.<check> (module: the check module's __name__
    or its last part) and register it."""
    module = module.rsplit(".", 1)[-1]
    if rule not in RULES:
        raise ValueError(f"{module}.{check}: rule {rule!r} is not one of {', '.join(RULES)}")
    kw["texts"] = MappingProxyType(dict(kw.get("texts", {})))
    if not callable(kw.get("args")):
        kw["args"] = MappingProxyType(dict(kw.get("args", {})))
    twin = SiteCheck(module, check, rule, compute, values, **kw)
    if rule == "choice" and not {"right", "wrong"} <= set(twin.texts):
        raise ValueError(f"{twin.name}: a choice declares its right and wrong texts")
    if twin.name in SITE_CHECKS:
        raise ValueError(f"{twin.name} declared twice")
    SITE_CHECKS[twin.name] = twin
    return twin


def registry() -> dict[str, SiteCheck]:
    """Every declared twin: the check modules imported, each declares its own."""
    import lib.exercises as package

    for info in pkgutil.iter_modules(package.__path__):
        if info.name not in ("site", "catalogue", "plan", "writing"):
            importlib.import_module(f"lib.exercises.{info.name}")
    return SITE_CHECKS


def typed_answer(text: str, rule: str):
    """What a reader typed in the page's box, as the library's check receives it: for a number, an int
    or a float where Python reads one, else the text; for a choice, the text without its outer spaces.
    (checks.js reads the box the same way.)"""
    s = text.strip()
    if s == "":
        return ...
    if rule == "choice":
        return s
    for read in (int, float):
        try:
            return read(s)
        except ValueError:
            pass
    return s


def twins_by_label(root: Path | None = None) -> dict[str, SiteCheck]:
    """Each predict or investigate exercise whose check has a twin, by its label."""
    from lib.exercises.catalogue import ROOT, catalogue

    twins = registry()
    return {e.label: twins[f"{e.module}.{e.checks[0]}"] for e in catalogue(root or ROOT)
            if e.kind in ("predict", "investigate") and len(e.checks) == 1 and f"{e.module}.{e.checks[0]}" in twins}


def declarations(root: Path | None = None, mode: str = "fold") -> dict[str, dict]:
    """The page's table, by label (`mode`: "hide" for the class site)."""
    return {label: twin.declaration(mode) for label, twin in twins_by_label(root).items()}


def coverage(root: Path | None = None) -> tuple[int, int, int]:
    """(predict and investigate exercises the page checks by computing, those whose values the default
    site ships, all of them)."""
    from lib.exercises.catalogue import ROOT, catalogue

    total = sum(e.kind in ("predict", "investigate") for e in catalogue(root or ROOT))
    twins = twins_by_label(root).values()
    return sum(not t.shipped for t in twins), sum(t.shipped for t in twins), total


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
