"""Words that point at code are true: every path (`lib/...`, `tests/...`, `scripts/...`, `chapters/...`,
`js/...`, `_ext/...`, `data/...`) and every dotted name of the library (`lib.model.readout`,
`lib.model.readout.reshape`) that the repository's text names exists.

The text is every docstring and comment of the Python and JavaScript files (code and its strings are the
tests' and the build's to check), the whole of every Markdown file (README.md, CONTRIBUTING.md,
instructors.md, the chapters' pages) and the build's own files (Makefile, the configuration, the CI script).
A mention names a file or folder (`js/NAME.js` is one of the page's core modules, `lib/explorers/js/`;
`chapters/part3/results-page` a page, with or without `.md`), or a module, package or name a module defines
(read from the source: nothing is imported). The placeholders PART, UNIT, NAME, X, Y, partN and the like,
and anything in braces, stand for any name (`tests/chapters/PART/UNIT/test_checks.py`,
`lib/chapters/{part}/`): such a mention must match something. A file that moved leaves its old name in
sentences; this test finds them.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# What is read: (folder, glob) pairs. Generated, vendored and built files are not the repository's words.
READ = [(".", "*.md"), ("chapters", "**/*.md"), ("lib", "**/*.py"), ("lib", "**/*.js"), ("scripts", "*.py"),
        ("_ext", "*.py"), ("tests", "**/*.py"), ("binder", "*"), (".ci", "*"), (".github", "**/*.yml"),
        (".", "Makefile"), (".", "*.toml"), (".", "*.yml"), (".", "*.txt")]
SKIP_PARTS = {"node_modules", "_build", ".venv", "__pycache__", "vendor"}

ROOTS = ("lib", "tests", "scripts", "chapters", "js", "_ext", "data")
PATH = re.compile(r"(?<![\w./@~-])(?:" + "|".join(ROOTS) + r")/[\w./{}*-]*")
DOTTED = re.compile(r"(?<![\w./-])lib(?:\.[A-Za-z_{}*][\w{}*]*)+")
# A placeholder: one of the words the text uses for "any name", anything in braces (closed or cut off by
# the end of the mention), a star.
WORDS = ("PART", "UNIT", "NAME", "MODEL", "CHAPTER", "LEARNER", "DIR", "FILE", "KIND", "X", "Y", "N", "S")
PLACEHOLDER = re.compile(r"\{[^}]*(\}|$)|\*|(?<![A-Za-z0-9])(?:" + "|".join(WORDS) + r")(?![A-Za-z0-9])|(?<=part)N\b")


def texts():
    seen = set()
    for folder, pattern in READ:
        for path in sorted((ROOT / folder).glob(pattern)):
            if path.is_file() and not SKIP_PARTS & set(path.relative_to(ROOT).parts) and path not in seen:
                seen.add(path)
                yield path


def as_glob(mention: str) -> str:
    return PLACEHOLDER.sub("*", mention)


@functools.cache
def glob_regex(glob: str) -> re.Pattern:
    """A glob as a regular expression in which a star never crosses a slash."""
    return re.compile("[^/]*".join(re.escape(part) for part in glob.split("*")) + r"\Z")


def matches(path: str, glob: str) -> bool:
    return glob_regex(glob).match(path) is not None


@functools.cache
def all_files() -> tuple[str, ...]:
    out = []
    for base in ("lib", "tests", "scripts", "chapters", "_ext", "data"):
        out += [p.relative_to(ROOT).as_posix() for p in (ROOT / base).rglob("*")
                if not SKIP_PARTS & set(p.relative_to(ROOT).parts)]
    return tuple(out)


@functools.cache
def path_exists(mention: str) -> bool:
    mention = mention.split("::")[0].rstrip(".,;:")
    if mention.startswith("js/"):
        mention = "lib/explorers/" + mention
    if mention.startswith("chapters/") and mention.endswith((".html", ".ipynb")):
        mention = mention.rsplit(".", 1)[0]          # the page's built page, or its reader notebook
    candidates = [mention, mention + ".md", mention + ".py"] if not mention.endswith("/") else [mention.rstrip("/")]
    if PLACEHOLDER.search(mention):
        patterns = [as_glob(c) for c in candidates]
        return any(matches(f, p) for f in all_files() for p in patterns)
    return any((ROOT / c).exists() for c in candidates)


@functools.cache
def top_level_names(path: Path) -> frozenset[str]:
    """The names a module binds at its top level (definitions, assignments, imports), and for a module with a
    `__getattr__` the strings it lists (its lazy names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree) if False else tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.FunctionDef, ast.ClassDef)):
                    names.add(sub.name)
                elif isinstance(sub, ast.Assign):
                    names |= {n.id for t in sub.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if "__getattr__" in names:
        names |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return frozenset(names)


def module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return base if base.is_dir() and parts[-1] != "lib" else None


@functools.cache
def dotted_exists(mention: str) -> bool:
    mention = mention.rstrip(".")
    if PLACEHOLDER.search(mention):
        return any(matches(f, as_glob(mention.replace(".", "/")) + suffix)
                   for f in all_files() for suffix in (".py", "/__init__.py", ""))
    parts = mention.split(".")
    for n in range(len(parts), 0, -1):
        found = module_file(parts[:n])
        if found is not None:
            if n == len(parts):
                return True
            # The first name after the module must be one the module binds (what follows may be an
            # attribute of it: a method, a field).
            return found.is_file() and parts[n] in top_level_names(found)
    return False


def python_words(text: str):
    """(first line, text) of every docstring and comment of a Python source."""
    def scopes(body):
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                yield node
                yield from scopes(node.body)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                yield from scopes([*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])])
    tree = ast.parse(text)
    for node in (tree, *scopes(tree.body)):
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            yield first.lineno, first.value.value
    # A comment: a "#" outside any string on its line (quotes before it balanced: the course's comments
    # follow code that closes its strings on the line).
    for number, line in enumerate(text.split("\n"), 1):
        at = line.find("#")
        while at >= 0 and (line.count('"', 0, at) % 2 or line.count("'", 0, at) % 2):
            at = line.find("#", at + 1)
        if at >= 0:
            yield number, line[at:]


