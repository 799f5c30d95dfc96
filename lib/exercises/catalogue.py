"""The list of every exercise in the book, read from the chapter sources (for the instructor page)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = re.compile(r":::\{exercise\}\n:label: (?P<label>\S+)\n\n(?P<text>.*?)\n:::", re.S)
TITLE = re.compile(r"^# (.+)$", re.M)


@dataclass(frozen=True)
class Exercise:
    chapter: str      # the chapter's path without extension, e.g. chapters/part3/lever
    title: str        # the chapter's title
    label: str
    task: str         # the task, on one line
    checks: tuple[str, ...]   # the self-check functions its answer cell calls


STUB = re.compile(r"```\{code-cell\} ipython3\n:tags: \[remove-cell, exercise-stub\]\n(?P<code>.*?)```", re.S)


def catalogue(root: Path = ROOT) -> list[Exercise]:
    """Every exercise, in the order of the table of contents."""
    toc = (root / "_toc.yml").read_text()
    out = []
    for name in re.findall(r"file:\s*(\S+)", toc):
        path = root / (name + ".md")
        if not path.exists():
            continue
        text = path.read_text()
        title = TITLE.search(text)
        for m in EXERCISE.finditer(text):
            stub = STUB.search(text, m.end())
            checks = tuple(dict.fromkeys(re.findall(r"check\.(\w+)\(", stub["code"]))) if stub else ()
            out.append(Exercise(name, title.group(1) if title else name, m["label"], " ".join(m["text"].split()),
                                checks))
    return out
