"""The twin contract: every page twin held to the library in Node, in the fast tier, generated from the registries.

A page twin is a computation of the library written again in JavaScript for the website: each explorer's view
(its unit's page.js, `VIEWS`), each check's computation (`COMPUTE`) with the rules and sentences that judge a
typed answer (rules.js), and the core modules they stand on (the forward pass model.js, the read-out and the
seeded roll readout.js, the vocabulary vocab.js). Here every one runs in Node on the same inputs as the library,
from the same files the site serves (lib.explorers.web's units.js gathering every unit's page.js, the shipped
weights and point sets and stored files as export_site writes them; tests/twin_contract.py), in one Node
process, and must give the library's numbers to 1e-5 (relative beyond 1; a check's values relative however
small; an explorer whose page reads stored numbers says its own tolerance in its args, a shared twin in its
registration), and the same tokens, picks, verdicts and sentences, word for word:
- every registered explorer (lib.explorers.registry), in each of its registered examples, at its defaults and
  at SETTINGS random settings, good and bad (tests/explorer_cases.py);
- every check that declares a page computation (lib.exercises.site.registry()): its values, and the verdict
  and sentence for the right answer, each known wrong one and garbage (tests/answer_cases.py);
- every shared twin registered with `shared_twin` in a `*_twins.py` module under tests/
  (tests/explorers/page_twins.py: the read-out, the forward pass, the seeded roll, the vocabulary).
The two mutation tests show that a twin one per cent off anywhere fails: every unit's every view and check
computation, and every function the core modules held here export, each in a copy of the site's files.

Nothing here lists an explorer, a check or a unit. To hold something new:
- a new explorer or check: register it as usual (`@registered(...)` in its unit's explorers.py, `site_check`
  in its checks.py, its twin in the unit's page.js); the contract runs it with no edit here, with the context
  page.js gives it (views.js `viewContext`: the shipped model its Explorer names, the point sets, its opening
  picture) and the files its registration's `site_files` writes.
- a real model the page loads when a reader asks (an explorer declares it in its args, `args.real`, as
  lib.explorers.smollm2.live_args writes them): until a page model is registered for it, the contract holds the
  page as a reader meets it before loading the model (its opening picture, or its menu of stored runs), and
  says which own-text checks wait (`not_held`). `page_model(name, js)` in a `*_twins.py` module registers how
  Node runs it (`js`: an async function of (site) returning what page.js's `liveModel` gives a view,
  {info, run(op, args, onPartial)}); the contract then holds such explorers on any settings, and the own-text
  checks on their example text.
- a shared JavaScript module, or a unit's helper that its views do not hold alone (the ablation chapter's
  hooks: tests/chapters/part1/ablation_twins.py): add `@shared_twin(name, js, holds=(...))` on a function
  returning [(case, expected outcome)] in a `*_twins.py` module under tests/ (beside the tests of what it
  twins); `js` is the page's side, an async function of (site, case) run in Node. Its modules in `holds`
  (files of lib/explorers/js) join the mutation test: each function they export, one per cent off, must be
  seen by the contract.
- a twin too heavy for this file (a real model's forward pass in the page): a test file of its own can use the
  same pieces, the `twin_site` fixture (tests/explorers/conftest.py, written once per run), `run_node` with its
  own jobs and calls, and `Case` and `hold` to compare.
"""
from __future__ import annotations

import json

import pytest

from twin_contract import (NODE_CPU, calls, check_cases, cpu_seconds, exported_functions, hold, mutated_site, not_held,
                           registrations, run_cases, run_node, scaled_results, scaled_units, shared_cases, view_cases)

# CPU-seconds (this process and Node) of each part of this file, said by test_what_the_contract_costs.
COSTS: dict[str, float] = {}


@pytest.fixture(scope="module")
def site(twin_site):
    """The site's explorers folder (tests/explorers/conftest.py: written once for the whole test run)."""
    return twin_site


