"""A learner's returned files, read as bounded data: nothing of them runs here.

Which files a learner's folder holds (links, FIFOs, devices and sockets refused, never opened; files
too large refused: `returned`, in the grader's process). Each notebook is then read in a process of
its own, the reader (`Reader`, this file run as `python scripts/grading/reading.py --reader`), which a
learner's file cannot take the grader's memory with: its memory and its CPU for one notebook are
limited, and a notebook past them is noted, not graded, and costs no other learner anything. The
reader reads the notebook as plain JSON with every field checked for its type, finds each answer cell
by the exercise label in its metadata (`course.exercise`, written by `make student`), or by its
content where the label is missing, reads each cell's code alone (one syntax tree at a time) for what
looks like forging a grade (`findings`) and for the cells that bind an answer again below its answer
cell (a copy), and writes the learner's cells to a file for their run: the grader holds none of them.
"""
from __future__ import annotations

import ast
import json
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

# What a returned file may be, read as data: beyond these it is refused (or a cell left out) with a note.
MAX_NOTEBOOK_BYTES = 16 * 2 ** 20     # a notebook file (its outputs included)
MAX_CELLS = 2000                      # cells in one notebook
MAX_CELL_CHARS = 2 ** 20              # one code cell's source
MAX_CODE_CHARS = 4 * 2 ** 20          # every code cell of one notebook together
MAX_ENTRIES = 20_000                  # files and folders looked at in one learner's folder
MAX_NOTES = 6                         # notes of one kind per learner (the rest counted)
SKIPPED_FOLDERS = {".ipynb_checkpoints", "__pycache__", ".git"}
# A cell longer than this is run, but not read for forgeries (its syntax tree alone would take the
# reader hundreds of MB and seconds: a list literal of a MB is a million nodes); it is listed to review.
MAX_READ_CHARS = 128 * 2 ** 10
# The reader's limits: memory beyond what it holds at rest, and CPU for one notebook.
READER_MEMORY_MB = 1024
READER_CPU_SECONDS = 30
READER_WALL_SECONDS = 300             # past this on the clock (the machine far too busy) a notebook is not read


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


def returned(folder: Path, book: dict) -> tuple[dict[str, list[Path]], list[str]]:
    """A learner's notebooks by file name, found at any depth, each name with every regular file of
    it (checkpoints skipped); and notes on what was refused: links (never followed), FIFOs, devices
    and sockets (never opened), files too large, names no chapter has. Nothing here opens a file."""
    found: dict[str, list[Path]] = {}
    notes = Notes()
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
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError, MemoryError):
        raise Refused("is not a readable notebook (not JSON, or nested too deep)") from None
    if isinstance(data, dict) and data.get("nbformat") in (1, 2, 3):   # an old notebook: nbformat converts it
        import nbformat  # deferred: only an old notebook needs it

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
        label, copy_of = None, None
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
                copy_of = claimed
            else:
                label = claimed
                seen.add(label)
        cells.append({"source": source, "label": label, "n": n, "copy_of": copy_of})
    return cells, notes.list()


def changed_answers(cells: list[dict], spec: dict) -> int:
    """How many of the chapter's answer cells a notebook changed from the stub (how complete it is)."""
    stubs = {c["label"]: c["source"].strip() for c in spec["cells"] if c["label"]}
    return sum(1 for c in cells if c["label"] and c["source"].strip() != stubs.get(c["label"]))


VERDICT_HTML = re.compile(r"data-verdict|course-feedback", re.I)
# Where the checks live: their machinery (lib.exercises) and each chapter's checks (lib.chapters).
CHECK_PACKAGES = ("lib.exercises", "lib.chapters")
MAX_FACTS = 1000                      # names of one kind kept from one cell


