"""The gradebook: every notebook the learners returned, run contained, its answers checked apart.

    python scripts/grade.py DIR [--cell-timeout S] [--notebook-timeout S] [--jobs N] [--memory MB]
    python scripts/grade.py export --otter OUT [--chapters ...]     (an Otter-Grader assignment)
    make grade SUBMISSIONS=DIR

DIR holds one folder per learner with the notebooks they returned (the student notebooks of
`make student`, under their own names, at any depth: a hub's collected `LEARNER/ASSIGNMENT/`
folders work as they are).

Three kinds of process, so that no verdict can come from a learner's notebook:
1. this one reads the returned notebooks as data (JSON; nothing of them runs here) and finds each
   answer cell by the exercise label in its metadata (`course.exercise`, written by `make student`);
2. scripts/grade_run.py runs one chapter's own cells once, then forks a contained run per learner
   at the first cell where their notebook departs from the chapter; after each answer cell the run
   writes down the learner's answer as plain data (scripts/grade_wire.py): the value bound to the
   stub's name, or what a function the learner wrote returned on the inputs the check gives it;
3. scripts/grade_check.py, a fresh process that never runs a learner's line, decides each verdict
   with the checks of this copy of the course (lib.exercises) and hands it back on its own output.

What a notebook displays, what its check call says, and anything its cells do to `lib.exercises`
count for nothing; the gradebook's notes say what was found (a verdict displayed by hand, a check
call rewritten or removed, the checks or builtins patched). DIR/gradebook.csv gets one row per
learner, one column per exercise (correct, not yet, not answered, error, missing), the count of
correct answers, and notes. instructors.md says what this does not protect against.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

import notebooks  # noqa: E402
from lib.chapters import unit  # noqa: E402
from lib.exercises.catalogue import catalogue  # noqa: E402

VERDICTS = ("correct", "not yet", "not answered", "error", "missing")
GRADEBOOK = "gradebook.csv"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXERCISE_LABEL = re.compile(r":::\{exercise\}[^\n]*\n(?:(?::[\w-]+:[^\n]*\n)*?):label:[ \t]*(\S+)")
LOADED = re.compile(r"^(\w+)\s*=\s*lib\.load\(\s*[\"']([\w-]+)[\"']\s*\)", re.M)


@dataclass
class Learner:
    name: str
    verdicts: dict = field(default_factory=dict)   # label -> verdict
    notes: list = field(default_factory=list)

    def count(self, verdict: str) -> int:
        return sum(v == verdict for v in self.verdicts.values())


def assignment() -> dict[str, list[str]]:
    """Notebook name (search-by-hand.ipynb) -> its exercise labels, in the book's order."""
    return {name: [label for label in spec["order"]] for name, spec in chapters().items()}


_CHAPTERS: dict | None = None


def chapters() -> dict[str, dict]:
    """Notebook name -> the chapter as the grader runs it: its document, its code cells as `make
    student` hands them out (solutions left out), and each exercise's check call, read from the
    instructor's chapter sources (never from a returned notebook)."""
    global _CHAPTERS
    if _CHAPTERS is None:
        by_doc: dict[str, list] = {}
        for exercise in catalogue(ROOT):
            by_doc.setdefault(exercise.chapter, []).append(exercise)
        _CHAPTERS = {Path(doc).name + ".ipynb": chapter_spec(doc, exercises) for doc, exercises in by_doc.items()}
    return _CHAPTERS


def chapter_spec(doc: str, exercises: list) -> dict:
    """The chapter's code cells (answer cells labelled) and, per exercise, the check its stub calls:
    the module, the function and its arguments (the answer's name, or a model the chapter loads)."""
    nb = notebooks.read_source(ROOT / (doc + ".md"))
    modules = {e.label: e.module for e in exercises}
    models = dict(LOADED.findall("\n".join(c.source for c in nb.cells if c.cell_type == "code")))
    cells, answers, order = [], {}, []
    solving, label = False, None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found = EXERCISE_LABEL.findall(cell.source)
            if found:
                label = found[-1]
            if "{solution-start}" in cell.source:
                solving = True
            if "{solution-end}" in cell.source:
                solving = False
            continue
        if solving:
            continue
        if "exercise-stub" in cell.metadata.get("tags", []) and label:
            answers[label] = stub_call(doc, label, cell.source, modules.get(label), models)
            order.append(label)
            cells.append({"source": cell.source, "label": label})
            label = None
        else:
            cells.append({"source": cell.source, "label": None})
    return {"doc": doc, "cells": cells, "answers": answers, "order": order}


