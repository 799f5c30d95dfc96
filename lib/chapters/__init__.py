"""The chapters' own code: one folder per chapter, mirroring its page.

`chapters/part3/results-page.md` has its code in `lib/chapters/part3/results_page/`:

- `checks.py`    the self-checks its exercises call (the stubs' `from ... import checks as check`)
- `claims.py`    the conclusions the page states, registered with `lib.claims.claim`
- `explorers.py` its explorers' definitions, registered with `lib.explorers.definition.registered`
- `page.js`      the page twins of its views and of its checks' computations
- `pictures.js`  the pictures its explorers draw that no other chapter draws (the renderer's kit)

A unit holds only what that chapter uses; what two chapters use lives in the shared library
(`lib.model`, `lib.analysis`, `lib.content`, `lib.pictures`). Nothing lists the units by hand: the
registries (claims, explorers, exercise checks, the page's assets) find them by walking this folder,
so adding a chapter's explorer, claim or exercise touches its folder and its page, nothing else.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
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


def units() -> list[Unit]:
    """Every chapter unit, by part and name (the folders under lib/chapters with an __init__.py)."""
    return [Unit(part.name, folder.name)
            for part in sorted(HERE.glob("part*")) if (part / "__init__.py").is_file()
            for folder in sorted(part.iterdir()) if (folder / "__init__.py").is_file()]


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