def cell_facts(source: str, transform, answer_names: set, stub_calls: set) -> dict:
    """What one cell's code does that the grader needs, read from its syntax tree alone (the tree is
    dropped before the next cell is read, so the reader holds one at a time): the names it gives the
    checks' packages, its check calls, whether it redefines `check` or patches the checks, builtins or
    lib, and which answer names it binds at its top level."""
    facts = {"html": bool(VERDICT_HTML.search(source)), "read": False, "deep": False, "long": False,
             "aliases": set(), "check_calls": 0, "stub_calls": set(), "check_fns": set(), "redefines": False,
             "patch_kinds": set(), "patch_roots": set(), "binds": set()}
    if len(source) > MAX_READ_CHARS:
        facts["long"] = True
        return facts
    try:
        tree = ast.parse(transform(source))
    except (SyntaxError, ValueError, TypeError):
        return facts
    except (RecursionError, MemoryError):     # `1+1+...` of 100,000 terms: too deep for Python's parser
        facts["deep"] = True
        return facts
    try:
        _read_tree(tree, facts, answer_names, stub_calls)
    except (RecursionError, MemoryError):
        facts["deep"] = True
        return facts
    facts["read"] = True
    return facts


def _read_tree(tree, facts: dict, answer_names: set, stub_calls: set) -> None:
    for statement in tree.body:                       # the names the cell binds at its top level
        for node in _top_level(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in answer_names:
                facts["binds"].add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in answer_names:
                facts["binds"].add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                facts["binds"] |= {(a.asname or a.name).split(".")[0] for a in node.names} & answer_names
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            facts["aliases"] |= {a.asname for a in node.names if a.asname and a.name.startswith(CHECK_PACKAGES)}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("lib.exercises", "lib")):
            if (node.module or "").startswith(CHECK_PACKAGES) or any(a.name in ("exercises", "chapters") for a in node.names):
                facts["aliases"] |= {a.asname or a.name for a in node.names}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == "check":
            facts["check_calls"] += 1
            if len(facts["check_fns"]) < MAX_FACTS:
                facts["check_fns"].add(node.func.attr)
            dump = ast.dump(node)
            if dump in stub_calls:
                facts["stub_calls"].add(dump)
        targets = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == "check":
            facts["redefines"] = True
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                module = node.module if isinstance(node, ast.ImportFrom) else alias.name
                if (alias.asname or alias.name) == "check" and not (module or "").startswith(CHECK_PACKAGES):
                    facts["redefines"] = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
                and node.args:
            _patched(node.args[0], facts)
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "check":
                facts["redefines"] = True
            elif isinstance(target, (ast.Attribute, ast.Subscript)):
                _patched(target, facts)


def _top_level(statement):
    """The nodes of a top-level statement that bind names in the notebook's namespace (not those inside
    a function, a class or a comprehension)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
        yield statement
        return
    stack = [statement]
    scoped = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
              ast.DictComp, ast.GeneratorExp)
    while stack:
        node = stack.pop()
        yield node
        stack += [child for child in ast.iter_child_nodes(node) if not isinstance(child, scoped)
                  or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _patched(node, facts: dict) -> None:
    """What an assignment to `node` (or a setattr on it) patches: the checks, builtins or lib; a root
    name that may be an alias of the checks is kept to decide once every cell's aliases are known."""
    name = _dotted(node)
    if name is None:
        return
    root = name.split(".")[0]
    if name.startswith(CHECK_PACKAGES):
        facts["patch_kinds"].add("lib.exercises")
    elif root in ("builtins", "__builtins__"):
        facts["patch_kinds"].add("builtins")
    elif root == "lib":
        facts["patch_kinds"].add("lib")
    elif len(facts["patch_roots"]) < MAX_FACTS:
        facts["patch_roots"].add(root)