@pytest.fixture(scope="module")
def contract(site):
    """Every case, what the library says of it, and what the page says, from one Node process."""
    start, node = cpu_seconds(), NODE_CPU[0]
    cases = view_cases() + check_cases() + shared_cases()
    got = run_cases(site, cases)
    COSTS["the contract (library and Node)"] = cpu_seconds() - start
    COSTS["the contract, of which Node"] = NODE_CPU[0] - node
    return {"cases": cases, "got": got, "problems": hold(cases, got)}


def _problems(contract, kind: str) -> list[str]:
    return [f"{twin}: {p}" for twin, found in contract["problems"].items() if twin.startswith(kind) for p in found]


def test_every_view_twin_gives_the_librarys_view_and_messages(contract):
    from lib.explorers.registry import entries, registered_views

    views = {c.twin.split(" ", 1)[1] for c in contract["cases"] if c.twin.startswith("view ")}
    assert views == registered_views() and len(views) >= len(entries()) - 1, sorted(registered_views() - views)
    problems = _problems(contract, "view ")
    assert not problems, "\n".join(problems[:20])
    # The random settings reach both sides of the controls: views drawn and values refused.
    refused = [g for c, g in zip(contract["cases"], contract["got"]) if c.twin.startswith("view ") and "error" in g]
    total = sum(c.twin.startswith("view ") for c in contract["cases"])
    assert 0.1 * total < len(refused) < 0.6 * total, f"{len(refused)} of {total} settings refused"


def test_every_check_twin_computes_the_librarys_values_and_says_its_sentences(contract):
    from lib.exercises.site import registry

    waiting = set(not_held())
    computed = {t.compute for t in registry().values() if t.compute and t.name not in waiting}
    held = {c.twin.split(" ", 1)[1] for c in contract["cases"] if c.twin.startswith("check ")}
    assert held == computed and len(held) >= 40, sorted(computed - held)
    # Only own-text checks may wait for a page model (tests/twin_contract.py PAGE_MODELS), and they are said.
    assert all(registry()[name].own for name in waiting), waiting
    problems = _problems(contract, "check ")
    assert not problems, "\n".join(problems[:20])
    verdicts = [v for c, g in zip(contract["cases"], contract["got"]) if c.twin.startswith("check ")
                for v, _ in g["result"]["verdicts"]]
    assert {"correct", "not yet", "not answered"} <= set(verdicts)


def test_the_shared_modules_give_the_librarys_numbers(contract):
    twins = registrations()
    held = {c.twin.split(" ", 1)[1] for c in contract["cases"] if c.twin.startswith("shared ")}
    assert held == set(twins) and {"read-out", "forward pass", "seeded roll", "vocabulary"} <= held
    problems = _problems(contract, "shared ")
    assert not problems, "\n".join(problems[:20])


# ----------------------------------------------------------------------------- one per cent off fails

# The first cases of each shared twin, which every mutant of a module it holds is run on (a mutant is a module
# graph of its own in Node, its code run cold: all of the shared twins' cases for each of 28 mutants cost 17 CPU-s).
PROBE = 4


def _seen(cases, before, after) -> tuple[set, set]:
    """The twins whose page answers changed in the mutated copy (`after` against `before`, the page as it is,
    beyond the contract's tolerance), and those of them where the contract then saw a difference from the
    library."""
    reached, seen = set(), set()
    for case, b, a in zip(cases, before, after):
        if case.changed(b, a):
            reached.add(case.twin)
            if case.compare(case.expected, a):
                seen.add(case.twin)
    return reached, seen


def _has_number(x) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float)):
        return x != 0
    if isinstance(x, dict):
        return any(_has_number(v) for v in x.values())
    if isinstance(x, list):
        return any(_has_number(v) for v in x)
    return False


