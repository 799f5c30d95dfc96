"""The panel: every lesson about a recipe measured on the shipped training runs of its models, and kept as data.

A claim about the recipe (`registry.EVERY_RUN`) is a statement about what training this recipe does, and
one run, or five, cannot say "every run". Each trainable model has a panel of up to `len(PANEL_SEEDS)` (20)
runs: the pages' run (training seed 0, `data/models/NAME`) and the runs of seeds 1 to 19
(`data/runs/NAME/seed-S`), all written by one command from their seeds (`python -m lib panel --write`,
which trains the runs that are missing, `lib.shipped.retrain`). A model's panel is the runs of it that
ship (`seeds`); while some are still to be trained it is smaller, and every sentence says its size. A
*run* of the panel is one training seed: the runs of that seed of every model a claim reads, so a claim
is measured on the seeds shipped for all of its models.

Every every-run claim is measured on every run of its panel, once, each run in a process of its own
(`lib.claims.runs.measure_runs`), on prompt-set seed `PROMPT_SEED`, and what it measured is kept beside
the runs in `data/runs/panel.json` (`python -m lib panel --write` writes it): every number of every
claim on every run, the role a run lacks where one is absent, and the SHA-256 of each run's weights. A
page prints an every-run claim from the kept numbers (`statement`): "on every one of the 20 runs" only
when it held on all of them, else "on 17 of the 20 runs", then what the other runs do (the claim's
`others`). The build measures the pages' run again and stops the page if it differs from what is kept;
the tests measure a few runs chosen afresh each time and one run they train themselves, and fail if
any number differs from the kept one by more than the tolerances below (`compare`): the test machine
is another x86-64, whose arithmetic may differ from the one that measured the panel in the last bits.
"""
from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from lib.claims import registry
from lib.claims import runs as claim_runs
from lib.data import data_dir
from lib.errors import CourseError, require

PANEL_SEEDS = tuple(range(20))    # the training seeds of a full panel; 0 is the pages' run
PROMPT_SEED = registry.PAGE_SEEDS[0]     # the prompt-set seed every run is measured on (the pages' first)
PANEL_FILE = "panel.json"
# Two measurements of one run agree when every text and whole number is equal and every other number is
# within REL_TOL of the kept one (or ABS_TOL of it, near zero). A run retrained on another x86-64 differs
# in the weights' last bits (1e-6 after the zero-layer model's 800 steps); the numbers the claims read
# move by far less than these.
REL_TOL, ABS_TOL = 1e-3, 1e-4


def path() -> Path:
    return data_dir() / "runs" / PANEL_FILE


def label(seed: int) -> str:
    return f"seed {seed}"


def panel_models() -> list[str]:
    """The trained models the every-run claims read: each ships a panel."""
    return sorted({m for c in registry.claims() if c.scope == registry.EVERY_RUN for m in c.models})


def every_run_ids(chapter: str | None = None) -> list[str]:
    return [c.id for c in registry.claims(chapter) if c.scope == registry.EVERY_RUN]


def run_of(seed: int, models: Iterable[str] | None = None) -> dict[str, str]:
    """The folders of the panel's run of training seed `seed` for `models` ({} for the pages' run: the
    shipped folders are read as they are)."""
    from lib.model.store import RUN_PREFIX, runs_dir  # deferred: the store imports torch

    if seed == PANEL_SEEDS[0]:
        return {}
    return {name: str(runs_dir() / name / f"{RUN_PREFIX}{seed}") for name in (models or panel_models())}


def folder_of(name: str, seed: int) -> Path:
    from lib.model.store import model_folder  # deferred: the store imports torch

    return Path(run_of(seed, [name]).get(name) or model_folder(name))


def shipped(name: str, seed: int) -> bool:
    from lib.model.store import META, WEIGHTS  # deferred: the store imports torch

    folder = folder_of(name, seed)
    return (folder / META).is_file() and (folder / WEIGHTS).is_file()


def seeds(models: Iterable[str] | None = None) -> tuple[int, ...]:
    """The panel's training seeds whose runs ship for every one of `models` (all the panel's models when
    None): the runs a claim reading them is measured on."""
    models = list(models) if models is not None else panel_models()
    return tuple(s for s in PANEL_SEEDS if all(shipped(m, s) for m in models))