def findings(cells: list[dict], facts: list[dict], spec: dict) -> list[str]:
    """What a notebook does that looks like forging a grade, found by reading its code (not running it)."""
    aliases = {"check", "exercises", "chapters"}.union(*(f["aliases"] for f in facts))
    notes: dict[str, None] = {}
    for f in facts:
        if f["deep"]:
            notes[f"{f['where']}: nested too deep to read for forgeries"] = None
        if f["long"]:
            notes[f"{f['where']}: longer than the grader reads for forgeries ({MAX_READ_CHARS // 1024} kB): "
                  "run, not read"] = None
    for cell, f in zip(cells, facts):
        where = f["where"]
        if f["html"]:
            notes[f"{where}: writes verdict HTML of its own"] = None
        if not f["read"]:
            continue
        stub = spec["answers"].get(cell["label"]) if cell["label"] else None
        if stub is not None and stub["call"] not in f["stub_calls"]:
            notes[f"{where}: check call {'rewritten' if f['check_calls'] else 'removed'}"] = None
        if f["redefines"]:
            notes[f"{where}: redefines the check"] = None
        kinds = set(f["patch_kinds"]) | ({"lib.exercises"} if f["patch_roots"] & aliases else set())
        for kind in ("lib.exercises", "builtins", "lib"):
            if kind in kinds:
                notes[f"{where}: patches {kind}"] = None
    return list(notes)


def find_by_content(cells: list[dict], facts: list[dict], spec: dict, chapter_sources: set) -> list[str]:
    """Answer cells found by their content where the label is missing (an answer typed into a fresh
    cell, the stub deleted): for each exercise with no labelled cell, the first cell of the learner's
    own between the neighbouring exercises' answer cells that makes the stub's check call, or calls
    the same check, or binds one of its answers' names that no other exercise of the chapter uses. The cell is labelled with the exercise; the notes say so (and it is listed to review)."""
    notes = []
    names = {label: answer_names(stub) for label, stub in spec["answers"].items()}
    shared = Counter(n for label_names in names.values() for n in label_names)
    for position, label in enumerate(spec["order"]):
        if any(c["label"] == label for c in cells):
            continue
        placed = {c["label"]: i for i, c in enumerate(cells) if c["label"]}
        before = [placed[o] for o in spec["order"][:position] if o in placed]
        after = [placed[o] for o in spec["order"][position + 1:] if o in placed]
        low, high = (max(before) if before else -1), (min(after) if after else len(cells))
        stub = spec["answers"][label]
        tests = [("it makes the stub's check call", lambda f: stub["call"] in f["stub_calls"]),
                 (f"it calls check.{stub['check']}", lambda f: stub["check"] in f["check_fns"])]
        own = [n for n in names[label] if shared[n] == 1]
        if own:
            tests.append((f"it binds {' or '.join(f'`{n}`' for n in own)}", lambda f: bool(set(own) & f["binds"])))
        for why, test in tests:
            found = next((i for i in range(low + 1, high) if cells[i]["label"] is None and facts[i]["read"]
                          and cells[i]["source"].strip() not in chapter_sources and test(facts[i])), None)
            if found is not None:
                cells[found]["label"] = label
                notes.append(f"{label}: no answer cell labelled {label}: graded cell {cells[found]['n']}, found "
                             f"by its content ({why})")
                break
    return notes


def copies(cells: list[dict], facts: list[dict], spec: dict, chapter_sources: set) -> dict[str, int]:
    """For each exercise, the cell of the learner's own below its answer cell, within its span (up to
    the next answer cell that binds one of its names), after which the run takes the answers' values again
    (the checker counts it if the answer cell's is not right): a copy of the answer cell, an answer put
    right below a wrong draft. The last such cell that binds one of the answers' names and is a copy of
    the answer cell (its label with it) or calls the exercise's check; else the last that binds one."""
    names = {label: set(answer_names(stub)) for label, stub in spec["answers"].items()}
    found = {}
    for i, cell in enumerate(cells):
        label = cell["label"]
        if label not in names:
            continue
        name, last, last_like = names[label], None, None
        for j in range(i + 1, len(cells)):
            if cells[j]["label"] in names and names[cells[j]["label"]] & name:
                break
            if cells[j]["label"] is None and name & facts[j]["binds"] \
                    and cells[j]["source"].strip() not in chapter_sources:
                last = j
                if cells[j].get("copy_of") == label or spec["answers"][label]["check"] in facts[j]["check_fns"]:
                    last_like = j
        chosen = last_like if last_like is not None else last
        if chosen is not None:
            found[label] = chosen
    return found