def stub_call(doc: str, label: str, source: str, module: str | None, models: dict) -> dict:
    """The stub's `check.NAME(args)`: which argument is the answer (a name the stub binds) and which
    are models the chapter loads with lib.load."""
    tree = ast.parse(source)
    bound = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)} | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and isinstance(n.func.value, ast.Name) and n.func.value.id == "check"]
    if len(calls) != 1 or module is None or calls[0].keywords:
        raise SystemExit(f"{doc}, {label}: the answer cell should make one call `check.NAME(...)` of a "
                         "module imported `as check`")
    args = []
    for arg in calls[0].args:
        if isinstance(arg, ast.Name) and arg.id in bound:
            args.append({"role": "answer", "name": arg.id})
        elif isinstance(arg, ast.Name) and arg.id in models:
            args.append({"role": "model", "name": arg.id, "model": models[arg.id]})
        else:
            raise SystemExit(f"{doc}, {label}: the check's argument {ast.unparse(arg)} is neither the answer "
                             "(a name the answer cell binds) nor a model the chapter loads with lib.load")
    if [a["role"] for a in args].count("answer") != 1:
        raise SystemExit(f"{doc}, {label}: the check call should take exactly one answer")
    return {"module": module, "check": calls[0].func.attr, "args": args, "call": ast.dump(calls[0])}


def returned(folder: Path) -> dict[str, Path]:
    """A learner's notebooks by file name, found at any depth (checkpoints skipped)."""
    found = {}
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in path.parts:
            found.setdefault(path.name, path)
    return found


# ----------------------------------------------------------------------------- reading a returned notebook
def read_returned(path: Path, spec: dict) -> tuple[list[dict] | None, list[str]]:
    """The learner's code cells ({source, label}), each exercise's first answer cell labelled; and
    notes on what the notebook does that a grade should not rest on. None if it is no notebook."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as e:  # not JSON, not a notebook: the learner's file, not our bug
        return None, [f"{path.name} is not a readable notebook ({type(e).__name__})"]
    cells, seen = [], set()
    for cell in nb.cells:
        if cell.get("cell_type") != "code" or not isinstance(cell.get("source"), str):
            continue
        meta = cell.get("metadata", {}).get("course", {})
        label = meta.get("exercise") if isinstance(meta, dict) and meta.get("role") == "answer" else None
        if label in seen or label not in spec["answers"]:
            label = None
        seen.add(label)
        cells.append({"source": cell["source"], "label": label})
    return cells, findings(cells, spec)


VERDICT_HTML = re.compile(r"data-verdict|course-feedback", re.I)
# Where the checks live: their machinery (lib.exercises) and each chapter's checks (lib.chapters).
CHECK_PACKAGES = ("lib.exercises", "lib.chapters")


def findings(cells: list[dict], spec: dict) -> list[str]:
    """What a notebook does that looks like forging a grade, found by reading its code (not running it)."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    trees = []
    for cell in cells:
        try:
            trees.append(ast.parse(transform(cell["source"])))
        except (SyntaxError, ValueError, TypeError):
            trees.append(None)
    # Every name the notebook gives lib.exercises, a chapter's checks or one of their modules (the stubs'
    # `check` among them).
    aliases = {"check", "exercises", "chapters"}
    for tree in filter(None, trees):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                aliases |= {a.asname for a in node.names if a.asname and a.name.startswith(CHECK_PACKAGES)}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("lib.exercises", "lib")):
                if (node.module or "").startswith(CHECK_PACKAGES) or any(a.name in ("exercises", "chapters") for a in node.names):
                    aliases |= {a.asname or a.name for a in node.names}

    def patched(node) -> str | None:
        name = _dotted(node)
        if name is None:
            return None
        root = name.split(".")[0]
        if root in aliases or name.startswith(CHECK_PACKAGES):
            return "lib.exercises"
        if root in ("builtins", "__builtins__"):
            return "builtins"
        return "lib" if root == "lib" else None

    notes: dict[str, None] = {}
    for cell, tree in zip(cells, trees):
        where = cell["label"] or "a cell"
        if VERDICT_HTML.search(cell["source"]):
            notes[f"{where}: writes verdict HTML of its own"] = None
        if tree is None:
            continue
        stub = spec["answers"].get(cell["label"]) if cell["label"] else None
        if stub is not None:
            calls = [ast.dump(n) for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                     and n.func.value.id == "check"]
            if stub["call"] not in calls:
                notes[f"{where}: check call {'rewritten' if calls else 'removed'}"] = None
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == "check":
                notes[f"{where}: redefines the check"] = None
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    module = node.module if isinstance(node, ast.ImportFrom) else alias.name
                    if (alias.asname or alias.name) == "check" and not (module or "").startswith(CHECK_PACKAGES):
                        notes[f"{where}: redefines the check"] = None
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
                    and node.args and patched(node.args[0]):
                notes[f"{where}: patches {patched(node.args[0])}"] = None
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "check":
                    notes[f"{where}: redefines the check"] = None
                elif isinstance(target, (ast.Attribute, ast.Subscript)) and patched(target):
                    notes[f"{where}: patches {patched(target)}"] = None
    return list(notes)


