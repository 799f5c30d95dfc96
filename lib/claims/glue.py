"""A claim on its page: the statement with its numbers over the page's seeds and, for a lesson about
the recipe, over every shipped training run.

A chapter calls `glue_claim("id")`; the page prints the claim where it writes
{glue:text}`claim_id` (see `registry.glue_name`). An every-run claim's numbers range over every
shipped run and every seed ("from 0.72 to 1.02"); its template may also name `{runs_measured}`,
the number of runs measured. A claim that fails on one run or seed stops the page: the page must not print it. A
fact about the shipped run carries `THIS_RUN_MARK`, so the page says so where it prints it.
"""
from __future__ import annotations

from typing import Iterable

from lib.claims import registry, runs
from lib.errors import CourseError


# The field an every-run claim's template may use for how many runs its numbers cover.
RUNS_FIELD = "runs_measured"

# A fact about the shipped run says so where the page prints it, in words a reader cannot miss.
THIS_RUN_MARK = " (in this trained model; another training run of the same recipe may differ)"


def marked(id: str, text: str) -> str:
    """The statement as the page prints it: a this-run claim about a trained model carries the mark."""
    c = registry.get(id)
    if c.scope == registry.THIS_RUN and c.models:
        return text + THIS_RUN_MARK
    return text


def page_numbers(id: str, seeds: Iterable[int] = registry.PAGE_SEEDS) -> tuple[dict, list]:
    """(the numbers as the page prints them, the (run, seed) pairs on which the claim fails)."""
    rows = runs.over_runs(id, seeds)
    numbers = registry.spans([r[2] for r in rows])
    n = len({r[0] for r in rows})
    numbers[RUNS_FIELD] = registry.Span(n, n)
    return numbers, [(r[0], r[1]) for r in rows if not r[3]]


def page_statement(id: str, seeds: Iterable[int] = registry.PAGE_SEEDS) -> str:
    return marked(id, registry.fill(id, page_numbers(id, seeds)[0]))


def glue_claim(id: str, seeds: Iterable[int] = registry.PAGE_SEEDS, *, check: bool = True) -> None:
    """Glue the claim's statement (over the page's seeds, and every shipped run for an every-run
    claim) under `registry.glue_name(id)`. It returns nothing, so that a call ending a figure's cell
    adds no second output (and no second figure) to the page. With `check`, a claim that fails on one
    of the seeds or runs stops the page."""
    from myst_nb import glue

    numbers, failing = page_numbers(id, seeds)
    if check and failing:
        run, seed = failing[0]
        raise CourseError(f"claim {id!r} does not hold on {len(failing)} (run, seed) pair(s), the first "
                          f"run {run}, seed {seed}")
    glue(registry.glue_name(id), marked(id, registry.fill(id, numbers)), display=False)
    # How many training runs the statement covers, for the page's prose ("on all 5 runs").
    glue(registry.glue_name(id) + "_runs", f"{numbers[RUNS_FIELD].lo:d}", display=False)
