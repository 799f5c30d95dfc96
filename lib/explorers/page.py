"""An explorer on the website: its declaration in the page, and the files the site serves once.

`html(explorer, default)` is what a chapter's output carries for the website: the explorer's
declaration (its controls, the model it runs, its view and fixed arguments) as JSON, and an
empty figure that the book's build fills with the default picture, drawn by the same renderer
(so the page reads the same without JavaScript). The page's script (`lib/explorers/js/page.js`)
builds the controls from the declaration, runs the model in the page and redraws on every move.

`export_site(folder)` writes what the whole site serves once, whichever pages use it: each
shipped model (its weights as shipped, its config and vocabulary, and the reference set of mean and
resample ablation with its means, computed here by the library), the files an explorer's
registration names for its page twin (`site_files`: the real model's attention on the sentences its
explorer offers, lib/chapters/part1/ablation/explorers.py), SmolLM2's file in parts for the page that
loads it on request (`lib.explorers.smollm2`), and the point sets of the maps that the page computes with
(concept planes), as the book's build asks (`_ext/course_explorers.py`).
"""
from __future__ import annotations

import base64
import html as html_text
import json
import shutil
from pathlib import Path

import numpy as np

from lib.content.point_sets import WORD_SETS, point_set
from lib.explorers.registry import entries

FIGURE = '<div class="course-figure" aria-live="polite"></div>'
NO_SCRIPT = ("Without JavaScript this explorer shows its starting picture; with it, every control works, "
             "the model running in the page.")


def html(explorer, default: dict | None = None) -> str:
    """The explorer's element for the website (`default`: the view of its default values)."""
    spec = explorer.spec()
    spec["default"] = default
    # "<" written as \u003c: nothing in the data can close or confuse its <script> element.
    payload = json.dumps(spec, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    return (f'<div class="course-explorer course-live" data-view="{html_text.escape(explorer.view)}">'
            f'<script type="application/json" class="course-explorer-spec">{payload}</script>'
            f'{FIGURE}<noscript><p class="course-note">{html_text.escape(NO_SCRIPT)}</p></noscript></div>')


def _float32(array) -> dict:
    """A float32 matrix as base64 of its little-endian bytes: exact, and a third smaller than decimals."""
    a = np.ascontiguousarray(np.asarray(array, dtype="<f4"))
    return {"shape": list(a.shape), "float32": base64.b64encode(a.tobytes()).decode()}


def export_reference(name: str, models: Path) -> Path:
    """The reference set of mean and resample ablation (`lib.analysis.ablation.reference_set`), computed
    here, once, by the library, for the page: its label, its rounds (token ids: the page runs the one a
    resample picks), the per-position means of every head's write and MLP output (float32, as the
    library holds them), up to the longest round, and, where the corpus names its tokens' roles, the
    per-role means."""
    # Deferred, as below: the analysis and the model store import torch, which the page's element does not need.
    from lib.analysis.ablation import reference_set
    from lib.model.store import load  # deferred: imports torch, as the line above does

    ref = reference_set(load(name))
    path = models / f"{name}.reference.json"
    out = {"label": ref.label, "longest": ref.longest, "rounds": [list(r) for r in ref.rounds],
           "means": {k: _float32(v[:ref.longest].numpy()) for k, v in ref.means.items()}}
    if ref.role_of is not None:
        # Role-matched references (the course's default): each role's mean write. The page finds the
        # roles of the rounds and of a prompt with its twin of the corpus's `roles` (game.js tokenRoles).
        out["role_means"] = {k: {role: _float32(v.numpy()) for role, v in by_role.items()}
                             for k, by_role in ref.role_means.items()}
    path.write_text(json.dumps(out))
    return path


def export_site(folder: Path) -> list[Path]:
    """Write the shipped models, the explorers' own site files and the point sets under `folder` (the
    site's _static/explorers)."""
    from lib.model.store import META, WEIGHTS, model_folder, shipped_names  # deferred: imports torch (above)

    written = []
    models = folder / "models"
    models.mkdir(parents=True, exist_ok=True)
    for name in shipped_names():
        source = model_folder(name)
        meta = json.loads((source / META).read_text())
        # Mean and resample ablation's reference set, where the model has one (the page asks only then).
        reference = bool(meta["config"]["n_layers"] and meta.get("corpus"))
        (models / f"{name}.json").write_text(json.dumps({"name": name, "config": meta["config"], "vocab": meta["vocab"],
                                                          "corpus": meta.get("corpus"), "reference": reference}))
        shutil.copyfile(source / WEIGHTS, models / f"{name}.safetensors")
        written += [models / f"{name}.json", models / f"{name}.safetensors"]
        if reference:
            written.append(export_reference(name, models))
    for entry in entries():         # what an explorer's page twin reads (the real model's patterns on its sentences)
        if entry.site_files:
            written += entry.site_files(folder)
    # SmolLM2's file, in parts, for the page that loads it when a reader asks (lib.explorers.smollm2)
    from lib.explorers import smollm2  # deferred: as above (it finds the model's file through lib.model.smollm2)
    written += smollm2.export(folder)
    points = folder / "points"
    points.mkdir(parents=True, exist_ok=True)
    for name in WORD_SETS:          # the sets the page computes with (the t-SNE layouts come in its grid)
        ps = point_set(name)
        path = points / f"{name}.json"
        path.write_text(json.dumps({"name": name, "labels": list(ps.labels), "groups": list(ps.groups),
                                    "vectors": _float32(ps.vectors)}))
        written.append(path)
    return written
