"""The chapter units, found by walking lib/chapters (lib.units): in the table of contents' order, each with its
page; found by any spelling of its chapter's name; their modules of one kind loaded for the registries; and
the walker imports nothing of the library (the registries, low in it, import the walker)."""
import ast
import re

import pytest

from lib import units
from lib.units import ROOT, Unit


def test_every_unit_is_found_in_the_books_order_with_its_page():
    found = units.units()
    assert len(found) >= 20 and len({u.name for u in found}) == len(found)
    toc = re.findall(r"file:\s*(\S+)", (ROOT / "_toc.yml").read_text())
    assert [u.page for u in found] == [page for page in toc if page in {u.page for u in found}]
    for u in found:
        assert (ROOT / f"{u.page}.md").is_file(), u.page
        assert u.package == f"lib.chapters.{u.part}.{u.name}" and (u.folder / "__init__.py").is_file()
    on_disk = {p.parent.name for p in (ROOT / "lib" / "chapters").glob("part*/*/__init__.py")}
    assert on_disk == {u.name for u in found}


@pytest.mark.parametrize("spelling", ["results_page", "results-page", "chapters/part3/results-page"])
def test_a_unit_is_found_by_any_spelling_of_its_name(spelling):
    u = units.unit(spelling)
    assert u == Unit("part3", "results_page") and u.has("checks") and u.has("page.js") and not u.has("nothing")
    assert units.checks(spelling).__name__ == "lib.chapters.part3.results_page.checks"


def test_an_unknown_unit_names_the_units():
    with pytest.raises(LookupError, match="no chapter unit 'nonesuch'; the units are .*results_page"):
        units.unit("nonesuch")


def test_load_imports_that_module_of_every_unit_that_has_one():
    loaded = units.load("explorers")
    assert [m.__name__ for m in loaded] == [f"{u.package}.explorers" for u in units.units() if u.has("explorers")]


def test_the_walker_imports_nothing_of_the_library():
    tree = ast.parse((ROOT / "lib" / "units.py").read_text())
    imported = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [i for i in imported if re.search(r"\blib\b", i)], imported
    from lib import chapters
    assert chapters.units is units.units and chapters.checks is units.checks, "lib.chapters hands the names on"
