"""The gradebook: every notebook the learners returned, run contained, its answers checked apart.

    python scripts/grade.py DIR [--cell-timeout S] [--notebook-timeout S] [--wall-timeout S] [--jobs N] [--memory MB]
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
learner, one column per exercise (correct, not yet, not answered, timed out, error, missing), the count of
correct answers, and notes. instructors.md says what this does not protect against.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from datetime import datetime
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

import notebooks  # noqa: E402
from lib.budgets import BUDGETS  # noqa: E402
from lib.chapters import unit  # noqa: E402
from lib.exercises.catalogue import catalogue  # noqa: E402

VERDICTS = ("correct", "not yet", "not answered", "timed out", "error", "missing")
TIMED_OUT = "timed out"        # a time limit stopped it: not wrong, to grade again (see Watch in grade_run.py)
GRADEBOOK = "gradebook.csv"
FEEDBACK = "feedback"          # DIR/feedback/LEARNER.md
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXERCISE_LABEL = re.compile(r":::\{exercise\}[^\n]*\n(?:(?::[\w-]+:[^\n]*\n)*?):label:[ \t]*(\S+)")
LOADED = re.compile(r"^(\w+)\s*=\s*lib\.load\(\s*[\"']([\w-]+)[\"']\s*\)", re.M)


@dataclass
class Learner:
    name: str
    verdicts: dict = field(default_factory=dict)   # label -> verdict
    notes: list = field(default_factory=list)
    messages: dict = field(default_factory=dict)   # label -> the check's message (what the kernel shows)
    returned_at: dict = field(default_factory=dict)  # notebook name -> the graded file's modification time
    late: list = field(default_factory=list)       # notebook names returned after the due date

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
            # As the notebooks hand it out: the check's import in a cell of its own above the answer cell.
            setup, answer = notebooks.split_stub(cell.source)
            if setup:
                cells.append({"source": setup, "label": None})
            answers[label] = stub_call(doc, label, answer, modules.get(label), models)
            order.append(label)
            cells.append({"source": answer, "label": label})
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


# What a returned file may be, read as data: beyond these it is refused (or a cell left out) with a note.
MAX_NOTEBOOK_BYTES = 16 * 2 ** 20     # a notebook file (its outputs included)
MAX_CELLS = 2000                      # cells in one notebook
MAX_CELL_CHARS = 2 ** 20              # one code cell's source
MAX_CODE_CHARS = 4 * 2 ** 20          # every code cell of one notebook together
MAX_ENTRIES = 20_000                  # files and folders looked at in one learner's folder
MAX_NOTES = 6                         # notes of one kind per learner (the rest counted)
SKIPPED_FOLDERS = {".ipynb_checkpoints", "__pycache__", ".git"}
_READING = threading.Lock()           # one notebook parsed at a time: the grader's memory stays bounded


def quoted(text, limit: int = 60) -> str:
    """A learner's text (a file name, a label, an exception's name) in a note: quoted, printable, cut
    short, never taken for the grader's own words or for another note (no ';')."""
    text = str(text)
    shown = "".join(c if c.isprintable() and c not in '";' else "?" for c in text[:limit])
    return f'"{shown}"' + ("..." if len(text) > limit else "")


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")):
        if test(mode):
            return name
    return "not a regular file"


def returned(folder: Path, book: dict | None = None) -> tuple[dict[str, list[Path]], list[str]]:
    """A learner's notebooks by file name, found at any depth, each name with every regular file of
    it (checkpoints skipped); and notes on what was refused: links (never followed), FIFOs, devices
    and sockets (never opened), files too large, names no chapter has. Nothing here opens a file."""
    found: dict[str, list[Path]] = {}
    notes = Notes()
    book = book if book is not None else assignment()
    if folder.is_symlink():
        notes.add("link", "the learner's folder is a link: refused, nothing in it graded")
        return found, notes.list()
    seen = 0
    for root, dirs, files in os.walk(folder, followlinks=False):
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            notes.add("many", f"more than {MAX_ENTRIES} files and folders: the rest not looked at")
            dirs[:] = []
        for name in sorted(dirs):
            if name in SKIPPED_FOLDERS:
                dirs.remove(name)
            elif os.path.islink(os.path.join(root, name)):
                dirs.remove(name)
                if name.endswith(".ipynb"):
                    files.append(name)
                else:
                    notes.add("link", f"{quoted(Path(root, name).relative_to(folder))} is a link to a folder: not followed")
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".ipynb"):
                continue
            path = Path(root, name)
            rel = path.relative_to(folder)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                notes.add("refused", f"{quoted(rel)} is a link (not followed): refused, not graded")
            elif not stat.S_ISREG(info.st_mode):
                notes.add("refused", f"{quoted(rel)} is {kind_of(info.st_mode)}, not a regular file: refused, not graded")
            elif info.st_size > MAX_NOTEBOOK_BYTES:
                notes.add("refused", f"{quoted(rel)} is larger than {MAX_NOTEBOOK_BYTES // 2 ** 20} MB: refused, "
                                     "not graded (its outputs cleared, it would be read)")
            elif name not in book:
                notes.add("unknown", f"{quoted(rel)} is not the notebook of a chapter with exercises: not graded")
            else:
                found.setdefault(name, []).append(path)
    return found, notes.list()


