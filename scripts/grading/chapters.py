"""The chapters as the grader runs them, read from the instructor's sources (never from a returned
notebook): each chapter's code cells as `make student` hands them out (solutions left out, answer cells
labelled), and each exercise's check call (the module, the function, the answers' names, the models).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import notebooks
from lib.exercises.catalogue import catalogue

ROOT = Path(__file__).resolve().parents[2]
EXERCISE_LABEL = re.compile(r":::\{exercise\}[^\n]*\n(?:(?::[\w-]+:[^\n]*\n)*?):label:[ \t]*(\S+)")
LOADED = re.compile(r"^(\w+)\s*=\s*lib\.load\(\s*[\"']([\w-]+)[\"']\s*\)", re.M)


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
    the module, the function and its arguments (the answers' names, and the models the chapter loads)."""
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
    """The stub's `check.NAME(args)`: which arguments are answers (names the stub binds: one, or
    several, as an own-text exercise's text and prediction) and which are models the chapter loads
    with lib.load."""
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
    names = [a["name"] for a in args if a["role"] == "answer"]
    if not names or len(set(names)) != len(names):
        raise SystemExit(f"{doc}, {label}: the check call should take one answer or more, each a different name "
                         "the answer cell binds")
    return {"module": module, "check": calls[0].func.attr, "args": args, "call": ast.dump(calls[0])}


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