def _dotted(node) -> str | None:
    """a.b.c for an attribute chain (subscripts skipped), or None."""
    parts = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def departs(cells: list[dict], chapter: list[dict]) -> int:
    """The index of the first code cell where a learner's notebook departs from the chapter's (at the
    latest the chapter's first answer cell: every answer is run and written down by the learner's run)."""
    first_answer = next((i for i, c in enumerate(chapter) if c["label"]), len(chapter))
    for i in range(min(first_answer, len(cells), len(chapter))):
        if cells[i]["source"].rstrip() != chapter[i]["source"].rstrip():
            return i
    return min(first_answer, len(cells))


# ----------------------------------------------------------------------------- the processes
def clean_env() -> dict:
    """What the runs and the checker see of the grader's environment: no token or key of the
    instructor's, only what Python needs."""
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV") if k in os.environ}
    return {**keep, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}


def run_chapter(spec: dict, learners: list[dict], submissions: Path, limits: dict, jobs: int,
                scratch_root: Path | None = None) -> dict[str, dict]:
    """Every learner's contained run of one chapter: learner name -> {records, problem}.

    The chapter's work folder is made in `scratch_root` (the grading's own folder, which holds the
    other chapters' work folders too); a run sees neither it nor the class's folder.

    Each learner's cells go to the run in a file of their own (read by their run only, then hidden
    under its working folder), and their answers come back on a pipe of their own, read here: the
    chapter's process never holds a learner's code or answers."""
    runs = {learner["name"]: {"records": [], "problem": None} for learner in learners}
    readers, ends = [], []

    def read(fd, name):
        size = 0
        with os.fdopen(fd, "r", errors="replace") as f:
            for line in f:
                size += len(line)
                if size > limits["record_bytes"]:
                    runs[name]["problem"] = "wrote more than the grader reads"
                    break
                try:
                    runs[name]["records"].append(json.loads(line))
                except ValueError:
                    pass

    with tempfile.TemporaryDirectory(prefix="grade-", dir=scratch_root) as work:
        work_path = Path(work)
        os.chmod(work, 0o700)
        placed = []
        for i, learner in enumerate(learners):
            cells_file = work_path / f"cells-{i}.json"
            cells_file.write_text(json.dumps(learner["cells"]))
            read_end, write_end = os.pipe()
            ends.append(write_end)
            readers.append(threading.Thread(target=read, args=(read_end, learner["name"]), daemon=True))
            placed.append({"name": learner["name"], "start": learner["start"], "cells_file": str(cells_file),
                           "fd": write_end})
        job = {"cells": [c["source"] for c in spec["cells"]], "learners": placed, "answers": spec["answers"],
               "limits": limits, "jobs": jobs, "workdir": str(work_path),
               "hide": [str(submissions.resolve())] + ([str(Path(scratch_root).resolve())] if scratch_root else [])}
        env = {**clean_env(), "HOME": work}
        for thread in readers:
            thread.start()
        try:
            process = subprocess.Popen([sys.executable, str(HERE / "grade_run.py")], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                       cwd=work, pass_fds=ends)
        finally:
            for fd in ends:
                os.close(fd)
        try:
            stdout, stderr = process.communicate(json.dumps(job),
                                                 timeout=limits["notebook_seconds"] * (len(learners) + 2) + 600)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        for thread in readers:
            thread.join(30)
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and item.get("learner") in runs and item.get("problem"):
            runs[item["learner"]]["problem"] = item["problem"]
    for name, run in runs.items():
        records = run["records"]
        crash = next((r["crash"] for r in records if isinstance(r, dict) and "crash" in r), None)
        if crash:
            run["problem"] = "the grader's run failed: " + str(crash)[-300:]
        elif not run["problem"] and not any(isinstance(r, dict) and r.get("done") for r in records):
            run["problem"] = ("the run ended before the notebook did (the notebook ended Python, "
                              "or used up its memory or CPU time)")
    if process.returncode != 0 and not any(run["records"] for run in runs.values()):
        raise SystemExit(f"the chapter {spec['doc']} could not be run: {stderr.strip().splitlines()[-1:]}")
    return runs