class Notes:
    """A learner's notes, at most MAX_NOTES of each kind (the rest counted in one more)."""

    def __init__(self):
        self.kinds: dict[str, list[str]] = {}
        self.extra: Counter = Counter()

    def add(self, kind: str, note: str) -> None:
        kept = self.kinds.setdefault(kind, [])
        if len(kept) < MAX_NOTES:
            if note not in kept:
                kept.append(note)
        else:
            self.extra[kind] += 1

    def list(self) -> list[str]:
        out = [note for kept in self.kinds.values() for note in kept]
        return out + [f"{n} more notes like the one before" for kind, n in self.extra.items() if n]


# ----------------------------------------------------------------------------- reading a returned notebook
def read_file_bounded(path: Path) -> bytes:
    """The file's bytes, if it is a regular file within the size limit: opened without following a
    link and without blocking (a FIFO put in its place since it was listed is refused, not waited on)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"is {kind_of(info.st_mode)}, not a regular file")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise Refused(f"is larger than {MAX_NOTEBOOK_BYTES // 2 ** 20} MB")
        chunks, size = [], 0
        while size <= MAX_NOTEBOOK_BYTES:
            chunk = os.read(fd, 2 ** 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_NOTEBOOK_BYTES:
            raise Refused(f"is larger than {MAX_NOTEBOOK_BYTES // 2 ** 20} MB")
        return b"".join(chunks)
    finally:
        os.close(fd)


class Refused(Exception):
    """A returned file the grader does not read; the message says why, in the grader's words."""


def load_notebook(path: Path) -> dict:
    """The notebook as plain JSON data (nothing of it runs, no schema library walks it)."""
    try:
        raw = read_file_bounded(path)
    except OSError as e:
        raise Refused(f"could not be opened ({e.strerror or type(e).__name__})") from None
    with _READING:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError, MemoryError):
            raise Refused("is not a readable notebook (not JSON, or nested too deep)") from None
        if isinstance(data, dict) and data.get("nbformat") in (1, 2, 3):   # an old notebook: nbformat converts it
            try:
                data = json.loads(json.dumps(nbformat.reads(raw.decode("utf-8", "replace"), as_version=4)))
            except Exception:
                raise Refused("is not a readable notebook (an old format that could not be converted)") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise Refused("is not a readable notebook (no list of cells)")
    return data


