"""The shape of the imports, read from the source with `ast` (nothing here imports lib).

1. No import circles between the modules of `lib`, `scripts/` and `_ext/` (the scripts and the
   Sphinx extensions import each other by plain name, `import notebooks`, `from grading import wire`, after a sys.path insert).
   Every import counts, at any depth: one inside a function closes a circle as surely as one at the
   top, it only hides it until the function runs.
2. Imports sit at the top of their module. One inside a function is either of a heavy third-party
   package (HEAVY: loading it costs the reader's notebook or the command line seconds, so it waits
   until it is needed) or carries a comment on its line or the line above saying why it is deferred
   (`# deferred: ...`).
3. The chapters' units (`lib/chapters/PART/UNIT/`) are found by walking lib/chapters (the walker in
   `lib.units`, by importlib): no shared module imports a unit by name.

Each test is parametrized by module, so a failure names the module and what it imports.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Where the modules live. A file under lib is named by its dotted path (`lib.analysis.maps.tsne`,
# a package by its folder); a file of scripts/ or _ext/ by its folder and its plain name
# (`scripts.notebooks`, `scripts.grading.wire`), and a plain `import notebooks` or `from grading import wire`
# in those folders finds it.
PACKAGES = ("lib",)
PLAIN_FOLDERS = ("scripts", "_ext")
# Which folders a plain-name import in a folder reaches (its own, and what its sys.path insert adds).
PLAIN_PATH = {"scripts": ("scripts",), "_ext": ("_ext", "scripts")}

# Third-party packages heavy enough to import only when a function needs them: each costs a
# notebook kernel, the command line or the book's build noticeable time (or pulls in one that does).
HEAVY = frozenset({
    "torch", "sklearn", "scipy", "transformers", "safetensors", "gguf",        # numerics and models
    "matplotlib", "PIL",                                                       # figures
    "ipywidgets", "anywidget", "IPython", "traitlets",                         # notebook widgets
    "nbformat", "nbclient", "jupytext", "jupyter_cache",                       # notebooks
    "myst_nb", "myst_parser", "sphinx_exercise", "sphinx", "docutils",         # the book's build
    "playwright",                                                              # the browser
})

# A comment on the import's line or the line above that says why it is deferred.
REASON = re.compile(r"#.*\bdeferred\b\W*\w", re.IGNORECASE)

# The chapters' units: `lib.chapters.part1.one_head.checks` and the like.
UNIT = re.compile(r"^lib\.chapters\.part\d+(\.|$)")
# The shared library (lib outside lib/chapters: lib.model, lib.analysis, lib.content, lib.pictures,
# lib.explorers, lib.exercises, lib.claims, lib.shipped, lib.cli...) names no chapter's unit: it
# reaches them through the walker `lib.units` (by importlib). The units themselves may import
# one another (real_language shows three_ways' t-SNE explorer).
CHAPTERS = "lib.chapters"


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    files = [f for p in PACKAGES for f in (ROOT / p).rglob("*.py")]
    files += [f for d in PLAIN_FOLDERS for f in (ROOT / d).rglob("*.py")]
    return {_name(f): f for f in sorted(files) if "__pycache__" not in f.parts}


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(encoding="utf-8"), filename=str(modules()[name]))


def _imports(name: str):
    """(node, in_function, type_checking) for every import statement of a module, at any depth."""
    def walk(node, in_function, type_checking):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_function, type_checking
            guarded = type_checking or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            yield from walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.Lambda)), guarded)
    yield from walk(tree(name), False, False)


def _known(dotted: str) -> str | None:
    """The deepest module of ours that `dotted` names (`lib.model.store.load` -> `lib.model.store`)."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in modules():
            return ".".join(parts[:n])
    return None


def _plain(name: str, dotted: str) -> str | None:
    """A plain-name import (`grading.wire`, `notebooks.build`) from a script or an extension."""
    folder = name.split(".")[0]
    for where in PLAIN_PATH.get(folder, ()):
        found = _known(f"{where}.{dotted}")
        if found and found != where:
            return found
    return None


def _resolve(name: str, dotted: str) -> str | None:
    if name.split(".")[0] in PLAIN_FOLDERS:
        return _plain(name, dotted) or (_known(dotted) if dotted.split(".")[0] in PACKAGES else None)
    return _known(dotted)