def answer_names(stub: dict) -> list[str]:
    """The names the check call takes as answers (grading/answers.py's, which the reader does not import)."""
    return [a["name"] for a in stub["args"] if a["role"] == "answer"]


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


def read_for_grading(path: Path, spec: dict, out: Path) -> dict:
    """Read one returned notebook for its run: its code cells, labelled (by metadata, or by content),
    written to `out` for the run; and what the grader needs to know: the notes, the labels present,
    how many answers changed from the stub, where the notebook departs from the chapter, the copies.
    {"refused": why} if it is no notebook the grader reads."""
    from IPython.core.inputtransformer2 import TransformerManager  # deferred: the reader's alone

    try:
        data = load_notebook(path)
    except Refused as e:
        return {"refused": f"{path.name} {e}"}
    cells, notes = code_cells(data, spec)
    del data
    transform = TransformerManager().transform_cell
    names = {n for stub in spec["answers"].values() for n in answer_names(stub)}
    stub_calls = {stub["call"] for stub in spec["answers"].values()}
    facts = []
    for cell in cells:          # one syntax tree at a time
        f = cell_facts(cell["source"], transform, names, stub_calls)
        f["where"] = cell["label"] or "a cell"
        facts.append(f)
    chapter_sources = {c["source"].strip() for c in spec["cells"] if not c["label"]}
    notes += findings(cells, facts, spec)
    notes += find_by_content(cells, facts, spec, chapter_sources)
    out.write_text(json.dumps([{"source": c["source"], "label": c["label"]} for c in cells]))
    return {"cells_file": str(out), "notes": notes, "labels": [c["label"] for c in cells if c["label"]],
            "changed": changed_answers(cells, spec), "start": departs(cells, spec["cells"]),
            "copies": copies(cells, facts, spec, chapter_sources)}


class OutOfTime(Exception):
    """The reader's CPU for one notebook ran out."""


def limit_memory(megabytes: int) -> None:
    """This process's address space: what it holds now and `megabytes` more (the reader's, the checker's)."""
    vm = next((int(line.split()[1]) * 1024 for line in Path("/proc/self/status").read_text().splitlines()
               if line.startswith("VmSize:")), 0)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (vm + megabytes * 2 ** 20, vm + megabytes * 2 ** 20))
    except (ValueError, OSError):
        pass


class cpu_limit:
    """Its block within `seconds` more of this process's CPU (RLIMIT_CPU's soft limit, moved on for each
    notebook the reader reads, each answer the checker checks): past it, SIGXCPU raises `error`. A
    write check's own timer (ITIMER_PROF) stays the learner function's."""

    def __init__(self, seconds: float, error: type[BaseException]):
        self.seconds, self.error = seconds, error

    def _raise(self, signum, frame):
        raise self.error()

    def __enter__(self):
        used = resource.getrusage(resource.RUSAGE_SELF)
        self.hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        soft = int(used.ru_utime + used.ru_stime + self.seconds) + 1
        if self.hard != resource.RLIM_INFINITY:
            soft = min(soft, self.hard)
        try:
            signal.signal(signal.SIGXCPU, self._raise)
            resource.setrlimit(resource.RLIMIT_CPU, (soft, self.hard))
        except (ValueError, OSError):
            pass
        return self

    def __exit__(self, *exc):
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (self.hard, self.hard))
        except (ValueError, OSError):
            pass
        return False