def code_cells(data: dict, spec: dict) -> tuple[list[dict], list[str]]:
    """The learner's code cells ({source, label}) from a notebook's data, every field checked for its
    type: the first answer cell of each exercise labelled; and notes (the grader's words) on what
    was left out or is doubtful."""
    notes = Notes()
    cells, seen, total = [], set(), 0
    raw_cells = data["cells"]
    if len(raw_cells) > MAX_CELLS:
        notes.add("cells", f"more than {MAX_CELLS} cells: the rest left out")
        raw_cells = raw_cells[:MAX_CELLS]
    for n, cell in enumerate(raw_cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            notes.add("source", f"cell {n}: its source is not text: left out")
            continue
        if len(source) > MAX_CELL_CHARS or total + len(source) > MAX_CODE_CHARS:
            notes.add("source", f"cell {n}: longer than the grader runs ({len(source):,} characters): left out")
            continue
        total += len(source)
        metadata = cell.get("metadata")
        course = metadata.get("course") if isinstance(metadata, dict) else None
        label = None
        if isinstance(course, dict) and course.get("role") == "answer":
            claimed = course.get("exercise")
            if not isinstance(claimed, str):
                notes.add("label", f"cell {n}: an answer cell whose exercise label is not text: run as an ordinary cell")
            elif claimed not in spec["answers"]:
                notes.add("label", f"cell {n}: an answer cell labelled {quoted(claimed)}, which this chapter "
                                   "does not have: run as an ordinary cell")
            elif claimed in seen:
                notes.add("label", f"cell {n}: a second answer cell labelled {claimed}: the first is the answer "
                                   "cell, this one runs as an ordinary cell (the answer's value after it counts)")
            else:
                label = claimed
                seen.add(label)
        cells.append({"source": source, "label": label})
    return cells, notes.list()


def read_returned(path: Path, spec: dict) -> tuple[list[dict] | None, list[str]]:
    """The learner's code cells ({source, label}), each exercise's first answer cell labelled; and
    notes on what the notebook does that a grade should not rest on. None if it is no notebook."""
    try:
        data = load_notebook(path)
    except Refused as e:
        return None, [f"{path.name} {e}"]
    cells, notes = code_cells(data, spec)
    return cells, notes + findings(cells, spec)


def changed_answers(cells: list[dict], spec: dict) -> int:
    """How many of the chapter's answer cells a notebook changed from the stub (how complete it is)."""
    stubs = {c["label"]: c["source"].strip() for c in spec["cells"] if c["label"]}
    return sum(1 for c in cells if c["label"] and c["source"].strip() != stubs.get(c["label"]))


def choose(paths: list[Path], folder: Path, spec: dict) -> tuple[Path, list[dict] | None, list[str]]:
    """One notebook of a chapter when a learner returned several: the one with the most answer cells
    changed from the stub, then the one nearest the learner's folder, then the newest. The notes
    name the one graded and the ones passed over."""
    if len(paths) == 1:
        cells, notes = read_returned(paths[0], spec)
        return paths[0], cells, notes
    read = []
    for path in paths:
        cells, notes = read_returned(path, spec)
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = 0
        read.append((changed_answers(cells, spec) if cells is not None else -1, -len(path.relative_to(folder).parts),
                     mtime, path, cells, notes))
    read.sort(key=lambda r: r[:3], reverse=True)
    best = read[0]
    others = ", ".join(quoted(r[3].relative_to(folder)) for r in read[1:6])
    note = (f"{len(paths)} notebooks named {best[3].name}: graded {quoted(best[3].relative_to(folder))} "
            f"({best[0]} answers changed from the stub; the rule: most answers changed, then nearest the "
            f"learner's folder, then newest); not graded: {others}")
    return best[3], best[4], [note, *best[5]]


VERDICT_HTML = re.compile(r"data-verdict|course-feedback", re.I)
# Where the checks live: their machinery (lib.exercises) and each chapter's checks (lib.chapters).
CHECK_PACKAGES = ("lib.exercises", "lib.chapters")


def findings(cells: list[dict], spec: dict) -> list[str]:
    """What a notebook does that looks like forging a grade, found by reading its code (not running it)."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    trees, unread = [], []
    for cell in cells:
        try:
            trees.append(ast.parse(transform(cell["source"])))
        except (SyntaxError, ValueError, TypeError):
            trees.append(None)
        except (RecursionError, MemoryError):     # `1+1+...` of 100,000 terms: too deep for Python's parser
            trees.append(None)
            unread.append(cell["label"] or "a cell")
    try:
        return [f"{where}: nested too deep to read for forgeries" for where in dict.fromkeys(unread)] \
            + _findings(cells, trees, spec)
    except (RecursionError, MemoryError):
        return ["the notebook's code is nested too deep to read for forgeries"]


def _findings(cells: list[dict], trees: list, spec: dict) -> list[str]:
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
                scratch_root: Path, records: Path) -> dict[str, dict]:
    """Every learner's contained run of one chapter: learner name -> {records, contained, done, crash,
    problem}, `records` the file (in `records`, a folder of the grader's own) that holds what the run
    wrote down, line by line.

    The chapter's work folder is made in `scratch_root` (the grading's own folder, which holds the
    other chapters' work folders too); a run sees neither it nor the class's folder.

    Each learner's cells go to the run in a file of their own (read by their run only, then hidden
    under its working folder), and their answers come back on a pipe of their own, read here in
    pieces: a record longer than `record_bytes` is dropped as it comes, and a run that writes more
    than `run_bytes` in all is read no further, so whatever a run writes, the grader holds at most
    one record of it in memory (the records go to a file; the checker reads them from there)."""
    runs = {learner["name"]: {"records": str(records / f"records-{i}.jsonl"), "contained": None, "done": False,
                              "crash": None, "problem": None, "dropped": 0, "stopped": None}
            for i, learner in enumerate(learners)}
    readers, ends = [], []

    def take(run, line: bytes, first: bool, out) -> None:
        if len(line) <= 2 ** 16:          # the run's own short records: what containment did, done, crash
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                record = None
            if isinstance(record, dict):
                if first and isinstance(record.get("contained"), list):   # written before any learner's line ran
                    run["contained"] = [str(item)[:200] for item in record["contained"][:12]]
                if record.get("done") is True:
                    run["done"] = True
                if "crash" in record:
                    run["crash"] = re.sub(r"[^\w.]", "", str(record.get("crash_type", "")))[:60] or "unknown"
        out.write(line + b"\n")

    def read(fd, name):
        run = runs[name]
        buffer, dropping, total, first = bytearray(), False, 0, True
        with os.fdopen(fd, "rb", buffering=0) as pipe, open(run["records"], "wb") as out:
            while True:
                try:
                    chunk = pipe.read(2 ** 16)
                except OSError:
                    break
                if not chunk:
                    break
                total += len(chunk)
                if total > limits["run_bytes"]:
                    run["problem"] = (f"the run wrote more than the grader reads ({limits['run_bytes'] // 2 ** 20} MB): "
                                      "the rest was not read")
                    break
                start = 0
                while start < len(chunk):
                    nl = chunk.find(b"\n", start)
                    end = len(chunk) if nl < 0 else nl
                    if not dropping:
                        if len(buffer) + end - start > limits["record_bytes"]:
                            dropping = True
                            buffer.clear()
                            run["dropped"] += 1
                        else:
                            buffer += chunk[start:end]
                    if nl < 0:
                        break
                    if not dropping:
                        take(run, bytes(buffer), first, out)
                        first = False
                    buffer.clear()
                    dropping = False
                    start = nl + 1

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
               "hide": [str(submissions.resolve()), str(Path(scratch_root).resolve())]}
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
                                                 timeout=limits["notebook_wall_seconds"] * (len(learners) + 2) + 600)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        for thread in readers:
            thread.join(30)
    walls = None
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and "walls" in item:
            walls = item["walls"]
        if isinstance(item, dict) and isinstance(item.get("timing"), dict):
            CPU.add_chapter(item["timing"])
        if isinstance(item, dict) and item.get("learner") in runs and item.get("problem"):
            runs[item["learner"]]["problem"] = str(item["problem"])[:400]
        if isinstance(item, dict) and item.get("learner") in runs and item.get("stopped") in ("notebook", "cell", "wall"):
            runs[item["learner"]]["stopped"] = item["stopped"]
    for name, run in runs.items():
        if run["crash"]:
            run["problem"] = f"the grader's run failed ({run['crash']})"
        elif not run["problem"] and not run["done"]:
            run["problem"] = ("the run ended before the notebook did (the notebook ended Python, "
                              "or used up its memory, processes or CPU time)")
        if run["dropped"]:
            run["problem"] = "; ".join(filter(None, [run["problem"], f"{run['dropped']} records longer than the "
                                                     f"grader reads ({limits['record_bytes'] // 2 ** 20} MB) dropped"]))
    if process.returncode != 0 and not any(run["done"] or run["contained"] is not None for run in runs.values()):
        last = (stderr.strip().splitlines() or ["no message"])[-1][:300]
        for run in runs.values():
            run["problem"] = f"the chapter's own run failed ({last})"
    if walls:
        for run in runs.values():
            run["walls"] = walls
    return runs


def check_chapter(spec: dict, runs: dict[str, dict], labels: dict[str, list[str]]) -> tuple[list[dict], str | None]:
    """The verdicts of one chapter, from a fresh checker process; and what went wrong with it, if it
    stopped (the learners it gave no verdict are then marked as errors, the rest stand)."""
    job = {"answers": spec["answers"],
           "learners": [{"name": name, "records": run["records"], "labels": labels[name], "stopped": run.get("stopped")}
                        for name, run in runs.items() if name in labels]}
    try:
        result = subprocess.run([sys.executable, str(HERE / "grade_check.py")], input=json.dumps(job),
                                capture_output=True, text=True, env={**clean_env(), "HOME": tempfile.gettempdir()},
                                cwd=str(ROOT), timeout=3600)
    except subprocess.TimeoutExpired:
        return [], "the checker ran past an hour"
    items = []
    for line in result.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("timing"), dict):
            CPU.add("checkers", item["timing"].get("checker"))
        if isinstance(item, dict) and item.get("learner") in labels and item.get("label") in spec["answers"]:
            items.append(item)
    problem = None
    if result.returncode != 0:
        problem = "the checker stopped: " + ((result.stderr.strip().splitlines() or ["no message"])[-1])[:200]
    return items, problem


def grade_chapter(nb_name: str, handed: dict[str, dict], learners: dict[str, "Learner"], submissions: Path,
                  limits: dict, jobs: int, scratch_root: Path) -> None:
    """Grade one chapter for every learner. Whatever one learner returned costs only their own row:
    each step that reads or checks a learner's work catches its own failure and says so in a note."""
    spec = chapters()[nb_name]
    to_run, labels = [], {}
    for name, notebooks_of in handed.items():
        learner = learners[name]
        paths = notebooks_of.get(nb_name)
        if not paths:
            learner.verdicts.update({label: "missing" for label in spec["order"]})
            learner.notes.append(f"{nb_name} not returned")
            continue
        path = paths[0]
        try:
            path, cells, notes = choose(paths, submissions / name, spec)
        except Exception as e:     # a learner's file the reading above did not foresee: their row only
            cells, notes = None, [f"{nb_name} could not be read ({type(e).__name__})"]
        learner.notes.extend(notes)
        try:
            learner.returned_at[nb_name] = os.lstat(path).st_mtime
        except (OSError, NameError):
            pass
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
    records = Path(tempfile.mkdtemp(prefix="records-", dir=scratch_root))
    try:
        runs = run_chapter(spec, to_run, submissions, limits, jobs, scratch_root, records)
        for name in labels:
            run = runs[name]
            if run.get("problem"):
                learners[name].notes.append(f"{nb_name}: {run['problem']}")
            missing = list(run.get("contained") or []) + list(run.get("walls") or [])
            if missing:
                learners[name].notes.append(f"{nb_name}: ran with {'; '.join(map(str, missing))}")
                UNCONTAINED.update(map(str, missing))
        items, problem = check_chapter(spec, runs, labels)
    finally:
        shutil.rmtree(records, ignore_errors=True)
    given = set()
    for item in items:
        learner = learners[item["learner"]]
        given.add((item["learner"], item["label"]))
        learner.verdicts[item["label"]] = item["verdict"] if item["verdict"] in VERDICTS else "error"
        learner.messages[item["label"]] = str(item.get("message") or "")[:1000]
        if item.get("note"):
            learner.notes.append(f"{item['label']}: {str(item['note'])[:300]}")
    for name, present in labels.items():
        lost = [label for label in present if (name, label) not in given]
        if lost:
            learners[name].verdicts.update(dict.fromkeys(lost, "error"))
            learners[name].notes.append(f"{nb_name}: {problem or 'the checker gave no verdict'} "
                                        f"({len(lost)} answers not checked)")


