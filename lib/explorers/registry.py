"""Every explorer of the course, found where it is defined: in its chapter's unit.

A chapter's explorers are defined in its unit, `lib/chapters/PART/UNIT/explorers.py`, each
registered there with `@registered(view, examples, where=...)`: the view it draws, the settings
the tests make it with, and where it sits on the machine of Part 1's map (the line under its
controls). The registry finds them by walking the units (`lib.units.load("explorers")`), so
adding an explorer touches its chapter's folder and its page, never a list here or in the tests.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from lib import units


@dataclass(frozen=True)
class Registered:
    """One explorer of the course: the function that makes it, the view it draws, the settings the
    tests make it with (`examples`: a function, since most need a model loaded) and where it sits on
    the machine (Part 1's map; "" for the map itself and the game's rules)."""
    name: str
    view: str
    make: Callable[..., Any]
    examples: Callable[[], Sequence[Any]]
    where: str
    # The files the whole site serves once for this explorer (what its page twin reads), written
    # under the site's _static/explorers by `lib.explorers.page.export_site`: folder -> paths written.
    site_files: Callable[[Path], list[Path]] | None = None
    # How the tests fill this explorer's own free-text boxes with random settings, good and bad (those
    # the shared boxes of `lib.explorers.boxes` do not read): (rng, control name, the values so far,
    # the model's tokens) -> text, or None for a box it leaves to the shared ones.
    random_text: Callable[..., str | None] | None = None


REGISTRY: dict[str, Registered] = {}


def registered(view: str, examples: Callable[[], Sequence[Any]], *, where: str,
               site_files: Callable[[Path], list[Path]] | None = None,
               random_text: Callable[..., str | None] | None = None):
    """Register the decorated explorer function, where it is defined. Every test about "every
    explorer" iterates the registry (`every_example()`), never a list of its own."""
    def register(make):
        for entry in REGISTRY.values():
            if entry.view == view and entry.name != make.__name__:
                raise ValueError(f"{make.__name__}: view {view!r} is already drawn by {entry.name}")
        REGISTRY[make.__name__] = Registered(make.__name__, view, make, examples, where, site_files, random_text)
        return make
    return register


def entries() -> list[Registered]:
    """Every registered explorer, every unit's loaded first, in the book's units' order (part, then
    unit name; within a unit, as defined), whatever order they were imported in."""
    modules = [m.__name__ for m in units.load("explorers")]
    rank = {name: i for i, name in enumerate(modules)}
    return sorted(REGISTRY.values(), key=lambda e: rank.get(e.make.__module__, len(rank)))


def entry(view: str) -> Registered | None:
    """The registered explorer drawing `view` (every unit loaded only if it is not registered yet)."""
    found = next((e for e in REGISTRY.values() if e.view == view), None)
    return found or next((e for e in entries() if e.view == view), None)


def where_it_sits(view: str) -> str:
    """The sentence saying where an explorer of this view sits on the machine's map, or ""."""
    found = entry(view)
    return found.where if found else ""


def every_example() -> list:
    """Every registered explorer, in each of its example settings."""
    out = []
    for e in entries():
        made = list(e.examples())
        if not made or any(x.view != e.view for x in made):
            raise ValueError(f"{e.name}: its examples must be explorers of view {e.view!r}")
        out += made
    return out


def registered_views() -> set[str]:
    return {e.view for e in entries()}
