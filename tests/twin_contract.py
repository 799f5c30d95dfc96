"""The twin contract's machinery: the site's files written once, the page's twins run in one Node process,
and what the library says about the same inputs.

A page twin is a computation of the library written again in JavaScript for the website. The contract
(tests/explorers/test_twins.py) holds every one to the library in the fast tier, generated from the
registries, with no list kept here:
- each explorer's view (`lib.explorers.registry`: every registered explorer in its examples, at its
  defaults and at random settings, good and bad) against its `compute`;
- each check's computation and rules (`lib.exercises.site.registry()`: every check that declares a page
  computation) against its `values` and the check's verdicts and sentences on typed answers;
- each shared module's twin registered with `shared_twin` in a `*_twins.py` module anywhere under tests/
  (the read-out, the forward pass and the seeded roll in tests/explorers/page_twins.py; a unit's own
  helpers beside its tests) against the library function it twins.

The page's files are written as the site's build writes them (`write_site`: lib.explorers.web.install,
lib.explorers.page.export_site, lib.exercises.site.install) into one folder per test run (the `twin_site`
fixture of tests/explorers/conftest.py), and Node imports them from there as ES modules
(tests/twin_contract.mjs): a view gets the context page.js gives it (views.js `viewContext`: the model its
declaration names, loaded as the page loads it, and the one point-set loader), a check is computed and
judged by checks.js, and the page's fetches of the site's files (weights, point sets, stored runs) are
served from that folder.

`mutated_site` copies that folder with an edit to its modules (`scaled_results`, `scaled_units`: a
function's or every unit twin's numbers times 1.01), so that a test can show the contract failing on a
twin one per cent off.
"""
from __future__ import annotations

import importlib
import json
import math
import random
import re
import resource
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import lib
from explorer_cases import TOL, differences, opening_only, random_values
from lib.errors import CourseError

NODE = shutil.which("node")
HARNESS = Path(__file__).with_suffix(".mjs")
TESTS = Path(__file__).resolve().parent
# Random settings per explorer example beside its defaults (the browser tier draws 25).
SETTINGS = 8
CHANGE = 1.01       # a mutation's factor: one per cent


# ----------------------------------------------------------------------------- the site's files

def write_site(folder: Path) -> Path:
    """The site's explorers folder, written by the functions the build uses (`_ext/course_explorers.py`): the
    page's modules with the generated ones (units.js from every unit's page.js), the shipped models, the
    point sets, every explorer's `site_files` (the real models' stored runs among them: SmolLM2 run on its
    menu, once per checkout, kept in _build/.real-model as the book's build keeps it), and the exercise
    checks' module (the class site's: no value shipped, every check computed by its twin)."""
    from lib.exercises import site
    from lib.explorers import web
    from lib.explorers.page import export_site

    web.install(folder)
    export_site(folder)
    site.install(folder, "hide")
    return folder


def mutated_site(site: Path, into: Path, edits: dict[str, Callable[[str], str]]) -> Path:
    """A copy of the site folder's modules with `edits` ({module's path in the folder: its text -> the mutated
    text}); every other file, and every folder without a module (the weights, the stored runs), linked."""
    modules = {p.relative_to(site).as_posix() for p in site.rglob("*.js")}
    missing = set(edits) - modules
    assert not missing, f"no such module in the site: {sorted(missing)}"

    def copy(folder: Path, target: Path) -> None:
        target.mkdir(parents=True, exist_ok=True)
        for path in sorted(folder.iterdir()):
            name = path.relative_to(site).as_posix()
            if path.is_dir() and any(m.startswith(name + "/") for m in modules):
                copy(path, target / path.name)
            elif name in modules:
                text = path.read_text()
                (target / path.name).write_text(edits[name](text) if name in edits else text)
            else:
                (target / path.name).symlink_to(path)
    copy(site, into)
    return into


# The numbers of a value times CHANGE (arrays of floats, lists and plain objects followed, functions it returns
# wrapped too; BigInts and whole-number typed arrays left alone).
_SCALE = """
const __scaled = (x) => {
  if (typeof x === "number") return x * %(change)s;
  if (x instanceof Float64Array || x instanceof Float32Array) return x.map((v) => v * %(change)s);
  if (Array.isArray(x)) return x.map(__scaled);
  if (typeof x === "function") return __scaledFunction(x);
  if (x instanceof Promise) return x.then(__scaled);
  if (x && typeof x === "object" && Object.getPrototypeOf(x) === Object.prototype) {
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, k === "decide" ? __decidesOnScaled(v) : __scaled(v)]));
  }
  return x;
};
const __scaledFunction = (f) => function (...args) { return __scaled(f.apply(this, args)); };
// An open check decides by itself: the answer it is given, times CHANGE (as if it held numbers one per cent off).
const __scaledAnswer = (a) => (a.kind === "tuple" ? { ...a, value: a.value.map(__scaledAnswer) }
  : a.kind === "int" || a.kind === "float" ? { kind: "float", value: __scaled(Number(a.value)) } : a);
const __decidesOnScaled = (decide) => (a) => decide(__scaledAnswer(a));
""" % {"change": CHANGE}


