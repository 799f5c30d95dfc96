"""`python -m lib claims` and `python -m lib panel`: the claims measured again, on seeds, runs and the panel.

- `claims [--seeds S,...] [--chapter C] [--json]`: every claim on the shipped run, on each seed. A this-run
  or no-run claim must hold on every seed; an every-run claim's statement is the panel's, and on the
  shipped run it must hold on every seed where the panel says it holds on the pages' run.
- `claims --runs DIR,... [--seeds S,...]`: the claims about the recipe that read the models those folders
  replace, on each folder (a run trained elsewhere), with why a claim does not hold where it does not. A
  claim the panel states "on every run" that fails on one of them contradicts its page: exit status 1.
- `panel [--chapter C] [--json]`: the kept panel (`lib.claims.panel`): on how many runs each claim holds,
  and why not on the others. `panel --write`: train the runs of the panel that are missing and measure
  every claim about a recipe on every run (the one command that writes `data/runs`). `panel --check`:
  measure runs of the panel chosen at random again and compare them with what is kept.
"""
from __future__ import annotations

import json
import random

from lib.claims import panel, registry
from lib.claims import runs as claim_runs
from lib.errors import CourseError, require


def _why(failing) -> list[str]:
    return [f"{phrase!r}: {why}" if phrase else why for phrase, why in failing]


def _chapter(args) -> str | None:
    chapter = args.chapter
    if chapter is None:
        return None
    chapter = chapter.strip().removesuffix(".md").rsplit("/", 1)[-1]
    if chapter not in registry.chapters():
        raise CourseError(f"no claims for chapter {args.chapter!r}; chapters with claims: {', '.join(registry.chapters())}")
    return chapter


def _panel_says(id: str) -> dict:
    """What the kept panel says of an every-run claim: on how many runs it holds, and on the pages' run."""
    rows = panel.runs(id)
    k = sum(r.holds for r in rows)
    return {"holds_on": k, "runs": len(rows), "pages_run": rows[0].holds, "every": k == len(rows)}


def cmd_claims(args, seeds: list[int]) -> int:
    chapter = _chapter(args)
    if args.runs is not None:
        return _on_runs(args, seeds, chapter)
    rows, ok = [], True
    for c in registry.claims(chapter):
        verdicts = {str(s): registry.holds(c.id, s) for s in (seeds if c.seeded else [0])}
        reasons = {s: _why(registry.why_not(c.id, int(s))) for s, v in verdicts.items() if not v}
        # a claim measured once (not seeded) answers for every seed asked, with its one measurement's reasons
        measured_on = {str(s): str(s if c.seeded else 0) for s in seeds}
        why = {s: reasons[m] for s, m in measured_on.items() if m in reasons}
        row = {"id": c.id, "chapter": c.chapter, "scope": c.scope, "model": ",".join(c.models) or None,
               "holds": {s: verdicts[m] for s, m in measured_on.items()}, "why": why}
        if c.scope == registry.EVERY_RUN:
            says = _panel_says(c.id)
            row["statement"] = panel.statement(c.id)
            row["panel"] = says
            # On the shipped run the claim must repeat, on any prompts, what the panel found there.
            row["agrees"] = all(v == says["pages_run"] for v in verdicts.values()) or not says["pages_run"]
        else:
            row["statement"] = registry.statement(c.id, seeds)
            row["agrees"] = all(verdicts.values())
        ok &= row["agrees"]
        rows.append(row)
        if not args.json:
            marks = "  ".join(f"{s}:{'holds' if v else 'FAILS'}" for s, v in row["holds"].items())
            extra = f"; panel: {row['panel']['holds_on']} of {row['panel']['runs']} runs" if "panel" in row else ""
            print(f"{c.id}  ({c.scope}{extra})  [{marks}]\n    {row['statement']}")
            for s, reasons in why.items():
                for reason in reasons:
                    print(f"    seed {s}: {reason}")
    if args.json:
        print(json.dumps({"seeds": seeds, "claims": rows}))
    else:
        failing = sum(not r["agrees"] for r in rows)
        print(f"{len(rows) - failing} of {len(rows)} claims hold as their pages state them on every seed "
              f"({', '.join(map(str, seeds))})")
    return 0 if ok else 1


