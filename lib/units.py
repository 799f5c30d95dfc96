"""The chapter units, found by walking `lib/chapters`: what every registry asks.

A chapter's own code sits in one folder that mirrors its page: `chapters/part3/results-page.md` has
its code in `lib/chapters/part3/results_page/`:

- `checks.py`    the self-checks its exercises call (the stubs' `from ... import checks as check`)
- `claims.py`    the conclusions the page states, registered with `lib.claims.claim`
- `explorers.py` its explorers' definitions, registered with `lib.explorers.definition.registered`
- `page.js`      the page twins of its views and of its checks' computations
- `pictures.js`  the pictures its explorers draw that no other chapter draws (the renderer's kit)

A unit holds only what that chapter uses; what two chapters use lives in the shared library
(`lib.model`, `lib.analysis`, `lib.content`, `lib.pictures`). Nothing lists the units by hand: the
registries (claims, explorers, exercise checks, the page's assets) find them here, so adding a
chapter's explorer, claim or exercise touches its folder and its page, nothing else.

This module imports nothing of the library (a unit's modules are loaded by `importlib`, when asked),
so every registry, however low, can import it without closing a circle through the units, which
import the registries to register themselves. `lib.chapters` hands the same names on.
"""
from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent / "chapters"    # the units: HERE/PART/UNIT/
ROOT = HERE.parents[1]           # the repository (the pages live in ROOT/chapters)


@dataclass(frozen=True)
class Unit:
    part: str                    # "part3"
    name: str                    # "results_page": the page's file name with "_" for "-"

    @property
    def package(self) -> str:
        return f"lib.chapters.{self.part}.{self.name}"

    @property
    def folder(self) -> Path:
        return HERE / self.part / self.name

    @property
    def page(self) -> str:
        """The page's path without extension, as the table of contents names it."""
        return f"chapters/{self.part}/{self.name.replace('_', '-')}"

    def has(self, kind: str) -> bool:
        """Whether the unit has a module or file `kind` ("checks", "claims", "explorers", "page.js")."""
        return (self.folder / (kind if "." in kind else f"{kind}.py")).is_file()

    def module(self, kind: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.{kind}")


def _book_order() -> dict[str, int]:
    """Each page's place in the table of contents (_toc.yml), by its path without extension."""
    toc = ROOT / "_toc.yml"
    names = re.findall(r"file:\s*(\S+)", toc.read_text()) if toc.is_file() else []
    return {name: i for i, name in enumerate(names)}


@functools.lru_cache(maxsize=None)
def _units() -> tuple[Unit, ...]:
    found = [Unit(part.name, folder.name)
             for part in sorted(HERE.glob("part*")) if (part / "__init__.py").is_file()
             for folder in sorted(part.iterdir()) if (folder / "__init__.py").is_file()]
    order = _book_order()
    # In the book's order (a registry lists its entries as the reader meets them); a unit whose page
    # is not in the table of contents comes after, by part and name.
    return tuple(sorted(found, key=lambda u: (u.page not in order, order.get(u.page, 0), u.part, u.name)))


def units() -> list[Unit]:
    """Every chapter unit (the folders under lib/chapters/PART with an __init__.py), in the order of
    the book's table of contents."""
    return list(_units())


def unit(name: str) -> Unit:
    """The unit of a chapter, by its name ("results_page", "results-page" or "chapters/part3/results-page")."""
    short = name.rsplit("/", 1)[-1].replace("-", "_")
    for u in units():
        if u.name == short:
            return u
    raise LookupError(f"no chapter unit {name!r}; the units are {', '.join(u.name for u in units())}")


def load(kind: str) -> list[ModuleType]:
    """Import the module `kind` ("checks", "claims", "explorers") of every unit that has one: what
    the registries call to find every chapter's declarations."""
    return [u.module(kind) for u in units() if u.has(kind)]


def checks(name: str) -> ModuleType:
    """A chapter's self-check module, by the chapter's name (what a stub imports as `check`)."""
    return unit(name).module("checks")