def scaled_results(*names: str) -> Callable[[str], str]:
    """An edit of a core module: the exported functions `names` (a class's name: each of its methods) return
    their numbers times CHANGE, to callers inside the module and outside alike."""
    def edit(text: str) -> str:
        lines = [_SCALE]
        for name in names:
            if re.search(rf"^export class {name}\b", text, re.M):
                lines.append(f"for (const m of Object.getOwnPropertyNames({name}.prototype)) "
                             f"if (m !== 'constructor' && typeof Object.getOwnPropertyDescriptor({name}.prototype, m).value"
                             f" === 'function') {name}.prototype[m] = __scaledFunction({name}.prototype[m]);")
            else:
                assert re.search(rf"^export (async )?function\*? ?{name}\b", text, re.M), f"no exported function {name}"
                lines.append(f"{name} = __scaledFunction({name});")
        return text + "\n" + "\n".join(lines) + "\n"
    return edit


def exported_functions(text: str) -> list[str]:
    """The functions and classes a core module exports by declaration, in order."""
    return re.findall(r"^export (?:async )?(?:function\*? ?|class )(\w+)", text, re.M)


def scaled_units(text: str) -> str:
    """An edit of units.js: every unit's views and check computations give their numbers times CHANGE (an
    open check decides on the reader's answer times CHANGE)."""
    marker = 'return { VIEWS: typeof VIEWS === "undefined" ? undefined : VIEWS, COMPUTE: typeof COMPUTE === "undefined" ? undefined : COMPUTE'
    wrap = ('for (const table of [typeof VIEWS === "undefined" ? {} : VIEWS, typeof COMPUTE === "undefined" ? {} : COMPUTE]) '
            'for (const k of Object.keys(table)) table[k] = __scaledFunction(table[k]);\n')
    count = text.count(marker)
    assert count > 10, "units.js no longer returns each unit's tables as tests/twin_contract.py expects"
    return _SCALE + text.replace(marker, wrap + marker)


# ----------------------------------------------------------------------------- running Node

def _plain(x):
    """JSON with the numbers a strict parser refuses (nan, inf) written as {"__float__": "NaN"}."""
    if isinstance(x, float) and not math.isfinite(x):
        return {"__float__": "NaN" if math.isnan(x) else "Infinity" if x > 0 else "-Infinity"}
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


NODE_CPU = [0.0]       # CPU-seconds spent in Node by this process (the contract's cost, reported by its tests)


def run_node(sites: list[Path], jobs: list[dict], calls: dict[str, str] | None = None) -> list[dict]:
    """Every job in one Node process (tests/twin_contract.mjs): [{result} | {error} | {crash}, ...]. A view job
    carries its explorer's declaration (`spec`), sent once for all the jobs that share it."""
    specs, index, sent = [], {}, []
    for job in jobs:
        if job.get("kind") == "view":
            key = json.dumps(job["spec"], sort_keys=True)
            if key not in index:
                index[key] = len(specs)
                specs.append(job["spec"])
            job = dict(job, spec=index[key])
        sent.append(job)
    payload = json.dumps({"sites": [str(s) for s in sites], "specs": _plain(specs), "calls": calls or {},
                          "models": page_models(), "jobs": _plain(sent)}, allow_nan=False)
    before = _children_cpu()
    r = subprocess.run([NODE, str(HARNESS)], input=payload, capture_output=True, text=True, timeout=900,
                       cwd=TESTS)
    NODE_CPU[0] += _children_cpu() - before
    assert r.returncode == 0, f"Node failed:\n{r.stderr[-3000:]}"
    return json.loads(r.stdout, object_hook=lambda d: float(d["__float__"]) if set(d) == {"__float__"} else d)


# ----------------------------------------------------------------------------- what the library says

@dataclass
class Case:
    """One input to a twin and what the library makes of it: `job` for Node, `expected` the library's
    ({"result": ...} or {"error": its sentence}), `compare(expected, got) -> [differences]`."""
    twin: str                   # the twin it holds: "view NAME", "check NAME" or "shared NAME"
    job: dict
    expected: Any
    compare: Callable[[Any, Any], list[str]]
    about: str = ""
    defaults: bool = False      # an explorer at its defaults
    tol: float = TOL            # how close its numbers must be (relative to the larger, or to `floor`)
    floor: float = 1.0

    def changed(self, before: dict, after: dict) -> bool:
        """Whether the page's answer `after` differs from `before` as the contract would see it: another
        sentence or outcome, or a number beyond the case's tolerance (a mutation test's measure of whether
        a mutation reached this case, rounding's last digits aside)."""
        if "result" not in before or "result" not in after:
            return json.dumps(before, sort_keys=True) != json.dumps(after, sort_keys=True)
        return bool(differences(before["result"], after["result"], tol=self.tol, floor=self.floor))