def check_chapter(spec: dict, runs: dict[str, dict], labels: dict[str, list[str]]) -> list[dict]:
    """The verdicts of one chapter, from a fresh checker process."""
    job = {"answers": spec["answers"],
           "learners": [{"name": name, "records": run.get("records", []), "labels": labels[name]}
                        for name, run in runs.items()]}
    result = subprocess.run([sys.executable, str(HERE / "grade_check.py")], input=json.dumps(job),
                            capture_output=True, text=True, env={**clean_env(), "HOME": tempfile.gettempdir()},
                            cwd=str(ROOT), timeout=3600)
    if result.returncode != 0:
        raise SystemExit(f"the checker failed on {spec['doc']}: {result.stderr.strip()[-500:]}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def grade_chapter(nb_name: str, handed: dict[str, dict], learners: dict[str, Learner], submissions: Path,
                  limits: dict, jobs: int, scratch_root: Path | None = None) -> None:
    spec = chapters()[nb_name]
    to_run, labels = [], {}
    for name, notebooks_of in handed.items():
        learner = learners[name]
        path = notebooks_of.get(nb_name)
        if path is None:
            learner.verdicts.update({label: "missing" for label in spec["order"]})
            learner.notes.append(f"{nb_name} not returned")
            continue
        cells, notes = read_returned(path, spec)
        learner.notes.extend(notes)
        if cells is None:
            learner.verdicts.update({label: "error" for label in spec["order"]})
            continue
        present = [label for label in spec["order"] if any(c["label"] == label for c in cells)]
        for label in spec["order"]:
            if label not in present:
                learner.verdicts[label] = "missing"
                learner.notes.append(f"{nb_name}: no answer cell for {label}")
        if present:
            labels[name] = present
            to_run.append({"name": name, "cells": cells, "start": departs(cells, spec["cells"])})
    if not to_run:
        return
    runs = run_chapter(spec, to_run, submissions, limits, jobs, scratch_root)
    for name in labels:
        run = runs.setdefault(name, {"records": [], "problem": "the run gave no answers"})
        contained = next((r["contained"] for r in run.get("records", []) if isinstance(r, dict) and "contained" in r), None)
        if run.get("problem"):
            learners[name].notes.append(f"{nb_name}: {run['problem']}")
        if contained:
            learners[name].notes.append(f"{nb_name}: ran with {'; '.join(map(str, contained))}")
            UNCONTAINED.update(map(str, contained))
    for item in check_chapter(spec, runs, labels):
        learner = learners[item["learner"]]
        learner.verdicts[item["label"]] = item["verdict"] if item["verdict"] in VERDICTS else "error"
        if item.get("note"):
            learner.notes.append(f"{item['label']}: {item['note']}")


UNCONTAINED: set[str] = set()   # what some run could not be walled off from, in words (for the warning)

LIMITS = {"cell_cpu_seconds": 60, "chapter_cell_cpu_seconds": 600, "notebook_seconds": 300, "memory_mb": 2048,
          "scratch_mb": 256, "record_bytes": 64 * 2 ** 20}