def test_any_unit_twin_one_per_cent_off_fails_the_contract(site, contract, tmp_path):
    """Every unit's every view and check computation giving its numbers times 1.01 (an open check deciding on
    the answer times 1.01), in a copy of the site's files: the contract sees each one whose page changed, and
    every twin that shows a number changed."""
    start = cpu_seconds()
    off = mutated_site(site, tmp_path / "explorers", {"units.js": scaled_units})
    kept = [(c, g) for c, g in zip(contract["cases"], contract["got"]) if not c.twin.startswith("shared ")]
    cases = [c for c, _ in kept]
    got = run_node([off], [dict(c.job, site=0) for c in cases], calls())
    reached, seen = _seen(cases, [g for _, g in kept], got)
    COSTS["every unit twin off"] = cpu_seconds() - start
    assert reached - seen == set(), f"one per cent off and the contract did not see it: {sorted(reached - seen)}"
    numeric = {c.twin for c, g in kept if _has_number(g.get("result"))}
    assert numeric <= reached, f"these twins show numbers but did not change: {sorted(numeric - reached)}"
    assert len(numeric) >= 50, sorted(numeric)


def test_any_shared_function_one_per_cent_off_fails_the_contract(site, contract, tmp_path):
    """Each function (a class: each of its methods) exported by a core module that shared twins hold, giving its
    numbers times 1.01 in a copy of the site's files of its own: wherever that changed what the page answers to
    the first cases of the twins holding the module, the contract saw it. The forward pass, the read-out, the
    seeded roll and the vocabulary are among those changed."""
    from lib.explorers import web

    start, node = cpu_seconds(), NODE_CPU[0]
    twins = registrations()
    modules = sorted({m for twin in twins.values() for m in twin.holds})
    assert {"model.js", "readout.js", "vocab.js"} <= set(modules)
    first: dict[str, list] = {}             # twin -> its first PROBE (case, the page's answer as it is)
    for c, g in zip(contract["cases"], contract["got"]):
        if c.twin.startswith("shared ") and len(first.setdefault(c.twin, [])) < PROBE:
            first[c.twin].append((c, g))
    mutants, jobs, probes = [], [], []
    for m in modules:
        probe = [pair for name, twin in twins.items() if m in twin.holds for pair in first[f"shared {name}"]]
        for name in exported_functions((web.JS / m).read_text()):
            i = len(mutants)
            mutants.append((f"{m} {name}", mutated_site(site, tmp_path / f"{i}" / "explorers", {m: scaled_results(name)})))
            jobs += [dict(c.job, site=i) for c, _ in probe]
            probes.append(probe)
    got = iter(run_node([s for _, s in mutants], jobs, calls()))
    missed, changed = [], []
    for (label, _), probe in zip(mutants, probes):
        reached, seen = _seen([c for c, _ in probe], [g for _, g in probe], [next(got) for _ in probe])
        if reached:
            changed.append(label)
            if not seen:
                missed.append(f"{label} (it changed {sorted(reached)})")
    COSTS[f"{len(mutants)} shared functions off, one at a time"] = cpu_seconds() - start
    COSTS["of which Node"] = NODE_CPU[0] - node
    assert not missed, "one per cent off and the contract did not see it:\n" + "\n".join(missed)
    must = {"model.js Model", "readout.js checkTemperature", "readout.js softmax", "readout.js uniform",
            "readout.js sample", "readout.js inverseCdf", "vocab.js Vocabulary"}
    assert must <= set(changed), sorted(must - set(changed))


def test_what_the_contract_costs(site, contract):
    """The contract's cost, as figures (make bench holds the budgets; this only says them, with -s): the
    library's side and Node's, in CPU-seconds, and every job plain JSON (what Node is sent)."""
    json.dumps([c.job for c in contract["cases"]])
    print(f"\ntwin contract, {len(contract['cases'])} cases: " + "; ".join(f"{k} {v:.1f} CPU-s" for k, v in COSTS.items()))
    if not_held():
        print(f"own-text checks waiting for a page model (tests/twin_contract.py PAGE_MODELS): {', '.join(not_held())}")
    assert COSTS["the contract, of which Node"] > 0