def _outcome(compute) -> dict:
    try:
        return {"result": json.loads(json.dumps(compute()))}
    except CourseError as e:
        return {"error": str(e)}


def _same_outcome(tol: float):
    def compare(expected: dict, got: dict) -> list[str]:
        if "crash" in got:
            return [f"the page crashed: {got['crash'][:400]}"]
        if "error" in expected or "error" in got:
            return [] if expected.get("error") == got.get("error") else [
                f"library {expected.get('error')!r}, page {got.get('error')!r}"]
        return differences(expected["result"], got["result"], tol=tol)
    return compare


def view_cases(settings: int = SETTINGS) -> list[Case]:
    """Every registered explorer in each of its examples: its defaults and `settings` random settings (the
    same stream of settings for an explorer whatever others there are), as Node jobs with the library's view.
    The page gets the explorer's declaration as the build writes it (its opening view drawn by the library)
    and the real model its args name (`args.real`) where a page model is registered for it (`page_model`);
    without one, the page is held as a reader meets it before loading that model: an explorer that shows only
    its opening picture then (explorer_cases.opening_only) at its opening values, the others on their menu."""
    from lib.explorers.definition import every_example

    cases, made = [], every_example()
    for n, ex in enumerate(made):
        k = sum(e.view == ex.view for e in made[:n])
        rng = random.Random(f"twins {ex.view} {k}")
        lm = lib.load(ex.model) if ex.model else None
        tol = ex.args.get("tolerance", TOL)
        opening = _outcome(lambda: ex.compute(ex.defaults()))
        spec = dict(ex.spec(), default=opening.get("result"))
        real = (ex.args.get("real") or {}).get("model")
        held = settings if not real or real in page_models() or not opening_only(ex) else 0
        for i in range(held + 1):
            values = ex.defaults() if i == 0 else random_values(ex, rng, lm)
            cases.append(Case(f"view {ex.view}", {"kind": "view", "spec": spec, "values": values},
                              opening if i == 0 else _outcome(lambda: ex.compute(values)), _same_outcome(tol),
                              f"example {k}, {'defaults' if i == 0 else values}", defaults=i == 0, tol=tol))
    return cases


# A check's values are few and each is read (a probability of 2e-05 is printed in a sentence): they are held
# relative to their size however small, to 1e-5 (the page and the library differ by 1e-6 at most, measured
# over every check: the page computes in doubles, the library in float32).
VALUES_FLOOR = 1e-12


def _values_differ(expected, got: dict | None, tol: float = TOL) -> list[str]:
    """The page's values of a check ({expected, hints: [[key, value], ...], options, fields}) against the library's."""
    if got is None:
        return ["the page decides by itself, the library gives values"]
    mine = {"expected": expected.expected, "hints": [[k, v] for k, v in expected.hints.items()],
            "options": list(expected.options) if expected.options is not None else None, "fields": dict(expected.fields)}
    theirs = {"expected": got.get("expected"), "hints": got.get("hints") or [], "options": got.get("options"),
              "fields": got.get("fields") or {}}
    return differences(json.loads(json.dumps(mine)), theirs, "values", tol=tol, floor=VALUES_FLOOR)


def check_cases() -> list[Case]:
    """Every check that declares a page computation: its values (a rule's check) and the verdict and sentence
    for each text a reader might type (answer_cases.answers), as Node jobs with the library's."""
    from answer_cases import answers, library_says
    from lib.exercises.site import registry

    cases = []
    for twin in registry().values():
        if twin.compute is None:           # the page reads the library's values, shipped: nothing to hold
            continue
        if twin.own and OWN_TEXT_MODEL not in page_models():
            continue                       # the learner's text, run by the real model in the page: not_held()
        lms = twin.load_models()
        values = twin.computed(*lms)
        texts = answers(twin, values)
        said = [list(library_says(twin, t, lms)) for t in texts]

        def compare(expected, got, twin=twin, texts=texts):
            if "result" not in got:
                return [f"the page's computation failed: {got}"]
            found = [] if twin.rule == "open" else _values_differ(expected["values"], got["result"]["values"])
            for text, want, page in zip(texts, expected["said"], got["result"]["verdicts"]):
                if list(page) != want:
                    found.append(f"typed {text!r}: library {want}, page {page}")
            return found

        job = {"kind": "check", "decl": twin.declaration("hide"), "texts": texts}
        if twin.own:
            job.update(real=OWN_TEXT_MODEL, text=twin.own_example)
        cases.append(Case(f"check {twin.compute}", job, {"values": values, "said": said}, compare, twin.name,
                          floor=VALUES_FLOOR))
    return cases


