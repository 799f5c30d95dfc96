"""A claim on its page: the statement with its numbers, on the pages' seeds or over the panel of runs.

A chapter calls `glue_claim("id")`; the page prints the claim where it writes
{glue:text}`claim_id` (see `registry.glue_name`), how many training runs it covers under `claim_id_runs`,
and, for an every-run claim, on how many of them it holds under `claim_id_count` ("every one of the 20
runs", "17 of the 20 runs"): prose around a claim says the panel's count, never "every run" of its own.

- A this-run or no-run claim is measured on the shipped run on the page's seeds; the statement carries
  the numbers of the first of them (numbers that go together are never split into ranges), and the page
  stops unless the claim holds on every one. A fact about the shipped run carries `THIS_RUN_MARK`, so the
  page says so where it prints it.
- An every-run claim is printed from the panel of shipped runs (`lib.claims.panel`): "on every one of the
  20 runs" only where it held on all of them, else "on 17 of the 20 runs" and what the others do. Its
  numbers on the pages' run are measured again and the page stops if they differ from the kept ones
  (`python -m lib panel --write` measures the panel again after a change).
"""
from __future__ import annotations

from typing import Iterable

from lib.claims import panel, registry, runs
from lib.errors import CourseError


# A fact about the shipped run says so where the page prints it, in words a reader cannot miss.
THIS_RUN_MARK = " (in this trained model; another training run of the same recipe may differ)"


def marked(id: str, text: str) -> str:
    """The statement as the page prints it: a this-run claim about a trained model carries the mark."""
    c = registry.get(id)
    if c.scope == registry.THIS_RUN and c.models:
        return text + THIS_RUN_MARK
    return text


def page_statement(id: str, seeds: Iterable[int] = registry.PAGE_SEEDS, check: bool = True) -> str:
    """The claim as its page prints it. With `check`, a this-run claim that fails on one of `seeds`, or an
    every-run claim whose numbers on the pages' run differ from the panel's kept ones, raises."""
    c = registry.get(id)
    rows = runs.over_runs(id, seeds)
    if c.scope == registry.EVERY_RUN:
        if check and rows:
            diff = panel.differences(panel.per_run(id)[panel.PANEL_SEEDS[0]], rows[0][2], f"{id} on the pages' run: ")
            if diff:
                raise CourseError(f"claim {id!r} measures otherwise on the pages' run than the kept panel says "
                                  f"({diff[0]}); `python -m lib panel --write` measures the panel again")
        return panel.statement(id)
    failing = [(s, registry.why_not(id, s)) for _, s, _, ok in rows if not ok]
    if check and failing:
        seed, why = failing[0]
        raise CourseError(f"claim {id!r} does not hold on {len(failing)} of the page's seeds, the first seed {seed}: "
                          + "; ".join(f"{phrase!r}: {reason}" if phrase else reason for phrase, reason in why))
    return marked(id, registry.statement(id, seeds))


def glue_claim(id: str, seeds: Iterable[int] = registry.PAGE_SEEDS, *, check: bool = True) -> None:
    """Glue the claim's statement under `registry.glue_name(id)`, and the number of training runs it covers
    under that name + "_runs". It returns nothing, so that a call ending a figure's cell adds no second
    output (and no second figure) to the page."""
    from myst_nb import glue

    glue(registry.glue_name(id), page_statement(id, seeds, check), display=False)
    c = registry.get(id)
    k, n = panel.count(id) if c.scope == registry.EVERY_RUN else (1, 1)
    glue(registry.glue_name(id) + "_runs", f"{n:d}", display=False)
    if c.scope == registry.EVERY_RUN:
        glue(registry.glue_name(id) + "_count", format(panel.RunCount(k, n)), display=False)