def _on_runs(args, seeds, chapter) -> int:
    """`claims --runs DIR,...`: the every-run claims that read the models the folders replace, on each."""
    folders = [f.strip() for f in args.runs.split(",") if f.strip()]
    require(folders, "--runs must name at least one folder (folders separated by commas)")
    labelled = {}
    for folder in folders:
        name, path = claim_runs.read_run_folder(folder)
        labelled[folder] = {name: str(path)}
    every = panel.every_run_ids(chapter)
    concerned = {m for i in every for m in registry.get(i).models}
    unused = [f for f, run in labelled.items() if not set(run) & concerned]
    if unused:
        raise CourseError(f"--runs {unused[0]} is a model {next(iter(labelled[unused[0]]))!r} that no claim "
                          f"about the recipe reads; the claims read runs of: {', '.join(sorted(concerned)) or 'none'}")
    # Each claim on the runs of the models it reads (a folder replaces one model; a claim that reads two takes
    # the folder in place of the one it replaces and the pages' run of the other). Nothing else is measured.
    wanted = {label: [i for i in every if set(run) & set(registry.get(i).models)] for label, run in labelled.items()}
    measured = claim_runs.measure_runs({label: labelled[label] for label in wanted if wanted[label]},
                                       sorted({i for ids in wanted.values() for i in ids}), seeds)
    rows, ok = [], True
    for id in every:
        c = registry.get(id)
        on = [label for label in labelled if id in wanted[label]]
        if not on:
            continue
        says = _panel_says(id)
        row = {"id": id, "chapter": c.chapter, "scope": c.scope, "model": ",".join(c.models),
               "panel": says, "holds": {}, "why": {}, "errors": {}, "numbers": {}}
        for label in on:
            by_seed = measured[label][id]
            row["holds"][label] = all(v["holds"] for v in by_seed.values())
            row["numbers"][label] = {s: v["numbers"] for s, v in by_seed.items()}
            reasons = []
            for s, v in by_seed.items():
                if "error" in v:
                    row["errors"][label] = v["error"]
                elif not v["holds"]:
                    reasons += [f"seed {s}: {r}" for r in _why(c.failing(v["numbers"]))]
            if reasons:
                row["why"][label] = reasons
        # A run on which a claim stated "on every run" fails contradicts the page; a claim stated "on k of n"
        # runs may fail on a run trained elsewhere as it does on some of the panel's.
        row["contradicts"] = says["every"] and not all(row["holds"].values())
        ok &= not row["contradicts"] and not row["errors"]
        rows.append(row)
        if not args.json:
            marks = "  ".join(f"{r}:{'holds' if v else 'FAILS'}" for r, v in row["holds"].items())
            flag = "  CONTRADICTS 'on every run'" if row["contradicts"] else ""
            print(f"{id}  (panel: {says['holds_on']} of {says['runs']} runs)  [{marks}]{flag}")
            for label, reasons in row["why"].items():
                for reason in reasons:
                    print(f"    {label}: {reason}")
            for label, error in row["errors"].items():
                print(f"    {label}: ERROR {error}")
    if args.json:
        print(json.dumps({"seeds": seeds, "runs": list(labelled), "claims": rows}))
    else:
        bad = [r["id"] for r in rows if r["contradicts"] or r["errors"]]
        print(f"{len(rows)} claims about the recipe measured on {len(labelled)} run(s) (seeds "
              f"{', '.join(map(str, seeds))}); {len(bad)} contradict their pages or fail to measure")
    return 0 if ok else 1


def cmd_panel(args) -> int:
    chapter = _chapter(args)
    if args.write:
        return _write(args, chapter)
    if args.check:
        return _check(args, chapter)
    rows = []
    for id in panel.every_run_ids(chapter):
        per = panel.runs(id)
        k = sum(r.holds for r in per)
        rows.append({"id": id, "holds_on": k, "runs": len(per),
                     "not_on": {r.label: _why(r.failing) for r in per if not r.holds}})
        if not args.json:
            print(f"{id}: on {k} of {len(per)} runs")
            for label, reasons in rows[-1]["not_on"].items():
                print(f"    {label}: " + "; ".join(reasons))
    if args.json:
        print(json.dumps({"seeds": {m: list(panel.seeds([m])) for m in panel.panel_models()},
                          "prompt_seed": panel.PROMPT_SEED, "claims": rows}))
    if not args.json:
        for m, seeds in panel.missing().items():
            if seeds:
                print(f"{m}: {len(panel.seeds([m]))} runs shipped; the runs of seeds {', '.join(map(str, seeds))} "
                      "are not trained yet (`python -m lib panel --write` trains and measures them)")
    stale = panel.stale()
    for line in stale:
        print(f"stale: {line}")
    return 0 if not stale else 1


def _write(args, chapter) -> int:
    models = [m.strip() for m in args.models.split(",")] if args.models else None
    if models:
        unknown = [m for m in models if m not in panel.panel_models()]
        if unknown:
            raise CourseError(f"--models: {unknown[0]!r} is no model the claims about a recipe read; they read "
                              f"{', '.join(panel.panel_models())}")
    panel.train_missing(models, retrain=args.retrain, progress=not args.quiet)
    ids = panel.every_run_ids(chapter)
    measured = panel.measure(None, ids, jobs=args.jobs)
    if chapter is not None:       # the other chapters' claims as they were kept
        kept = panel.read()["claims"]
        measured = {**{i: {panel.label(int(s)): {"numbers": n} for s, n in kept[i].items()} for i in kept
                       if i not in measured and i in panel.every_run_ids()}, **measured}
    sizes = ", ".join(f"{m} {len(panel.seeds([m]))}" for m in panel.panel_models())
    print(f"measured {len(measured)} claims on the shipped runs ({sizes}): {panel.write(measured)}")
    for m, seeds in panel.missing().items():
        if seeds:
            print(f"{m}: the runs of seeds {', '.join(map(str, seeds))} are not trained yet")
    return 0


def _check(args, chapter) -> int:
    shipped = sorted(set().union(*(panel.seeds([m]) for m in panel.panel_models())))
    if args.seeds is not None:
        parts = [x.strip() for x in args.seeds.split(",")]
        require(all(x.isdigit() for x in parts), f"--seeds must be training seeds, whole numbers separated by commas, "
                                                 f"got {args.seeds!r}")
        seeds = [int(x) for x in parts]
        unknown = [s for s in seeds if s not in shipped]
        if unknown:
            raise CourseError(f"--seeds: {unknown[0]} is no run of the panel (shipped training seeds: "
                              f"{registry.listed(shipped)})")
    else:
        require(1 <= args.count <= len(shipped), f"--count must be from 1 to {len(shipped)}, got {args.count}")
        seeds = sorted(random.SystemRandom().sample(shipped, args.count))
    print(f"measuring the panel's runs of seeds {', '.join(map(str, seeds))} again")
    diff = panel.check_runs(seeds, panel.every_run_ids(chapter), jobs=args.jobs)
    for line in diff:
        print(line)
    print(f"{len(diff)} numbers differ from the kept panel")
    return 0 if not diff else 1
