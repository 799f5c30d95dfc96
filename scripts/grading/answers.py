"""An exercise's answers as its stub's check call names them, for the run and the checker alike.

A check call takes one answer (`check.NAME(winner)`) or several (an own-text exercise's
`check.copies_without_heads(my_text, still_copies)`: the learner's line and their prediction about it),
each a name the answer cell binds, beside the models the chapter loads. The run writes down each
answer's value (grading/run.py), the checker gives them all to the check (grading/checker.py).
"""
from __future__ import annotations


def answer_names(spec: dict) -> list[str]:
    """The names the check call takes as answers, in the call's order."""
    return [a["name"] for a in spec["args"] if a["role"] == "answer"]


def named(spec: dict, names: list[str] | None = None) -> str:
    """The answers' names (or those of `names`) for a note: `winner`, or `my_text` and `still_copies`."""
    names = [f"`{n}`" for n in (answer_names(spec) if names is None else names)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def own_text_checks(answers: dict) -> list:
    """The page twins of the chapter's own-text checks (a check of the learner's own text, which runs
    SmolLM2 on it: lib.exercises.site's `own`)."""
    from lib.exercises import site  # deferred: the checker's and the run's, not the reader's
    from lib.units import checks

    found = []
    for spec in answers.values():
        checks(spec["module"])     # its twins declared as it is imported
        twin = site.SITE_CHECKS.get(check_name(spec))
        if twin is not None and twin.own and twin not in found:
            found.append(twin)
    return found


def warm_own_text_checks(answers: dict) -> dict[str, str]:
    """Load, once and before any learner's answer, what the chapter's own-text checks read (SmolLM2,
    about 2.6 s of CPU and 750 MB), by checking their example text: the chapter's process does it
    before its learners' runs are forked (each inherits the model instead of loading it again, within
    its own memory limit), the checker before its limits are set. Returns the checks that could not
    be warmed (by the check's name, `unit.check`), each with the library's message (its model's
    package not installed, say): no learner's answer to them can be checked here."""
    failed = {}
    for twin in own_text_checks(answers):
        try:
            twin.computed()
        except Exception as e:   # noqa: BLE001 (said for each answer to it, by the checker)
            failed[twin.name] = str(e)[:300] or type(e).__name__
    return failed


def check_name(spec: dict) -> str:
    """The check's name as the page twins' registry knows it: `unit.check`."""
    return f"{spec['module'].rsplit('.', 1)[-1]}.{spec['check']}"
