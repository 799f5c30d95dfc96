"""The verdicts: the instructor's checks on the answers the contained runs wrote down.

    python scripts/grading/checker.py < answers.json > verdicts.jsonl   (started by grading/checking.py)

A fresh process: it imports the course's library from the grader's own copy of the course, never
runs a line of a learner's code, and reads the answers as plain data (grading/wire.py). A function
the learner wrote is replayed from its record: the check calls a stand-in that answers with what the
learner's function returned for the same input in the run (an input the run never gave it is an
answer the learner did not give). Its verdicts go to the grader on this process's own output, which
no learner's process holds.
"""
from __future__ import annotations

import json
import os
import re
import resource
import sys
from pathlib import Path

if __package__ in (None, ""):     # run as a script: the package's folder first on the path, for `grading`
    sys.path[:1] = [str(Path(__file__).resolve().parents[1])]
    sys.path.insert(1, str(Path(__file__).resolve().parents[2]))   # the grader's own copy of the course

import lib  # noqa: E402
from grading import wire  # noqa: E402
from grading.answers import answer_names, check_name, named, warm_own_text_checks  # noqa: E402
from grading.reading import cpu_limit, limit_memory  # noqa: E402
from lib import chapters  # noqa: E402
from lib.errors import CourseError  # noqa: E402
from lib.exercises import Feedback, writing  # noqa: E402
from lib.exercises.writing import TimeUp  # noqa: E402

class NotRecorded(Exception):
    """The checker gave the learner's function an input the run never gave it."""


class Replay:
    """The learner's function as its run recorded it: the same inputs, the same answers."""

    def __init__(self, calls: list, models: dict):
        self.calls = [c for c in calls if isinstance(c, dict)]
        self.used = [False] * len(self.calls)
        self.models = models
        self.missed = 0
        self.timed_out = False

    def __repr__(self) -> str:
        return "a function"

    def __call__(self, *args, **kwargs):
        asked = (wire.encode(args), wire.encode(kwargs))
        for i, call in enumerate(self.calls):
            if not self.used[i] and wire.similar(call.get("args"), asked[0]) \
                    and wire.similar(call.get("kwargs"), asked[1]):
                self.used[i] = True
                if call.get("timeup"):
                    self.timed_out = True
                    raise TimeUp()
                if "raised" in call:
                    name = str(call["raised"])
                    error = type(name if name.isidentifier() else "Error", (Exception,), {})
                    detail = str(call.get("detail", ""))
                    raise error(detail.split(": ", 1)[1] if detail.startswith(name + ":") else detail)
                return wire.decode(call.get("out"), self.models)
        self.missed += 1
        raise NotRecorded("the run has no answer of this function for this input")


PROBLEMS = ("ran too long (the time limit of a cell)",)


def plain_problem(problem) -> str:
    """What went wrong in an answer cell, in the grader's words: the run writes "raised NAME" or a
    time limit; anything else on the pipe (a learner can write there) is not repeated."""
    text = str(problem)
    if text in PROBLEMS:
        return text
    found = re.fullmatch(r"raised ([A-Za-z_][\w.]{0,59})", text)
    return f"the cell raised {found.group(1)}" if found else "the cell failed (the run's report of it unreadable)"


TIMED_OUT = "timed out"     # a time limit stopped it: not wrong (grading/gradebook.py, grading/watch.py)


def check_value(spec: dict, record: dict, models: dict) -> dict:
    """{verdict, message, note, cases} for one recorded answer (the values of every name the check call
    takes). An answer cell that raised after it bound the answers anew leaves those values in the
    learner's kernel: they count if they are right."""
    parts = record.get("answers") if isinstance(record.get("answers"), dict) else {}
    names = answer_names(spec)
    absent = [n for n in names if not isinstance(parts.get(n), dict) or "absent" in parts[n]]
    if record.get("problem"):
        problem = plain_problem(record["problem"])
        if problem in PROBLEMS:
            return {"verdict": TIMED_OUT, "note": problem}
        failed = {"verdict": "error", "note": problem}
        if absent:
            failed["note"] += f"; no {named(spec, absent)} after it"
        if record.get("rebound") is not True or absent:
            return failed
        bound = check_value(spec, {k: v for k, v in record.items() if k != "problem"}, models)
        if bound["verdict"] != "correct":
            if bound.get("message"):   # what the check says of the values the cell bound (an empty text, say)
                return {**failed, "message": bound["message"], "note": f"{problem}: the check's message says why"}
            return failed
        note = f"{problem} after it bound {named(spec)}: the value{'s' if len(names) > 1 else ''} it bound count{'' if len(names) > 1 else 's'}"
        return {**bound, "note": "; ".join(filter(None, [bound.get("note"), note]))}
    if absent:
        return {"verdict": "not answered", "note": f"no {named(spec, absent)} after the answer cell"}
    if check_name(spec) in UNAVAILABLE:
        return {"verdict": "error", "note": "the check cannot run in this grader: " + UNAVAILABLE[check_name(spec)]}
    check = getattr(chapters.checks(spec['module']), spec["check"])
    given, replays = {}, []
    for name in names:
        part = parts[name]
        if part.get("function"):
            given[name] = Ellipsis if part.get("empty") is True else Replay(
                part.get("calls") if isinstance(part.get("calls"), list) else [], models)
            if isinstance(given[name], Replay):
                replays.append(given[name])
        else:
            given[name] = wire.decode(part.get("value"), models)
    args = [given[a["name"]] if a["role"] == "answer" else models[a["model"]] for a in spec["args"]]
    cases = None
    try:
        with cpu_limit(CHECK_CPU_SECONDS, CheckTooLong):
            if isinstance(check, writing.WriteCheck) and len(args) == 1 and replays:
                # Every case judged, for partial credit: the verdict is the one the check gives (its first
                # wrong case), the share the cases the function gets right.
                feedback, right = writing.case_results(replays[0], check)
                cases = [sum(right), len(right)]
            else:
                feedback = check(*args)
    except CourseError as e:   # the check refused an answer (an empty text, one the model cannot read): it says why
        return {"verdict": "not yet", "message": str(e)[:400],
                "note": f"the check refused {named(spec)} (the message says why)"}
    except CheckTooLong:
        return {"verdict": "error", "note": f"the check ran past the {CHECK_CPU_SECONDS} s of CPU the checker gives "
                                            "one answer (the model's work grows with the length of a learner's text)"}
    except Exception as e:   # a check that fails on an answer is the course's bug: say so, count nothing
        if isinstance(e, MemoryError) or "allocate" in str(e):     # past the checker's memory limit (torch's allocator says so)
            return {"verdict": "error", "note": f"the check needed more memory than the checker gives one answer "
                                                f"({CHECKER_MEMORY_MB} MB; the model's work grows with the length of a "
                                                "learner's text)"}
        return {"verdict": "error", "note": f"the check failed on this answer ({type(e).__name__})"}
    if not isinstance(feedback, Feedback):
        return {"verdict": "error", "note": "the check gave no verdict"}
    out = {"verdict": feedback.verdict(), "message": feedback.message}
    if cases is not None:
        out["cases"] = cases
    if any(r.missed for r in replays):
        out["note"] = "the function was not run on every input the check gives it"
    if any(r.timed_out for r in replays) and out["verdict"] != "correct":
        out = {**out, "verdict": TIMED_OUT, "note": "the check stopped the function at its time limit in the run"}
    return out


