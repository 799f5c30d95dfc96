"""`python -m lib bench`: the library's speed against the budgets of DESIGN.md, in figures.

Timings are medians of repeated runs on this machine; nothing here asserts, it reports.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGETS = {"import": 2.0, "train": 60.0, "forward": 0.050, "tsne_step": 0.100, "tsne_first": 0.300,
           "slider_step": 0.050}


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _row(what: str, seconds: float, budget: float | None) -> str:
    verdict = "" if budget is None else ("within" if seconds <= budget else "OVER") + f" budget {budget:g} s"
    return f"{what:46s} {seconds:9.4f} s   {verdict}"


def _p95(times: list[float]) -> float:
    return sorted(times)[max(0, int(round(0.95 * len(times))) - 1)]


def slider_steps(lm, steps: int = 40) -> list[tuple[str, float]]:
    """p95 of one control change in each kernel explorer: compute, draw and encode the chart.

    The widget's own observer runs synchronously when a control's value is set, so timing the
    assignment times exactly what a reader waits for (less the browser's repaint).
    """
    from lib.explorers import widgets

    prompts = ["<BOS> Pietro chiama", "<BOS> Pietro chiama Paolo"]

    def setting(control, values):
        return [lambda v=v: setattr(control, "value", v) for v in values]

    def flipping(toggles):
        return [lambda t=toggles[i % len(toggles)]: setattr(t, "value", not t.value) for i in range(steps)]

    cases = []
    box = widgets.temperature_explorer(lm, prompts)
    cases.append(("temperature slider", setting(box.children[0].children[1], [0.1 * 1.1 ** i for i in range(steps)])))
    box = widgets.sampling_explorer(lm, prompts)
    temperature, top_p, seed = box.children[0].children[1], box.children[1].children[1], box.children[2].children[0]
    cases.append(("sampling: temperature slider", setting(temperature, [0.2 + 0.1 * i for i in range(steps)])))
    cases.append(("sampling: seed slider", setting(seed, [i % 21 for i in range(1, steps + 1)])))
    cases.append(("sampling: top-p box", setting(top_p, [f"{0.05 + 0.02 * i:.2f}" for i in range(steps)])))
    box = widgets.lens_explorer(lm, prompts)
    words = ["Tarso", "Cefa", "vice", "capo", "Paolo"]
    cases.append(("lens: followed token", setting(box.children[0].children[1], [words[i % 5] for i in range(steps)])))
    box = widgets.ablation_explorer(lm, prompts)
    cases.append(("head ablation: one toggle", flipping(box.children[1].children)))
    box = widgets.pattern_viewer(lm, prompts)
    cases.append(("attention-pattern viewer: head", setting(box.children[0].children[2], [i % 4 for i in range(1, steps + 1)])))
    box = widgets.path_explorer(lm)
    cases.append(("residual-path explorer: one toggle", flipping([c for row in box.children[:-2] for c in row.children])))
    box = widgets.plane_builder()
    axes = ["Paolo - Pietro", "Tarso", "Tarso - capo", "chiama - perde", "Cefa + Tarso - vice - capo"]
    cases.append(("concept-plane builder: axis 2", setting(box.children[1].children[1], [axes[i % 5] for i in range(steps)])))
    out = []
    for label, actions in cases:
        times = []
        for act in actions:
            t = time.perf_counter()
            act()
            times.append(time.perf_counter() - t)
        out.append((label, _p95(times)))
    return out


def load_costs(repeat: int = 20) -> list[tuple[str, float]]:
    """Reading each shipped model from disk, verified, and the part of it the SHA-256 takes."""
    import hashlib

    from lib.model.store import WEIGHTS, model_folder, read_model, shipped_names

    out = []
    for name in shipped_names():
        data = (model_folder(name) / WEIGHTS).read_bytes()
        out.append((f"read {name} from disk, verified, median of {repeat}",
                    _median_time(lambda: read_model(name), repeat)))
        out.append((f"  of which the SHA-256 of its {len(data) // 1024} KiB",
                    _median_time(lambda: hashlib.sha256(data).hexdigest(), repeat)))
    return out


def tsne_steps(steps: int = 40) -> list[tuple[str, float]]:
    """The perplexity-and-seed explorer: building it (every layout its controls reach is computed
    then) and the p95 of one step of each control, on each point set."""
    from lib.explorers import widgets
    from lib.explorers.map_views import PERPLEXITIES, SEEDS, _LAYOUTS

    _LAYOUTS.clear()
    t = time.perf_counter()
    box = widgets.tsne_explorer()
    out = [("t-SNE explorer: built (all 40 layouts of the 28 rows)", time.perf_counter() - t)]
    which, perp = box.children[0].children
    left, right = box.children[1].children
    for points in ("calling-game", "real-language"):
        t = time.perf_counter()
        which.value = points
        if points == "real-language":
            out.append(("t-SNE explorer: first switch to the 84 rows (all 60 layouts)", time.perf_counter() - t))
        usable = [p for p in PERPLEXITIES if p < (28 if points == "calling-game" else 84)]
        for label, control, values in (("perplexity", perp, [usable[i % len(usable)] for i in range(1, steps + 1)]),
                                       ("left seed", left, [SEEDS[i % len(SEEDS)] for i in range(1, steps + 1)])):
            times = []
            for v in values:
                t = time.perf_counter()
                control.value = v
                times.append(time.perf_counter() - t)
            out.append((f"t-SNE explorer ({points}): {label}, one step, p95 of {steps}", _p95(times)))
    return out


def main(train_models: bool = True) -> int:
    print(f"python {sys.version.split()[0]}")
    code = "import time; t=time.perf_counter(); import lib, lib.model.transformer, lib.model.store; print(time.perf_counter()-t)"
    imports = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(3)]
    print(_row("import lib (with torch and the model)", statistics.median(imports), BUDGETS["import"]))
    code_light = "import time; t=time.perf_counter(); import lib; print(time.perf_counter()-t)"
    light = float(subprocess.run([sys.executable, "-c", code_light], capture_output=True, text=True,
                                 check=True).stdout)
    print(_row("import lib (package only)", light, BUDGETS["import"]))

    import numpy as np
    import torch
    from lib.analysis.maps import tsne
    from lib.content.real_words import load as load_real_words
    from lib.model.store import load

    lm = load("calling-game")
    ids = lm.encode("<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama 5 <SEP> 5 chiama Pietro capo")
    with torch.no_grad():
        lm.model(ids)
    print(_row(f"forward pass, calling-game, {len(ids)} tokens", _median_time(lambda: lm.model(ids), 50),
               BUDGETS["forward"]))
    print(_row("run_with_cache, calling-game", _median_time(lambda: lm.model.run_with_cache(ids), 50),
               BUDGETS["forward"]))

    for label, seconds in load_costs():
        print(_row(label, seconds, None))

    emb = lm.model.W_E.detach().numpy()
    rng = np.random.default_rng(0)
    wide = rng.normal(size=(84, 384))
    for label, x, perp in (("t-SNE, 28 points (calling-game vocabulary)", emb, 5),
                           ("t-SNE, 84 points of 384 dimensions", wide, 15)):
        seeds = iter(range(100))
        # Each call uses a new seed, so nothing is reused: this is the uncached cost of a slider
        # step; a step back to a layout already seen is a dictionary lookup in the explorer.
        print(_row(label + ", uncached, median of 5",
                   _median_time(lambda: tsne(x, perplexity=perp, seed=next(seeds)), 5), BUDGETS["tsne_first"]))

    real = load_real_words().vectors
    seeds = iter(range(100, 200))
    print(_row("t-SNE, the 84 real-language rows, uncached, median of 5",
               _median_time(lambda: tsne(real, perplexity=15, seed=next(seeds)), 5), BUDGETS["tsne_first"]))
    for label, seconds in tsne_steps():
        print(_row(label, seconds, BUDGETS["tsne_step"] if "p95" in label else None))

    for label, seconds in slider_steps(lm):
        print(_row(f"{label}, one step, p95 of 40", seconds, BUDGETS["slider_step"]))

    if train_models:
        from lib.model.store import shipped_names
        for name in shipped_names():
            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "lib", "train", name, "--out", str(Path(tmp) / name),
                                "--quiet"], check=True, capture_output=True)
                wall = time.perf_counter() - t
                loop = json.loads((Path(tmp) / name / "meta.json").read_text())["train_seconds"]
            print(_row(f"python -m lib train {name} (whole command)", wall, BUDGETS["train"]))
            print(_row(f"  of which the training loop", loop, None))
    return 0