JS_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def words(path: Path):
    """(first line, text) of what a file says in words."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".py":
        yield from python_words(text)
    elif path.suffix == ".js":
        # A comment, not a string that holds "//" (a URL): the slashes start the line or follow a space.
        for m in JS_COMMENT.finditer(text):
            if m.start() == 0 or text[m.start() - 1] in " \t\n;{(,":
                yield text.count("\n", 0, m.start()) + 1, m.group(0)
    else:
        yield 1, text


def mentions(path: Path):
    for first, text in words(path):
        for pattern, exists in ((PATH, path_exists), (DOTTED, dotted_exists)):
            for m in pattern.finditer(text):
                yield first + text.count("\n", 0, m.start()), m.group(0), exists


def dead_mentions():
    out = []
    for path in texts():
        for line, mention, exists in mentions(path):
            if not exists(mention):
                out.append(f"{path.relative_to(ROOT)}:{line}: {mention}")
    return out


def test_every_path_and_module_the_words_name_exists():
    dead = dead_mentions()
    assert not dead, ("these words name a path or a module that does not exist (it moved, or was renamed: "
                      "write where it is now):\n" + "\n".join(dead))


@pytest.mark.parametrize("mention, real", [
    ("lib/model/readout.py", True), ("lib/model/readout_old.py", False), ("js/twins.js", True),
    ("js/views.js", True), ("js/nowhere.js", False), ("chapters/part3/results-page", True),
    ("chapters/part3/results-page.md", True), ("tests/chapters/PART/UNIT/test_checks.py", True),
    ("tests/chapters/PART/test_UNIT.py", False), ("lib/chapters/{part}/", True), ("lib/explorers/js/", True),
    ("tests/model/test_readout.py::test_x", True), ("lib/analysis/paths.py", False),
    ("chapters/partN/NAME", True), ("tests/X/test_Y.py", True), ("lib/chapters/{self.part}/{self.name.replace", True),
    ("chapters/part1/induction.ipynb", True)])
def test_a_path_is_found_or_not(mention, real):
    assert path_exists(mention) is real


@pytest.mark.parametrize("mention, real", [
    ("lib.model.readout", True), ("lib.model.readout.reshape", True), ("lib.model.readout.reshapes", False),
    ("lib.analysis.maps.views", False), ("lib.chapters.part2.three_ways.views.plane_view", True),
    ("lib.chapters.PART.UNIT.checks", True), ("lib.load", True), ("lib.units.units", True),
    ("lib.chapters.checks", True), ("lib.model.store.LoadedModel.meta", True), ("lib.exercises.site", True),
    ("lib.analysis.induction.FORMED", True), ("lib.analysis.induction.FORMEDS", False)])
def test_a_dotted_name_is_found_or_not(mention, real):
    assert dotted_exists(mention) is real


def test_the_words_of_a_python_file_are_its_docstrings_and_comments():
    source = '"""Module: lib/a.py."""\nx = "#not a comment"  # see lib/b.py\n\n\ndef f():\n    """Function: lib/c.py."""\n'
    said = [text for _, text in python_words(source)]
    assert said == ["Module: lib/a.py.", "Function: lib/c.py.", "# see lib/b.py"]