UNCONTAINED: set[str] = set()   # what some run could not be walled off from, in words (for the warning)


class CpuTime:
    """Where the grading's CPU time went, as its processes report it (the grader's own summary)."""

    def __init__(self):
        self.seconds: Counter = Counter()
        self.runs = 0
        self.lock = threading.Lock()

    def add(self, what: str, seconds) -> None:
        if isinstance(seconds, (int, float)) and 0 <= seconds < 1e7:
            with self.lock:
                self.seconds[what] += seconds

    def add_chapter(self, timing: dict) -> None:
        for what in ("start", "claims", "cells"):
            self.add(f"chapter {what}", timing.get(what))
        runs = [r for r in timing.get("runs", []) if isinstance(r, (int, float))] if isinstance(timing.get("runs"), list) else []
        self.add("runs", sum(runs))
        with self.lock:
            self.runs += len(runs)

    def summary(self) -> str:
        s = self.seconds
        chapters = s["chapter start"] + s["chapter claims"] + s["chapter cells"]
        return (f"CPU time: the chapters' own processes {chapters:.0f} s (start-up {s['chapter start']:.0f} s, "
                f"claims {s['chapter claims']:.0f} s, cells {s['chapter cells']:.0f} s), the learners' runs "
                f"{s['runs']:.0f} s ({self.runs} runs, {s['runs'] / max(self.runs, 1):.1f} s each), the checkers "
                f"{s['checkers']:.0f} s")