def claim_seeds(id: str) -> tuple[int, ...]:
    return seeds(registry.get(id).models)


def missing() -> dict[str, list[int]]:
    """{model: the seeds of a full panel not shipped yet} (empty lists: complete)."""
    return {m: [s for s in PANEL_SEEDS if not shipped(m, s)] for m in panel_models()}


# ----------------------------------------------------------------------------- writing the panel
def train_missing(models: Iterable[str] | None = None, seeds: Iterable[int] = PANEL_SEEDS, retrain: bool = False,
                  progress: bool = False, say=print) -> list[tuple[str, int]]:
    """Train every run of the panel that is not shipped yet (all of them with `retrain`), from its seed
    alone; the pages' run keeps its checkpoints over training, the others only their weights."""
    from lib.model.store import META  # deferred: the store imports torch
    from lib.shipped.retrain import train_preset  # deferred: training imports torch

    done = []
    for name in (models or panel_models()):
        for seed in seeds:
            folder = folder_of(name, seed)
            if (folder / META).is_file() and not retrain:
                continue
            meta = train_preset(name, seed=seed, replace_shipped=True, progress=progress,
                                checkpoints=seed == PANEL_SEEDS[0])
            say(f"trained {name} seed {seed}: {meta.get('steps_trained')} steps, {meta['train_seconds']:.0f} s")
            done.append((name, seed))
    return done


def weights(by_model: dict[str, Iterable[int]] | None = None) -> dict[str, dict[str, str]]:
    """{model: {seed: the SHA-256 of that run's weights}} over the runs `by_model` ({model: seeds}; by
    default every shipped run of the panel)."""
    by_model = by_model if by_model is not None else {m: seeds([m]) for m in panel_models()}
    out = {}
    for name, model_seeds in by_model.items():
        out[name] = {}
        for seed in model_seeds:
            meta = folder_of(name, seed) / "meta.json"
            require(meta.is_file(), f"the panel's run {label(seed)} of {name} is missing ({meta.parent}): "
                                    "`python -m lib panel --write` trains it")
            out[name][str(seed)] = json.loads(meta.read_text())["sha256"]
    return out


def measure(seeds_: Iterable[int] | None = None, ids: Iterable[str] | None = None, jobs: int = 2,
            runs: dict[str, dict[str, str]] | None = None) -> dict[str, dict[str, dict]]:
    """{claim id: {run label: {"numbers": ...}}}: every every-run claim of `ids` measured on the shipped runs
    of the panel (those of `seeds_` only, if given; each claim on the seeds shipped for all its models), or
    on `runs`, {label: {model: folder}}; each run in a process of its own. A claim whose measurement fails
    for any reason but an absent role (`registry.Absent`) raises here: a claim never crashes on a run."""
    ids = list(ids) if ids is not None else every_run_ids()
    if runs is not None:
        groups = [(ids, runs)]
    else:
        wanted = set(seeds_) if seeds_ is not None else set(PANEL_SEEDS)
        by_models: dict[tuple, list[str]] = {}
        for id in ids:
            by_models.setdefault(tuple(registry.get(id).models), []).append(id)
        groups = [(group, {label(s): run_of(s, models) for s in seeds(models) if s in wanted})
                  for models, group in by_models.items()]
    out: dict[str, dict[str, dict]] = {}
    for group, group_runs in groups:
        got = claim_runs.measure_runs(group_runs, group, [PROMPT_SEED], jobs=jobs) if group_runs else {}
        for id in group:
            seed_key = str(PROMPT_SEED if registry.get(id).seeded else 0)
            out[id] = {}
            for run in group_runs:
                entry = got[run][id][seed_key]
                if "error" in entry:
                    raise CourseError(f"claim {id!r} crashed on {run}: {entry['error']}")
                out[id][run] = {"numbers": entry["numbers"]}
    return out