def reader_main() -> int:
    """The reader process: one request per line on its input ({path, spec, out}), one answer per line
    on its output. Its memory is limited once (READER_MEMORY_MB beyond what it holds at start), its
    CPU for each notebook (READER_CPU_SECONDS); a notebook past either gets a note, not a crash."""
    import IPython.core.inputtransformer2  # noqa: F401  deferred: the reader's alone, loaded before its limits

    limit_memory(READER_MEMORY_MB)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            with cpu_limit(READER_CPU_SECONDS, OutOfTime):
                answer = read_for_grading(Path(request["path"]), request["spec"], Path(request["out"]))
        except OutOfTime:
            answer = {"refused": f"{Path(request['path']).name} took longer than the grader reads a notebook "
                                 f"({READER_CPU_SECONDS} s of CPU): not graded"}
        except MemoryError:
            answer = {"refused": f"{Path(request['path']).name} needs more memory than the grader reads a notebook "
                                 f"with ({READER_MEMORY_MB} MB): not graded"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


class Reader:
    """The grader's side of the reader process: one at a time, started on first use and again after a
    notebook ended it (its memory limit reached in the parser's own code, say), which that notebook's
    note says."""

    def __init__(self, env: dict | None = None):
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None
        self.env = env

    def read(self, path: Path, spec: dict, out: Path) -> dict:
        request = json.dumps({"path": str(path), "spec": {k: spec[k] for k in ("cells", "answers", "order")},
                              "out": str(out)}) + "\n"
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self.process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--reader"],
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL, text=True, env=self.env)
            try:
                self.process.stdin.write(request)
                self.process.stdin.flush()
                line = _read_line(self.process.stdout, READER_WALL_SECONDS)
            except (OSError, ValueError):
                line = None
            if line:
                return json.loads(line)
            self.close()
        return {"refused": f"{path.name} ended the grader's reading of it (past its limits: {READER_MEMORY_MB} MB "
                           f"of memory, {READER_CPU_SECONDS} s of CPU): not graded"}

    def close(self) -> None:
        if self.process is not None:
            try:
                self.process.kill()
                self.process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            for stream in (self.process.stdin, self.process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.process = None


def _read_line(stream, seconds: float) -> str | None:
    """One line from the reader, or None if it ended or took longer than `seconds` on the clock."""
    import selectors  # deferred: the grader's side only

    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(seconds):
            return None
    return stream.readline() or None


def choose(paths: list[Path], folder: Path, spec: dict, reader: Reader, work: Path, tag: str) -> tuple[Path, dict]:
    """One notebook of a chapter when a learner returned several: the one with the most answer cells
    changed from the stub, then the one nearest the learner's folder, then the newest. The notes
    name the one graded and the ones passed over. Returns the path and what the reader said of it."""
    read = []
    for j, path in enumerate(paths):
        info = reader.read(path, spec, work / f"cells-{tag}-{j}.json")
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = 0
        read.append((info.get("changed", -1) if "refused" not in info else -1, -len(path.relative_to(folder).parts),
                     mtime, path, info))
    read.sort(key=lambda r: r[:3], reverse=True)
    best = read[0]
    for other in read[1:]:
        if other[4].get("cells_file"):
            Path(other[4]["cells_file"]).unlink(missing_ok=True)
    info = dict(best[4])
    if len(paths) > 1:
        others = ", ".join(quoted(r[3].relative_to(folder)) for r in read[1:6])
        note = (f"{len(paths)} notebooks named {best[3].name}: graded {quoted(best[3].relative_to(folder))} "
                f"({best[0]} answers changed from the stub; the rule: most answers changed, then nearest the "
                f"learner's folder, then newest); not graded: {others}")
        info["notes"] = [note, *info.get("notes", [])]
    return best[3], info


if __name__ == "__main__" and sys.argv[1:] == ["--reader"]:
    sys.path.pop(0)         # not this folder: its modules' names are the grader's, not the reader's
    sys.exit(reader_main())