CPU = CpuTime()

# A learner's run may take WALL_FACTOR times its notebook's CPU limit on the clock: the CPU limit is
# what stops a notebook that computes too long, whatever else loads the machine; the clock's stops
# only one that waits, and what it stops is timed out, not wrong (grade_run.Watch).
WALL_FACTOR = 4
LIMITS = {"cell_cpu_seconds": 60, "chapter_cell_cpu_seconds": 600, "notebook_seconds": 300, "memory_mb": 2048,
          "scratch_mb": 256, "record_bytes": 8 * 2 ** 20, "run_bytes": 64 * 2 ** 20, "processes": 128}


def grade(submissions: Path, cell_timeout: float = 60, notebook_timeout: float = 300, jobs: int = 2,
          chapters_wanted: list[str] | None = None, memory_mb: int = 2048, wall_timeout: float | None = None) -> tuple[list[Learner], list[str]]:
    """Grade every learner's folder; returns the learners and the exercise labels (the columns)."""
    folders = sorted(p for p in submissions.iterdir()
                     if p.is_dir() and not p.name.startswith(".") and p.name != FEEDBACK)   # the grader's own folder
    if not folders:
        raise SystemExit(f"{submissions} holds no learner's folder (one folder per learner, with their notebooks)")
    book = assignment()
    wanted = chosen_chapters(chapters_wanted) if chapters_wanted else None   # a name no chapter has: one line, first
    handed, found_notes = {}, {}
    for f in folders:
        handed[f.name], found_notes[f.name] = returned(f, book)
    if not wanted:  # the chapters that anyone returned
        wanted = [n for n in book if any(n in notebooks_of for notebooks_of in handed.values())]
    if not wanted:
        raise SystemExit(f"no learner in {submissions} returned a notebook with exercises "
                         "(expected the names `make student` writes, e.g. search-by-hand.ipynb)")
    columns = [label for name in wanted for label in book[name]]
    learners = {name: Learner(name, notes=list(found_notes[name])) for name in handed}
    limits = {**LIMITS, "cell_cpu_seconds": cell_timeout, "notebook_seconds": notebook_timeout,
              "notebook_wall_seconds": wall_timeout or WALL_FACTOR * notebook_timeout,
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
        futures = {nb_name: pool.submit(grade_chapter, nb_name, handed, learners, submissions, limits, per_chapter,
                                        Path(scratch_root)) for nb_name in wanted}
        for nb_name, future in futures.items():
            try:
                future.result()
            except Exception as e:   # the grader's own failure on one chapter: that chapter's columns only
                for learner in learners.values():
                    for label in book[nb_name]:
                        learner.verdicts.setdefault(label, "error")
                    learner.notes.append(f"{nb_name}: the grader failed on this chapter ({type(e).__name__})")
    return list(learners.values()), columns


def own_peak_mb() -> float:
    """This process's peak resident memory in MB. VmHWM, not ru_maxrss: the rusage peak is kept across
    exec, so a grader started from a process that once held a large model would report that peak."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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


class _Opaque:
    """An answer of a type this test does not read (a class of the notebook's own): equal to nothing."""

    __hash__ = object.__hash__

    def __eq__(self, other):
        return False

    def __repr__(self):
        return "an answer that is not a plain number, word, list, array or function"


def _plain(value, depth=0):
    """The answer rebuilt from plain built-in types only: a number, word, list, tuple, dict, numpy array
    or tensor (as an array), a function, or a shipped model (loaded again by its name). Anything else,
    a subclass's comparison or an object whose `==` always says yes, is read as the value it holds or
    as an answer equal to nothing."""
    import functools
    import types

    import numpy as np

    if depth > 12:
        return _Opaque()
    if value is None or value is Ellipsis or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return _plain(value.item(), depth + 1)
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        value = value.detach().cpu().double().numpy()
    if isinstance(value, np.ndarray):
        return np.array(np.ndarray.tolist(value)) if value.dtype.kind in "biuf" else _Opaque()
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return tuple(_plain(v, depth + 1) for v in tuple.__iter__(value))
    if isinstance(value, dict):
        return {{_plain(k, depth + 1): _plain(v, depth + 1) for k, v in dict.items(value)}}
    if type(value) in (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial):
        return value
    name = getattr(value, "name", None)
    if type(value).__module__.startswith("lib.") and hasattr(value, "vocab") and isinstance(name, str):
        import lib

        return lib.load(str.__str__(name))
    return _Opaque()


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


def chosen_chapters(wanted: list[str] | None) -> list[str]:
    """The notebook names of the chapters asked for (with or without .ipynb), or of every chapter with
    exercises; a name no chapter has stops with one line that lists them."""
    specs = chapters()
    wanted = [n.strip() for n in wanted or [] if n.strip()]
    names = [n if n.endswith(".ipynb") else n + ".ipynb" for n in wanted] if wanted else list(specs)
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise SystemExit(f"no exercises in {', '.join(unknown)}; chapters with exercises: "
                         + ", ".join(n.removesuffix(".ipynb") for n in specs))
    return names


def export_otter(out: Path, wanted: list[str] | None = None) -> list[Path]:
    """One Otter-Grader autograder per chapter: OUT/CHAPTER/autograder.zip, a test file per exercise
    that runs the course's check on the learner's answer (`otter run -a autograder.zip NOTEBOOK`
    grades a returned notebook without Docker; on Gradescope the zip is the autograder)."""
    specs = chapters()
    names = chosen_chapters(wanted)
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
installs the course (its requirements are in the zip). `otter run` executes the learner's notebook
unconfined, with your rights (your files, your environment, the network): run it in a container or a
throwaway account. Otter runs the checks in the learner's own kernel, after the learner's code (a
patched `importlib.reload` keeps patched checks): for marks that a dishonest notebook cannot forge,
grade with `make grade` (see instructors.md).
"""


def open_answers(columns: list[str]) -> set[str]:
    """The exercises whose answer is an investigation (kind `investigate`): the check reads the value
    the learner found; the reasoning behind it is for a person to read."""
    return {e.label for e in catalogue(ROOT) if e.kind == "investigate" and e.label in columns}


FLAGS = ("writes verdict HTML", "check call", "redefines the check", "patches", "graded the value",
         "notebooks named", "a second answer cell", "link")


def to_review(learner: "Learner", columns: list[str], open_labels: set[str]) -> str:
    """What a person should read in this learner's notebooks: their answered open exercises, every
    exercise a time limit stopped (to grade again), and every exercise a note flags (a forgery
    found, an answer taken from below its cell)."""
    answered = [c for c in columns if (c in open_labels and learner.verdicts.get(c) not in ("missing", "not answered"))
                or learner.verdicts.get(c) == TIMED_OUT]
    flagged = [c for c in columns if any(note.startswith(c + ":") and any(f in note for f in FLAGS)
                                         for note in learner.notes)]
    whole = any(any(f in note for f in FLAGS) and not any(note.startswith(c + ":") for c in columns)
                for note in learner.notes)
    return " ".join(dict.fromkeys(answered + flagged + (["notebook"] if whole else [])))


def mark_late(learners: list["Learner"], due: datetime | None) -> None:
    """A notebook whose file was last changed after the due date is late: noted, and counted in the
    `late` column (the file's time, as the returned folder keeps it: collect with a tool that keeps
    it, such as a hub's collect, `cp -p` or `rsync -t`)."""
    if due is None:
        return
    for learner in learners:
        for name, when in learner.returned_at.items():
            if when > due.timestamp():
                hours = (when - due.timestamp()) / 3600
                learner.late.append(name)
                learner.notes.append(f"{name}: late, changed {datetime.fromtimestamp(when, due.tzinfo):%Y-%m-%d %H:%M}, "
                                     f"{hours:.1f} h after the due date")


def write_gradebook(path: Path, learners: list[Learner], columns: list[str]) -> None:
    """One row per learner: each exercise's verdict (a point each when correct: no check has degrees,
    so there is no partial credit), the points, the exercises to read by hand, the notebooks
    returned late, and the notes."""
    open_labels = open_answers(columns)
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow([as_text(c) for c in ["learner", *columns, "correct", "of", "to review", "late", "notes"]])
        for learner in learners:
            out.writerow([as_text(c) for c in [learner.name, *(learner.verdicts.get(c, "missing") for c in columns),
                          learner.count("correct"), len(columns), to_review(learner, columns, open_labels),
                          " ".join(learner.late), "; ".join(learner.notes)]])


def write_feedback(folder: Path, learners: list[Learner], columns: list[str]) -> None:
    """FOLDER/LEARNER.md for each learner: per exercise, the verdict and the check's message (the
    sentence their own kernel shows for that answer), and the notes about it."""
    folder.mkdir(exist_ok=True)
    titles = {e.label: e for e in catalogue(ROOT)}
    for learner in learners:
        lines = [f"# Feedback for {learner.name}", "",
                 f"{learner.count('correct')} of {len(columns)} exercises correct.", ""]
        chapter = None
        for label in columns:
            exercise = titles.get(label)
            if exercise and exercise.title != chapter:
                chapter = exercise.title
                lines += [f"## {chapter}", ""]
            verdict = learner.verdicts.get(label, "missing")
            message = learner.messages.get(label)
            lines.append(f"- **{label}**: {verdict}" + (f": {message}" if message else ""))
            lines += [f"  - {note.split(': ', 1)[1]}" for note in learner.notes if note.startswith(label + ": ")]
        general = [note for note in learner.notes if not any(note.startswith(c + ": ") for c in columns)]
        if general:
            lines += ["", "## Notes", "", *[f"- {note}" for note in general]]
        (folder / f"{learner.name}.md").write_text("\n".join(lines) + "\n")


def write_answer_key(out: Path, wanted: list[str] | None = None) -> Path:
    """OUT/answer-key.md: for the instructor, every exercise of the chosen chapters by its label, with
    its kind, its task, the check that judges it and the worked solution from the chapter's source."""
    specs = chapters()
    names = chosen_chapters(wanted)
    by_label = {e.label: e for e in catalogue(ROOT)}
    lines = ["# Answer key (for the instructor: not for learners)", ""]
    for name in names:
        spec = specs[name]
        worked = notebooks.solution_code(ROOT / (spec["doc"] + ".md"))
        lines += [f"## {by_label[spec['order'][0]].title} ({name})", ""]
        for label in spec["order"]:
            e, stub = by_label[label], spec["answers"][label]
            lines += [f"### {label} ({e.kind_label or 'no kind'})", "", e.task, "",
                      f"Judged by `{e.module}.checks.{stub['check']}`. Worked solution:", "",
                      "```python", worked.get(label, "(none in the chapter's source)").rstrip(), "```", ""]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "answer-key.md"
    path.write_text("\n".join(lines))
    return path


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


def key_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade key", description="Write the answer key for the instructor.")
    parser.add_argument("out", help="the folder to write answer-key.md in (keep it away from learners)")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: every chapter with exercises)")
    args = parser.parse_args(argv)
    try:
        path = write_answer_key(Path(args.out), args.chapters.split(",") if args.chapters else None)
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"answer key: {path}")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    if argv[:1] == ["key"]:
        return key_main(argv[1:])
    parser = argparse.ArgumentParser(prog="grade", description="Run the notebooks learners returned; write a gradebook.")
    parser.add_argument("submissions", help="a folder with one folder per learner")
    parser.add_argument("--cell-timeout", type=float, default=60,
                        help="CPU seconds one of a learner's cells may run (default 60)")
    parser.add_argument("--notebook-timeout", type=float, default=300,
                        help="CPU seconds one notebook may run (default 300)")
    parser.add_argument("--wall-timeout", type=float, help=f"seconds on the clock one notebook may take (default "
                        f"{WALL_FACTOR} times --notebook-timeout): what it stops is marked timed out, not wrong")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run side by side (default 2)")
    parser.add_argument("--chapters", help="only these chapters, comma-separated (default: those returned)")
    parser.add_argument("--due", help="the due date, as 2026-12-01T23:59 (local time) or with an offset: a notebook "
                        "changed after it is marked late")
    parser.add_argument("--memory", type=int, default=2048,
                        help="MB of address space a learner's run may add to the chapter's (default 2048)")
    args = parser.parse_args(argv)
    folder = Path(args.submissions)
    if not folder.is_dir():
        print(f"error: {folder} is not a folder; give the folder that holds one folder per learner", file=sys.stderr)
        return 2
    if args.cell_timeout <= 0 or args.notebook_timeout <= 0 or (args.wall_timeout is not None and args.wall_timeout <= 0) \
            or args.jobs < 1 or args.memory < 64:
        print("error: time limits must be positive numbers of seconds, --jobs at least 1 and --memory at least 64 (MB)",
              file=sys.stderr)
        return 2
    due = None
    if args.due:
        try:
            due = datetime.fromisoformat(args.due)
        except ValueError:
            print(f"error: --due {args.due!r} is not a date; give it as 2026-12-01T23:59 or 2026-12-01", file=sys.stderr)
            return 2
        due = due if due.tzinfo else due.astimezone()
    start = time.perf_counter()
    try:
        learners, columns = grade(folder, args.cell_timeout, args.notebook_timeout, args.jobs,
                                  args.chapters.split(",") if args.chapters else None, args.memory, args.wall_timeout)
    except SystemExit as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    mark_late(learners, due)
    write_gradebook(folder / GRADEBOOK, learners, columns)
    write_feedback(folder / FEEDBACK, learners, columns)
    if UNCONTAINED:
        unwalled = any(m.startswith(("no namespaces", "files not walled off")) for m in UNCONTAINED)
        print("warning: learners' runs were not fully contained here (" + "; ".join(sorted(UNCONTAINED)) + "); "
              + ("a run could reach what it was not walled off from (without namespaces: every file your account "
                 "can write, the course's checks and this gradebook among them, and the network), so these marks "
                 "are not protected" if unwalled else "a run was held only by the walls it had")
              + ": see 'What is contained where' in instructors.md", file=sys.stderr)
    print(f"graded {len(learners)} learners on {len(columns)} exercises in {time.perf_counter() - start:.0f} s; "
          f"the grader's own peak memory {own_peak_mb():.0f} MB (budget {BUDGETS['grade_memory_mb']:.0f} MB, "
          "its runs not counted)")
    print(summary(learners, columns))
    print(CPU.summary())
    print(f"gradebook: {folder / GRADEBOOK}; each learner's feedback: {folder / FEEDBACK}/LEARNER.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