def not_held() -> list[str]:
    """The checks the contract cannot run yet: own-text checks (the learner's text, run by the real model the
    reader loads), while no page model is registered for it."""
    from lib.exercises.site import registry

    if OWN_TEXT_MODEL in page_models():
        return []
    return sorted(t.name for t in registry().values() if t.compute and t.own)


# ----------------------------------------------------------------------------- shared modules' twins

@dataclass(frozen=True)
class SharedTwin:
    """A twin in a core module (or a unit's helper) that no view or check computation holds alone: `js` is
    the page's side (an async function of (site, case): site has the folder's modules, `views`, `readout`,
    `model`, `twins`, `checks`, `render`, any other by `site.import("name.js")`, and `site.loadModel(name)`),
    `cases()` the library's side: [(case, expected outcome)], compared by `compare` (default: to TOL, the
    same sentences). `holds`: the core modules it answers for (their file names in lib/explorers/js); the
    contract's mutation test changes each function they export by one per cent and expects the contract to see it."""
    name: str
    js: str
    cases: Callable[[], list[tuple[Any, dict]]]
    compare: Callable[[Any, Any], list[str]]
    holds: tuple[str, ...]
    tol: float = TOL


SHARED: dict[str, SharedTwin] = {}


def shared_twin(name: str, js: str, *, holds: tuple[str, ...] = (), tol: float = TOL,
                compare: Callable[[Any, Any], list[str]] | None = None):
    """Register the decorated function (-> [(case, expected outcome)], the outcome from `outcome(...)`) as the
    library's side of the shared twin `name`."""
    def register(cases):
        if name in SHARED and SHARED[name].cases.__qualname__ != cases.__qualname__:
            raise ValueError(f"shared twin {name!r} registered twice")
        SHARED[name] = SharedTwin(name, js, cases, compare or _same_outcome(tol), tuple(holds), tol)
        return cases
    return register


def outcome(compute: Callable[[], Any]) -> dict:
    """What the library does with one case: {"result": its value as JSON}, or {"error": its sentence}."""
    return _outcome(compute)


# The real models the page loads when a reader asks (page.js's `context.real`), as Node runs them: name -> JS, an
# async function of (site) returning what page.js's liveModel gives a view, {info, run(op, args, onPartial)}.
# An explorer whose args name one (`args.real.model`, lib.explorers.smollm2.live_args) is held on any settings
# once it is registered here (with `page_model`, in a *_twins.py module), and an own-text check with it.
PAGE_MODELS: dict[str, str] = {}
OWN_TEXT_MODEL = "smollm2"      # the model an own-text check runs on the learner's text (checks.js computeOwn)


def page_model(name: str, js: str) -> None:
    """Register how Node runs the real model `name` for the page's twins (see PAGE_MODELS)."""
    PAGE_MODELS[name] = js


def page_models() -> dict[str, str]:
    registrations()
    return PAGE_MODELS


def registrations() -> dict[str, SharedTwin]:
    """Every shared twin: each `*_twins.py` module under tests/ imported (each registers its own)."""
    for path in sorted(TESTS.rglob("*_twins.py")):
        importlib.import_module(".".join(("tests",) + path.relative_to(TESTS).with_suffix("").parts))
    return SHARED


def shared_cases() -> list[Case]:
    cases = []
    for twin in registrations().values():
        for case, expected in twin.cases():
            cases.append(Case(f"shared {twin.name}", {"kind": "call", "call": twin.name, "case": case}, expected,
                              twin.compare, json.dumps(case)[:200], tol=twin.tol))
    return cases


def calls() -> dict[str, str]:
    return {name: twin.js for name, twin in registrations().items()}


# ----------------------------------------------------------------------------- holding the page to the library

def hold(cases: list[Case], got: list[dict]) -> dict[str, list[str]]:
    """{twin: [where its page and the library disagree]} over `cases` and Node's answers."""
    found: dict[str, list[str]] = {}
    for case, g in zip(cases, got):
        problems = case.compare(case.expected, g)
        if problems:
            found.setdefault(case.twin, []).extend(f"{case.about}: {p}" for p in problems[:3])
    return found


def run_cases(site: Path, cases: list[Case]) -> list[dict]:
    return run_node([site], [dict(c.job, site=0) for c in cases], calls())


def cpu_seconds() -> float:
    """This process's CPU-seconds so far, its children's (Node) included."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime + _children_cpu()

