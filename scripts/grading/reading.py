"""A learner's returned files, read as bounded data: nothing of them runs here.

Which files a learner's folder holds (links, FIFOs, devices and sockets refused, never opened; files
too large refused), each notebook read as plain JSON with every field checked for its type, each
answer cell found by the exercise label in its metadata (`course.exercise`, written by `make
student`), and what the code does that looks like forging a grade, found by reading it (`findings`).
"""
from __future__ import annotations

import ast
import json
import os
import re
import stat
import threading
from collections import Counter
from pathlib import Path

import nbformat

from grading.chapters import assignment

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