def write(measured: dict[str, dict[str, dict]]) -> Path:
    """Keep the panel's measurements beside the runs (`path()`), with the seeds shipped for each model."""
    by_model = {m: list(seeds([m])) for m in panel_models()}
    kept = {"about": "Every claim about a recipe (scope 'every run') measured on every shipped run of the panel of "
                     "training runs, on prompt-set seed " f"{PROMPT_SEED}; written by `python -m lib panel --write` "
                     "(lib.claims.panel). A run is a training seed; 'seeds' are the runs shipped for each model; "
                     "'numbers' are what the claim's measurement returned there ('absent': the role it looks for "
                     "is not on that run, and why).",
            "prompt_seed": PROMPT_SEED, "seeds": by_model, "weights": weights(by_model),
            "claims": {id: {str(int(run.split()[-1])): entry["numbers"] for run, entry in by_run.items()}
                       for id, by_run in measured.items()}}
    path().write_text(json.dumps(kept, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return path()


_KEPT: dict | None = None


def read() -> dict:
    """The kept panel, checked: it covers every every-run claim on every seed of the panel, and each run's
    weights are the ones it measured."""
    global _KEPT
    if _KEPT is None:
        f = path()
        require(f.is_file(), f"{f} is missing: `python -m lib panel --write` measures the panel")
        _KEPT = json.loads(f.read_text(encoding="utf-8"))
    return _KEPT


def stale() -> list[str]:
    """What in the kept panel no longer matches the runs or the claims (empty: nothing)."""
    kept = read()
    out = []
    now = weights()
    for name, by_seed in now.items():
        if sorted(map(int, by_seed)) != sorted(kept["seeds"].get(name, [])):
            out.append(f"{name}: the runs shipped (seeds {registry.listed(sorted(map(int, by_seed)))}) are not "
                       f"the ones the panel measured")
        for seed, sha in by_seed.items():
            if kept["weights"].get(name, {}).get(seed) not in (None, sha):
                out.append(f"{name} {label(int(seed))}: the weights are not the ones the panel measured")
    for id in every_run_ids():
        if id not in kept["claims"]:
            out.append(f"{id}: not measured on the panel")
            continue
        on = set(kept["claims"][id])
        want = {str(s) for s in claim_seeds(id)}
        if on != want:
            out.append(f"{id}: measured on seeds {registry.listed(sorted(map(int, on)))}, its runs ship for seeds "
                       f"{registry.listed(sorted(map(int, want)))}")
    for id in kept["claims"]:
        if id not in registry.REGISTRY or registry.get(id).scope != registry.EVERY_RUN:
            out.append(f"{id}: kept, but no every-run claim of that id is registered")
    return out


# ----------------------------------------------------------------------------- reading it
@dataclass(frozen=True)
class Run:
    seed: int
    numbers: dict
    failing: list = field(default_factory=list)     # (phrase, why) the numbers do not bear out

    @property
    def label(self) -> str:
        return label(self.seed)

    @property
    def holds(self) -> bool:
        return not self.failing

    @property
    def absent(self) -> str | None:
        return self.numbers.get(registry.ABSENT)


def runs(id: str) -> list[Run]:
    """The claim on every run of the panel, from the kept numbers, in the order of the training seeds;
    whether it holds is decided now, from its words."""
    c = registry.get(id)
    require(c.scope == registry.EVERY_RUN, f"claim {id!r} is about {c.scope}, not every run: the panel does not hold it")
    kept = read()
    require(id in kept["claims"], f"claim {id!r} is not in {path()}: `python -m lib panel --write` measures it")
    return [Run(int(s), n, c.failing(n)) for s, n in sorted(kept["claims"][id].items(), key=lambda kv: int(kv[0]))]


class RunCount:
    """On how many runs a claim holds, as its statement says it: "every one of the 20 runs" or "17 of
    the 20 runs"."""

    def __init__(self, k: int, n: int):
        self.k, self.n = k, n

    def __format__(self, spec: str) -> str:
        return f"every one of the {self.n} runs" if self.k == self.n else f"{self.k} of the {self.n} runs"


def labels(seeds: Iterable[int]) -> str:
    seeds = list(seeds)
    return ("seed " if len(seeds) == 1 else "seeds ") + registry.listed(seeds)


def _numbers(rows: list[Run]) -> dict:
    """The numbers of `rows` over those runs (`registry.spans`), lists and the like left out."""
    plain = [{k: v for k, v in r.numbers.items() if not isinstance(v, (list, dict))} for r in rows]
    return registry.spans(plain)


def page_numbers(id: str) -> tuple[dict, list[Run], list[Run]]:
    """(the numbers the statement is filled with: each over the runs where the claim holds, with `runs`
    the count; the runs where it holds; the runs where it does not)."""
    rows = runs(id)
    ok = [r for r in rows if r.holds]
    bad = [r for r in rows if not r.holds]
    require(ok, f"claim {id!r} holds on no run of the panel: it is no lesson about the recipe; restate it")
    numbers_ = _numbers(ok)
    numbers_["runs"] = RunCount(len(ok), len(rows))
    numbers_["n_runs"] = registry.Span(len(rows), len(rows))
    return numbers_, ok, bad


# Up to this many runs on which a claim does not hold are each described with their own numbers.
OTHERS_ONE_BY_ONE = 4


def others_sentence(id: str, bad: list[Run]) -> str:
    """What the runs on which the claim does not hold do instead: the claim's `others`, filled with the
    numbers of those runs, and, for a run that lacks the role the claim looks for, why."""
    if not bad:
        return ""
    c = registry.get(id)
    absent = [r for r in bad if r.absent]
    measured = [r for r in bad if not r.absent]
    parts = []
    if measured:
        require(c.others, f"claim {id!r} fails on {labels(r.seed for r in measured)} and says nothing of them "
                          "(its `others`): say what those runs do")
        # A few runs each get their own numbers (so that a run's numbers stay together); more share ranges.
        groups = [[r] for r in measured] if len(measured) <= OTHERS_ONE_BY_ONE else [measured]
        for group in groups:
            text = registry.fill_template(c.others, {**_numbers(group),
                                                     "n_others": registry.Span(len(group), len(group))})
            parts.append(f"on {labels(r.seed for r in group)}, {text}")
    groups: dict[str, list[int]] = {}
    for r in absent:
        groups.setdefault(r.absent, []).append(r.seed)
    parts += [f"on {labels(seeds)}, {why}" for why, seeds in groups.items()]
    return "; ".join(parts)


def statement(id: str) -> str:
    """The every-run claim as its page prints it: its statement over the runs where it holds, and then
    what the other runs do."""
    numbers_, ok, bad = page_numbers(id)
    text = registry.fill(id, numbers_)
    if bad:
        text += ". " + _capital(others_sentence(id, bad))
    return text


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def count(id: str) -> tuple[int, int]:
    rows = runs(id)
    return sum(r.holds for r in rows), len(rows)


def count_where(id: str, test) -> RunCount:
    """On how many of the panel's runs of claim `id` its kept numbers pass `test` (a run that lacks the role
    the claim looks for does not), out of all of them: a count of one part of a claim, printed as a claim's."""
    rows = runs(id)
    return RunCount(sum(1 for r in rows if not r.absent and test(r.numbers)), len(rows))


def per_run(id: str) -> dict[int, dict]:
    """{training seed: the claim's numbers on that run}, from the kept panel."""
    return {r.seed: r.numbers for r in runs(id)}


# ----------------------------------------------------------------------------- comparing
def differences(kept: dict, fresh: dict, where: str = "") -> list[str]:
    """How `fresh` numbers differ from `kept` ones beyond the tolerances (empty: they agree)."""
    out = []
    for key in sorted(set(kept) | set(fresh)):
        if key not in kept or key not in fresh:
            out.append(f"{where}{key}: {'only measured now' if key not in kept else 'not measured now'}")
            continue
        a, b = kept[key], fresh[key]
        if not _agree(a, b):
            out.append(f"{where}{key}: kept {a!r}, measured {b!r}")
    return out


def _agree(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b))
    real = lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool)  # noqa: E731
    if real(a) and real(b):
        if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
            return a == b
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return a == b


def check_runs(seeds: Iterable[int], ids: Iterable[str] | None = None, jobs: int = 2,
               runs_: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Measure the claims again on the panel's runs of `seeds` (or on `runs_`, {label "seed S": {model:
    folder}}, a run trained again elsewhere) and list every number that differs from the kept one."""
    ids = list(ids) if ids is not None else every_run_ids()
    kept = read()["claims"]
    fresh = measure(seeds, ids, jobs, runs=runs_)
    out = []
    for id in ids:
        for run, entry in fresh[id].items():
            seed = run.split()[-1]
            out += differences(kept[id][seed], entry["numbers"], f"{id} on {run}: ")
    return out