def grade(submissions: Path, cell_timeout: float = 60, notebook_timeout: float = 300, jobs: int = 2,
          chapters_wanted: list[str] | None = None, memory_mb: int = 2048) -> tuple[list[Learner], list[str]]:
    """Grade every learner's folder; returns the learners and the exercise labels (the columns)."""
    folders = sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise SystemExit(f"{submissions} holds no learner's folder (one folder per learner, with their notebooks)")
    book = assignment()
    handed = {f.name: returned(f) for f in folders}
    if chapters_wanted:
        wanted = [c if c.endswith(".ipynb") else c + ".ipynb" for c in chapters_wanted]
        unknown = [c for c in wanted if c not in book]
        if unknown:
            raise SystemExit(f"no exercises in {', '.join(unknown)}; chapters with exercises: "
                             + ", ".join(n.removesuffix(".ipynb") for n in book))
    else:  # the chapters that anyone returned
        wanted = [n for n in book if any(n in notebooks_of for notebooks_of in handed.values())]
    if not wanted:
        raise SystemExit(f"no learner in {submissions} returned a notebook with exercises "
                         "(expected the names `make student` writes, e.g. search-by-hand.ipynb)")
    columns = [label for name in wanted for label in book[name]]
    learners = {name: Learner(name) for name in handed}
    limits = {**LIMITS, "cell_cpu_seconds": cell_timeout, "notebook_seconds": notebook_timeout,
              "memory_mb": memory_mb}
    # Chapters side by side when there are several (each runs its learners one at a time); one
    # chapter runs its learners side by side.
    side_by_side = max(1, min(jobs, len(wanted)))
    per_chapter = max(1, jobs // side_by_side)
    # Every chapter's work folder (each learner's cells wait there for their run) in one folder of
    # the grading's own, hidden from every run: a run sees no other chapter's learners either.
    with tempfile.TemporaryDirectory(prefix="grading-") as scratch_root, \
            ThreadPoolExecutor(max_workers=side_by_side) as pool:
        os.chmod(scratch_root, 0o700)
        for future in [pool.submit(grade_chapter, nb_name, handed, learners, submissions, limits, per_chapter,
                                   Path(scratch_root)) for nb_name in wanted]:
            future.result()
    return list(learners.values()), columns


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def as_text(value) -> str:
    """A CSV cell that a spreadsheet shows as text: one that starts like a formula (= + - @, or a tab
    or carriage return before one) gets a leading apostrophe (OWASP's advice for CSV injection)."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


# ----------------------------------------------------------------------------- Otter-Grader
OTTER_TEST = '''"""Otter-Grader test of {label} ({doc}): the course's own self-check, {module}.{check}.

Written by `python scripts/grade.py export`; the answer is the value bound to `{answer}` by the
answer cell (for a write exercise, the function). The check modules are loaded again from the course's
files before each check, so a cell that patched them does not decide the verdict.
"""
OK_FORMAT = False

from otter.test_files import test_case

name = {label!r}
points = 1


def _plain(value):
    """A number, word or array as its plain built-in type (a subclass that says yes to every
    comparison is read as the value it holds)."""
    import numpy as np

    if isinstance(value, bool) or value is None or value is Ellipsis or callable(value):
        return value
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        return np.array(value.detach().cpu().double().numpy())
    if isinstance(value, np.ndarray):
        return np.array(np.ndarray.tolist(value))
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in (list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value)))
    return value


@test_case(points=1, hidden=False)
def test_{slug}(env):
    import importlib

    import lib

    # The site's registry first: a check module declares its page twin again when it is reloaded.
    for module in ("lib.exercises", "lib.exercises.site", "lib.exercises.writing", "{module}"):
        importlib.reload(importlib.import_module(module))
    check = getattr(importlib.import_module("{module}"), {check!r})
    answer = _plain(env.get({answer!r}, ...))
    feedback = check({call_args})
    assert feedback.verdict() == "correct", feedback.message
'''


def export_otter(out: Path, wanted: list[str] | None = None) -> list[Path]:
    """One Otter-Grader autograder per chapter: OUT/CHAPTER/autograder.zip, a test file per exercise
    that runs the course's check on the learner's answer (`otter run -a autograder.zip NOTEBOOK`
    grades a returned notebook without Docker; on Gradescope the zip is the autograder)."""
    specs = chapters()
    names = [n if n.endswith(".ipynb") else n + ".ipynb" for n in wanted] if wanted else list(specs)
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise SystemExit(f"no exercises in {', '.join(unknown)}; chapters with exercises: "
                         + ", ".join(n.removesuffix(".ipynb") for n in specs))
    written = []
    requirements = (ROOT / "requirements.txt").read_text()
    for name in names:
        spec = specs[name]
        folder = out / name.removesuffix(".ipynb")
        folder.mkdir(parents=True, exist_ok=True)
        zip_path = folder / "autograder.zip"
        with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("otter_config.json", json.dumps({"lang": "python", "name": name.removesuffix(".ipynb")}, indent=1))
            z.writestr("requirements.txt", requirements)
            for label in spec["order"]:
                stub = spec["answers"][label]
                answer = next(a["name"] for a in stub["args"] if a["role"] == "answer")
                call = ", ".join("answer" if a["role"] == "answer" else f"lib.load({a['model']!r})" for a in stub["args"])
                z.writestr(f"tests/{label}.py", OTTER_TEST.format(
                    label=label, doc=spec["doc"], module=f"{unit(stub['module']).package}.checks", check=stub["check"], answer=answer,
                    slug=re.sub(r"\W", "_", label), call_args=call))
        written.append(zip_path)
    (out / "README.md").write_text(OTTER_README)
    return written


OTTER_README = """# The course's exercises as Otter-Grader assignments

One folder per chapter, each with `autograder.zip`: a test per exercise (named by the exercise's label)
that runs the course's own self-check (`lib.exercises`) on the answer the learner's notebook binds,
one point each. Hand out the notebooks of `make student`; grade a returned one with

    otter run -a CHAPTER/autograder.zip -o RESULTS_DIR RETURNED.ipynb

(the course's library must be installed where it runs: `pip install -e` of the course, as for the
notebooks themselves), or upload `autograder.zip` to a Gradescope programming assignment whose image
installs the course (its requirements are in the zip). Otter runs the checks in the learner's own
kernel: for marks that a dishonest notebook cannot forge, grade with `make grade` (see instructors.md).
"""


def write_gradebook(path: Path, learners: list[Learner], columns: list[str]) -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow([as_text(c) for c in ["learner", *columns, "correct", "of", "notes"]])
        for learner in learners:
            out.writerow([as_text(c) for c in [learner.name, *(learner.verdicts.get(c, "missing") for c in columns),
                          learner.count("correct"), len(columns), "; ".join(learner.notes)]])


def summary(learners: list[Learner], columns: list[str]) -> str:
    lines = []
    for learner in learners:
        counts = Counter(learner.verdicts.get(c, "missing") for c in columns)
        rest = ", ".join(f"{counts[v]} {v}" for v in VERDICTS[1:] if counts[v])
        lines.append(f"  {learner.name}: {counts['correct']}/{len(columns)} correct" + (f" ({rest})" if rest else ""))
    per_exercise = ", ".join(f"{c} {sum(l.verdicts.get(c) == 'correct' for l in learners)}" for c in columns)
    lines.append(f"  correct per exercise: {per_exercise}")
    return "\n".join(lines)


def export_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade export", description="Export the exercises for another grader.")
    parser.add_argument("--otter", required=True, metavar="OUT", help="write Otter-Grader autograders into OUT")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: every chapter with exercises)")
    try:
        args = parser.parse_args(argv)
        written = export_otter(Path(args.otter), args.chapters.split(",") if args.chapters else None)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(f"error: {e.code}", file=sys.stderr)
            return 2
        return int(e.code or 0)
    print(f"wrote {len(written)} Otter-Grader autograders in {args.otter} (see its README.md)")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    parser = argparse.ArgumentParser(prog="grade", description="Run the notebooks learners returned; write a gradebook.")
    parser.add_argument("submissions", help="a folder with one folder per learner")
    parser.add_argument("--cell-timeout", type=float, default=60,
                        help="CPU seconds one of a learner's cells may run (default 60)")
    parser.add_argument("--notebook-timeout", type=float, default=300, help="seconds one notebook may run (default 300)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run side by side (default 2)")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: those returned)")
    parser.add_argument("--memory", type=int, default=2048,
                        help="MB of address space a learner's run may add to the chapter's (default 2048)")
    args = parser.parse_args(argv)
    folder = Path(args.submissions)
    if not folder.is_dir():
        print(f"error: {folder} is not a folder; give the folder that holds one folder per learner", file=sys.stderr)
        return 2
    if args.cell_timeout <= 0 or args.notebook_timeout <= 0 or args.jobs < 1 or args.memory < 64:
        print("error: time limits must be positive numbers of seconds, --jobs at least 1 and --memory at least 64 (MB)",
              file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        learners, columns = grade(folder, args.cell_timeout, args.notebook_timeout, args.jobs,
                                  args.chapters.split(",") if args.chapters else None, args.memory)
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    write_gradebook(folder / GRADEBOOK, learners, columns)
    if UNCONTAINED:
        print("warning: learners' runs were not fully contained here (" + "; ".join(sorted(UNCONTAINED))
              + "); a run could reach what it was not walled off from (without namespaces: every file your "
              "account can write, the course's checks and this gradebook among them, and the network), so "
              "these marks are not protected: see 'What is contained where' in instructors.md", file=sys.stderr)
    print(f"graded {len(learners)} learners on {len(columns)} exercises in {time.perf_counter() - start:.0f} s")
    print(summary(learners, columns))
    print(f"gradebook: {folder / GRADEBOOK}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