def targets(name: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules of ours an import statement loads (the deepest one each name reaches)."""
    if isinstance(node, ast.Import):
        found = [_resolve(name, a.name) for a in node.names]
        return [t for t in found if t]
    if node.level:                          # relative: from the module's own package
        package = name.split(".") if modules()[name].name == "__init__.py" else name.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
        found = [_known(f"{base}.{a.name}") or _known(base) for a in node.names]
    else:
        found = [_resolve(name, f"{node.module}.{a.name}") for a in node.names]
    return sorted({t for t in found if t and t != name})


@cache
def graph() -> dict[str, frozenset[str]]:
    """Who imports whom, every import at any depth (those under `if TYPE_CHECKING:` never run)."""
    return {name: frozenset(t for node, _, guarded in _imports(name) if not guarded
                            for t in targets(name, node))
            for name in modules()}


@cache
def components() -> list[frozenset[str]]:
    """The strongly connected components of more than one module (or one that imports itself)."""
    g, index, low, stack, on, out = graph(), {}, {}, [], set(), []

    def visit(v):                           # Tarjan's, iterative (the graph is deep enough)
        work = [(v, iter(sorted(g[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        while work:
            node, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        component.add(w)
                        if w == node:
                            break
                    if len(component) > 1 or node in g[node]:
                        out.append(frozenset(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(start: str) -> list[str]:
    """The shortest circle of imports through `start` (breadth first)."""
    g, previous, frontier = graph(), {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v]):
                if w == start:
                    path = [v]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if v != start else [start, start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return []


def _where(name: str, node) -> str:
    return f"{modules()[name].relative_to(ROOT)}:{node.lineno}"


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_import_circle(name):
    for component in components():
        if name in component:
            cycle = shortest_cycle(name)
            lines = [f"  {a} -> {b}  ({', '.join(_where(a, n) for n, _, _ in _imports(a) if b in targets(a, n))})"
                     for a, b in zip(cycle, cycle[1:])]
            pytest.fail(f"{name} is on an import circle:\n" + "\n".join(lines)
                        + f"\nits circles join {len(component)} modules: {', '.join(sorted(component))}")


def _comments(name: str) -> dict[int, str]:
    source = modules()[name].read_text(encoding="utf-8")
    return {t.start[0]: t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type == tokenize.COMMENT}


def _top(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name.split(".")[0] for a in node.names]
    return ["." if node.level else node.module.split(".")[0]]


@pytest.mark.parametrize("name", sorted(modules()))
def test_imports_at_the_top(name):
    comments, bad = None, []
    for node, in_function, _ in _imports(name):
        if not in_function or all(top in HEAVY for top in _top(node)):
            continue
        comments = comments if comments is not None else _comments(name)
        said = [comments.get(line, "") for line in range(node.lineno - 1, node.end_lineno + 1)]
        if not any(REASON.search(c) for c in said):
            bad.append(f"  {_where(name, node)}: {ast.unparse(node)}")
    assert not bad, (f"{name} imports inside a function what is not a heavy package (HEAVY), without a "
                     "`# deferred: why` comment; move it to the top of the module:\n" + "\n".join(bad))


@pytest.mark.parametrize("name", [n for n in sorted(modules())
                                  if n.split(".")[0] == "lib" and not (n + ".").startswith(CHAPTERS + ".")])
def test_shared_library_names_no_chapter_unit(name):
    bad = [f"  {_where(name, node)}: {ast.unparse(node)}" for node, _, _ in _imports(name)
           if any(UNIT.match(t) for t in targets(name, node))]
    assert not bad, (f"{name} is shared library but imports a chapter's unit (reach the units through "
                     "lib.units: units(), unit(name).module(kind), load(kind), checks(name)):\n" + "\n".join(bad))


def test_the_graph_sees_the_imports():
    """The reading above finds what it should: a plain-name import between scripts, a submodule
    named in `from lib import ...`, an import inside a function."""
    g = graph()
    assert "scripts.grading.wire" in g["scripts.grading.run"] and "scripts.notebooks" in g["scripts.grading.chapters"]
    assert "lib.units" in g["lib.exercises"]
    assert "lib.model.store" in g["lib.cli.commands"]