# What the checker gives the check of one answer: an own-text check runs SmolLM2 on the learner's text
# (the lens on a sentence takes about 1 s of CPU and 600 MB above the model's 750 MB; on 1,000 tokens it
# took 18 s and 10 GB), so a text past these is noted, not checked, and costs no other learner anything.
CHECK_CPU_SECONDS = 60
CHECKER_MEMORY_MB = 3072


UNAVAILABLE: dict[str, str] = {}     # own-text checks whose model could not be loaded here, and why


class CheckTooLong(BaseException):
    """The check of one answer ran past its CPU (a BaseException: no check's `except Exception` keeps it)."""


def check_one(spec: dict, record: dict | None, models: dict, final: dict | None = None,
              stopped: str | None = None, copy: dict | None = None) -> dict:
    """{verdict, message, note, cases} for one exercise of one learner: the value its answer cell left;
    if that is not correct, the value after the last cell of the learner's own below it that binds
    the answer's name again (`copy`: a copy of the answer cell, an answer put right below a wrong
    draft); if that is not correct either, the value the name holds where the exercise's span ends
    (as the learner's kernel finds it once the cells below the stub ran). The note says which counted.
    `stopped`: the time limit that stopped the run, if one did (an answer it did not reach is timed out)."""
    if record is None:
        if stopped:
            return {"verdict": TIMED_OUT, "note": "not reached: a time limit stopped the run before it"}
        return {"verdict": "error", "note": "did not run"}
    first = check_value(spec, record, models)
    if first["verdict"] == "correct":
        return first
    left = "an error" if first["verdict"] == "error" else "another value"
    for later_record, where in ((copy, "after the cells below its answer cell, the last of them that binds it"),
                                (final, "after the cells below its answer cell")):
        if later_record is None:
            continue
        later = check_value(spec, later_record, models)
        if later["verdict"] == "correct":
            note = f"graded the value{'s' if len(answer_names(spec)) > 1 else ''} {named(spec)} hold{'' if len(answer_names(spec)) > 1 else 's'} {where} (the answer cell left {left})"
            return {**later, "note": "; ".join(filter(None, [later.get("note"), note]))}
    return first


MAX_LINE = 16 * 2 ** 20


def records_of(path: str, labels: set) -> tuple[dict, dict, dict]:
    """Each exercise's records from a run's file: the first written after its answer cell, the last
    written after a copy of it, and the last written where its span ends. A line too long or not JSON
    is skipped."""
    cell, copy, final = {}, {}, {}
    with open(path, "rb") as f:
        while True:
            line = f.readline(MAX_LINE)
            if not line:
                break
            if not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):
                    line = f.readline(MAX_LINE)
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(record, dict) or record.get("label") not in labels:
                continue
            if record.get("taken") == "final":
                final[record["label"]] = record
            elif record.get("taken") == "copy":
                copy[record["label"]] = record
            else:
                cell.setdefault(record["label"], record)
    return cell, copy, final


def main() -> int:
    job = json.load(sys.stdin)
    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    import torch

    torch.set_num_threads(1)

    names = {a["model"] for spec in job["answers"].values() for a in spec["args"] if a["role"] == "model"}
    models = {name: lib.load(name) for name in sorted(names)}
    UNAVAILABLE.update(warm_own_text_checks(job["answers"]))
    limit_memory(CHECKER_MEMORY_MB)
    for learner in job["learners"]:
        try:
            cell, copy, final = records_of(learner["records"], set(job["answers"]))
        except OSError:
            cell, copy, final = {}, {}, {}
        for label in learner["labels"]:
            try:
                result = check_one(job["answers"][label], cell.get(label), models, final.get(label),
                                   learner.get("stopped"), copy.get(label))
            except (Exception, RecursionError) as e:   # this learner's answer only
                result = {"verdict": "error", "note": f"the checker could not read this answer ({type(e).__name__})"}
            sys.stdout.write(json.dumps({"learner": learner["name"], "label": label, **result}) + "\n")
        sys.stdout.flush()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    sys.stdout.write(json.dumps({"timing": {"checker": usage.ru_utime + usage.ru_stime}}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
