"""`python -m lib bench`: the library's speed against its budgets (lib/budgets.py), in figures.

Timings are medians of repeated runs on this machine; nothing here asserts, it reports.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import json
import os
import resource
import statistics
import subprocess
import sys
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import torch

from lib.analysis.maps import same_group_share
from lib.analysis.maps.tsne import tsne_run
from lib.analysis.patching import patch
from lib.budgets import BUDGETS
from lib.content.point_sets import point_set
from lib import chapters
from lib.explorers.definition import TEMPERATURES
from lib.explorers import smollm2 as page_model
from lib.explorers import web
from lib.explorers.registry import entry
from lib.model import minilm, smollm2
from lib.model.store import WEIGHTS, load, load_checkpoints, model_folder, read_model, shipped_names


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _row(what: str, seconds: float, budget: float | None, unit: str = "s") -> str:
    verdict = "" if budget is None else ("within" if seconds <= budget else "OVER") + f" budget {budget:g} {unit}"
    return f"{what:46s} {seconds:9.4f} {unit}   {verdict}"


def _p95(times: list[float]) -> float:
    return sorted(times)[max(0, int(round(0.95 * len(times))) - 1)]


def explorer(view: str):
    """The function that makes the registered explorer drawing `view` (found in its chapter's unit)."""
    return entry(view).make


def slider_steps(lm, steps: int = 40) -> list[tuple[str, float]]:
    """p95 of one control change in each kernel explorer: the view computed and handed to the picture.

    The widget's own observer runs synchronously when a control's value is set, so timing the
    assignment times what the kernel does for a reader; the picture itself is drawn in the browser
    (by the renderer the website uses; scripts/site_bench.py times that)."""
    prompts = ["<BOS> Pietro chiama", "<BOS> Pietro chiama Paolo"]

    def setting(box, name, values):
        # A control of the explorer by name, or one part of a control (the temperature's typed box).
        w = box.controls[name] if hasattr(box, "controls") else getattr(box, name)
        return [lambda v=v: setattr(w, "value", v) for v in values]

    def flipping(box, names):
        return [lambda w=box.controls[names[i % len(names)]]: setattr(w, "value", not w.value) for i in range(steps)]

    temperatures = [TEMPERATURES[(7 * i) % len(TEMPERATURES)] for i in range(steps)]
    cases = []
    box = explorer("temperature")(lm, prompts).widget()
    cases.append(("temperature slider", setting(box, "temperature", temperatures)))
    box = explorer("sampling")(lm, prompts).widget()
    cases.append(("sampling: temperature slider", setting(box, "temperature", temperatures)))
    # A temperature typed into the box beside the slider, over the read-out's whole range (1e-6 to 1000).
    typed = [f"{10 ** (-6 + 9 * ((7 * i) % steps) / steps):.3g}" for i in range(steps)]
    cases.append(("sampling: temperature typed", setting(box.controls["temperature"], "box", typed)))
    cases.append(("sampling: seed box", setting(box, "seed", [str(i % 21) for i in range(1, steps + 1)])))
    cases.append(("sampling: top-p box", setting(box, "top_p", [f"{0.05 + 0.02 * i:.2f}" for i in range(steps)])))
    box = explorer("lens")(lm, prompts).widget()
    words = ["Tarso", "Cefa", "vice", "capo", "Paolo"]
    cases.append(("lens: followed token", setting(box, "track", [words[i % 5] for i in range(steps)])))
    box = explorer("ablation")(lm, prompts).widget()
    heads = [c for c in box.controls if c.startswith("L")]
    cases.append(("head ablation: one toggle", flipping(box, heads)))
    box = explorer("pattern")(lm, prompts).widget()
    cases.append(("attention-pattern viewer: head", setting(box, "head", [i % 4 for i in range(1, steps + 1)])))
    box = explorer("path")(lm).widget()
    cases.append(("residual-path explorer: one toggle", flipping(box, [c for c in box.controls if c[0] in "LM"])))
    box = explorer("plane")().widget()
    axes = ["Paolo - Pietro", "Tarso", "Tarso - capo", "chiama - perde", "Cefa + Tarso - vice - capo"]
    cases.append(("concept-plane builder: axis 2", setting(box, "axis_2", [axes[i % 5] for i in range(steps)])))
    box = explorer("training")().widget()
    stops = box.controls["step"].options if hasattr(box.controls["step"], "options") else ()
    stops = [o[1] if isinstance(o, tuple) else o for o in stops]
    cases.append(("induction training: step slider", setting(box, "step", [stops[(7 * i) % len(stops)] for i in range(steps)])))
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
    out = []
    for name in shipped_names():
        data = (model_folder(name) / WEIGHTS).read_bytes()
        out.append((f"read {name} from disk, verified, median of {repeat}",
                    _median_time(lambda: read_model(name), repeat)))
        out.append((f"  of which the SHA-256 of its {len(data) // 1024} KiB",
                    _median_time(lambda: hashlib.sha256(data).hexdigest(), repeat)))
    return out


def tsne_steps(steps: int = 40) -> list[tuple[str, float]]:
    """The perplexity-and-seed explorer: building it (every layout its controls reach is read from
    the store then, as a reader meets it) and the p95 of one step of each control, on each point set."""
    maps = chapters.unit("three_ways").module("views")    # the chapter's maps, found by the walker
    out = []
    for points in maps.POINT_SETS:
        maps._RUNS.clear()
        maps.tsne_grid.cache_clear()
        usable = maps.valid_perplexities(points)
        t = time.perf_counter()
        box = explorer("tsne")(points).widget()
        out.append((f"t-SNE explorer ({points}): built, all {len(maps.grid_cells(points))} layouts read from data/tsne/", time.perf_counter() - t))
        stops = maps.step_stops(points)
        controls = [("perplexity", "perplexity", [usable[i % len(usable)] for i in range(1, steps + 1)]),
                    ("left seed", "left", [maps.SEEDS[i % len(maps.SEEDS)] for i in range(1, steps + 1)])]
        if len(stops) > 1:
            controls.append(("iterations", "steps", [stops[i % len(stops)] for i in range(1, steps + 1)]))
        for label, name, values in controls:
            times = []
            for v in values:
                t = time.perf_counter()
                box.controls[name].value = v
                times.append(time.perf_counter() - t)
            out.append((f"t-SNE explorer ({points}): {label}, one step, p95 of {steps}", _p95(times)))
    return out


def minilm_costs(repeat: int = 20) -> list[tuple[str, float, float | None]]:
    """all-MiniLM-L6-v2: loading it in a fresh process, and one sentence of 64 WordPiece tokens
    through its 6 layers with the cache (wall clock; the CPU time beside it shows a busy machine)."""
    if minilm.package_dir() is None:
        return []
    real = chapters.unit("ablation").module("explorers")   # the real model's attention explorer
    # torch's import is the budget of `import lib`; this is reading the files and building the model.
    code = ("from lib.model import minilm; import time; t=time.perf_counter(); minilm.load(); "
            "print(time.perf_counter()-t)")
    loads = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout) for _ in range(3)]
    lm = minilm.load()
    ids = lm.encode(" ".join(["the quick brown fox jumps over the lazy dog."] * 8))[:64]
    lm.run_with_cache(ids)
    cpu = time.process_time()
    wall = _median_time(lambda: lm.run_with_cache(ids), repeat)
    cpu = (time.process_time() - cpu) / repeat
    with tempfile.TemporaryDirectory() as folder:
        t = time.perf_counter()
        real.export_patterns(Path(folder), lm)
        site = time.perf_counter() - t
    return [("MiniLM: load in a fresh process (torch imported), median of 3", statistics.median(loads),
             BUDGETS["minilm_load"]),
            (f"MiniLM: the site's patterns, {len(real.sentences())} sentences (the build's precomputation)", site,
             BUDGETS["minilm_site_patterns"]),
            (f"MiniLM: run_with_cache, {len(ids)} tokens, median of {repeat}", wall, BUDGETS["minilm_sentence"]),
            ("  of which CPU time (mean)", cpu, None)]


def smollm2_costs(repeat: int = 10) -> list[tuple]:
    """SmolLM2-135M: loading it in a fresh process (the GGUF file read and dequantized), a prompt of 32
    tokens through the 30 layers filling the KV cache, one generated token, and a chapter's peak memory.
    Wall clock, with the processor time beside it: on a busy machine the two part."""
    if smollm2.package_file() is None:
        return []
    code = ("import time; from lib.model import smollm2; w=time.perf_counter(); c=time.process_time(); smollm2.load(); "
            "print(time.perf_counter()-w, time.process_time()-c)")
    loads = [tuple(map(float, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                             check=True).stdout.split())) for _ in range(3)]
    lm = smollm2.load()
    text = "Once upon a time, in a small village by the sea, there lived an old fisherman who told stories " * 2
    ids = lm.encode(text)[:32]
    logits, kv = lm.model.forward_with_kv(ids)
    nxt = [int(logits[-1].argmax())]

    def timed(fn):
        cpu = time.process_time()
        wall = _median_time(fn, repeat)
        return wall, (time.process_time() - cpu) / repeat
    prompt = timed(lambda: lm.model.forward_with_kv(ids))
    token = timed(lambda: lm.model.forward_with_kv(nxt, kv))
    return [("SmolLM2: load in a fresh process (dequantized), median of 3", statistics.median(w for w, _ in loads),
             BUDGETS["smollm2_load"]),
            ("  of which CPU time (median)", statistics.median(c for _, c in loads), None),
            (f"SmolLM2: a prompt of {len(ids)} tokens with the KV cache, median of {repeat}", prompt[0],
             BUDGETS["smollm2_prompt"]),
            ("  of which CPU time (mean)", prompt[1], None),
            (f"SmolLM2: one generated token with the KV cache, median of {repeat}", token[0], BUDGETS["smollm2_token"]),
            ("  of which CPU time (mean)", token[1], None)]


# The command line as a reader runs it, each call a process of its own: its processor time (user + system,
# the process and its children), which a busy machine does not inflate as it does the clock.
CLI_CALLS = [("models (every model's line, nothing loaded)", ["models"]),
             ("a mistake: predict with temperature -1 (one line, nothing loaded)",
              ["predict", "calling-game", "<BOS> Pietro", "--temperature", "-1"]),
             ("predict calling-game --json", ["predict", "calling-game", "<BOS> Pietro chiama Paolo", "--json"]),
             ("predict smollm2 --json (top 100 of 49,152)", ["predict", "smollm2", "The capital of France is", "--json"]),
             ("patch smollm2 on 5 tokens", ["patch", "smollm2", "The capital of France is", "The capital of Italy is", "--json"])]


def cli_costs() -> list[tuple]:
    rows = []
    for label, args in CLI_CALLS:
        if "smollm2" in args and smollm2.package_file() is None:
            continue
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "lib", *args], capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows.append((f"python -m lib {label}: CPU time", after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
                     None))
    return rows


def real_tokens() -> int:
    real = chapters.unit("induction").module("real")    # the chapter's own module, found by the registry
    return real.SEQUENCES * 2 * real.PERIOD


def induction_costs(repeat: int = 3) -> list[tuple]:
    """The induction model's checkpoints read, verified and built (what the kernel's training explorer
    does once), and the induction chapter's SmolLM2 section: its pass and its peak memory."""
    lm = load("induction")
    out = [(f"induction: {len(lm.meta['checkpoints']['steps'])} checkpoints read, verified, built, median of {repeat}",
            _median_time(lambda: load_checkpoints(lm), repeat), None)]
    if smollm2.package_file() is not None:
        real = chapters.unit("induction").module("real")    # the chapter's own module, found by the registry
        lm = smollm2.load()
        real.read()
        out.append((f"induction chapter, SmolLM2: every head's scores, one pass of {real_tokens()} tokens",
                    _median_time(lambda: real.live_scores(lm), 1), None))
    return out


# The real-model chapter's results page in the page: every prompt of the menu, the temperature moved along
# the slider, each move the page's twin (from the stored summary) plus the new picture, timed in the page.
_JS_REAL_MOVES = """async ([prompts, temperatures]) => {
    const views = await import('./explorers/views.js'), render = await import('./explorers/render.js');
    const args = {data: 'real/smollm2-menu'};
    const move = async (prompt, t) => {
        const values = {prompt, temperature: t, top_k: '', top_p: '0.9', seed: '0'};
        const t0 = performance.now();
        const view = await views.VIEWS.real_page({}, values, args);
        const t1 = performance.now();
        render.picture('real_page', view, {width: 640});
        return [performance.now() - t0, t1 - t0];
    };
    for (const p of prompts) await move(p, 1);          // each prompt's file fetched once, as a first pick does
    const times = [];
    for (const p of prompts) for (const t of temperatures) times.push(await move(p, t));
    return times;
}"""


def real_model_costs() -> list[tuple]:
    """SmolLM2 on the website (lib/chapters/part3/real_model): the build's runs of the menu in a fresh
    process with an empty cache, what a page loads of them (gzip), and one move of the results page's
    temperature in Chromium (the page's twin and the picture), p95 over every prompt and 20 temperatures."""
    if smollm2.package_file() is None:
        return []
    stored = chapters.unit("real_model").module("stored")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        code = ("import time; w=time.perf_counter(); from lib.chapters.part3.real_model import stored; "
                "stored.menu_runs(); print(time.perf_counter()-w)")
        seconds = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       env=dict(os.environ, COURSE_REAL_CACHE=tmp)).stdout.split()[-1])
        rows.append((f"SmolLM2: the site's menu, {len(stored.MENU)} prompts run (once per build; no cache)", seconds,
                     BUDGETS["smollm2_site_menu"]))
    # What data/real-model/decoding.json costs to make again (a build reads it instead, under its key).
    code = ("import time; w=time.perf_counter(); from lib.chapters.part3.real_model import decoding; "
            "from lib.model import smollm2; decoding.run(smollm2.load()); print(time.perf_counter()-w)")
    seconds = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()[-1])
    rows.append(("SmolLM2: the open prompts decoded five ways (shipped; made again)", seconds,
                 BUDGETS["smollm2_site_decoding"]))
    with tempfile.TemporaryDirectory() as tmp:
        from lib.explorers import web  # deferred: the site's files are written only here

        folder = Path(tmp)
        web.install(folder / "explorers")
        files = stored.export(folder / "explorers")
        size = {p.name if p.parent.name != stored.NAME else f"{stored.NAME}/{p.name}": len(gzip.compress(p.read_bytes(), 6))
                for p in files}
        index = size.pop(f"{stored.NAME}.json")
        per_prompt = [size[f"{stored.NAME}/{i}.json"] + size[f"{stored.NAME}/{i}.bin"] for i in range(len(stored.MENU))]
        rows.append(("SmolLM2 menu: what a page loads (index + its largest prompt), gzip", (index + max(per_prompt)) / 1e3,
                     None, "kB"))
        rows.append(("SmolLM2 menu: every prompt's files (served once per site), gzip", (index + sum(per_prompt)) / 1e6,
                     None, "MB"))
        (folder / "index.html").write_text("<!doctype html><title>bench</title><body></body>")
        handler = functools.partial(type("Quiet", (http.server.SimpleHTTPRequestHandler,),
                                         {"log_message": lambda *a: None}), directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        from playwright.sync_api import sync_playwright  # deferred: only the bench drives a browser

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                        headless=True, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
            temps = list(TEMPERATURES[::20])
            times = page.evaluate(_JS_REAL_MOVES, [list(stored.MENU), temps])
            browser.close()
        server.shutdown()
        rows.append((f"SmolLM2 results page in the page: one temperature move (twin + picture), p95 of {len(times)}",
                     _p95([t for t, _ in times]) / 1e3, BUDGETS["frame_ms"] / 1e3))
        rows.append(("  of which the page's twin (summary to view), p95", _p95([c for _, c in times]) / 1e3, None))
    return rows


def page_model_costs(repeat: int = 40) -> list[tuple]:
    """SmolLM2 as the page runs it (lib/explorers/js/smollm2/), in Node on one thread: the site's modules and the
    model's file written as the build writes them, CPU milliseconds of the page's own operations
    (scripts/smollm2_node.mjs); the browser's figures are scripts/site_bench.py's. Node runs with
    `--single-threaded`: V8's collector and compiler then work on the one thread too, so the process's CPU time
    is that thread's, all of it (without it, their helper threads' time is added to the token's)."""
    node = shutil.which("node")
    if node is None or smollm2.package_file() is None:
        return [("SmolLM2 in the page: Node.js or the model is missing, not measured", 0.0, None)]

    lm = smollm2.load()
    text = "The river ran past the old mill, and the miller counted the sacks of grain one by one while his"
    ids = lm.encode(text * 2)[:32]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        web.install(folder)
        page_model.export(folder)
        runner = Path(__file__).resolve().parents[2] / "scripts" / "smollm2_node.mjs"
        done = subprocess.run([node, "--single-threaded", str(runner), str(folder), str(folder / page_model.FOLDER)],
                              capture_output=True,
                              text=True, input=json.dumps([{"op": "bench", "ids": ids, "steps": repeat}]), check=True)
    out = json.loads(done.stdout)
    b = out["answers"][0]["result"]
    return [("SmolLM2 in the page (Node, one thread): loading the model from its parts", out["load_ms"] / 1e3, None),
            (f"SmolLM2 in the page: one new token with the cache at 32 positions, p95 of {repeat}",
             _p95(b["steps"]), BUDGETS["smollm2_page_token_ms"], "ms"),
            ("SmolLM2 in the page: a 32-token text from nothing", b["prefill"] / 1e3, BUDGETS["smollm2_page_prompt"]),
            ("SmolLM2 in the page: the logit lens of 30 layers at one position, p95 of 5", _p95(b["lens"]),
             BUDGETS["smollm2_page_lens_ms"], "ms"),
            ("SmolLM2 in the page: a 32-token text's whole run (page, lens, every pattern)", b["run"] / 1e3, None),
            ("SmolLM2 in the page: WebAssembly memory", b["memory"] / 2**20, BUDGETS["smollm2_page_memory_mb"], "MB")]


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

    lm = load("calling-game")
    ids = lm.encode("<BOS> Pietro chiama Paolo Tarso <SEP> Paolo chiama 5 <SEP> 5 chiama Pietro capo")
    with torch.no_grad():
        lm.model(ids)
    print(_row(f"forward pass, calling-game, {len(ids)} tokens", _median_time(lambda: lm.model(ids), 50),
               BUDGETS["forward"]))
    print(_row("run_with_cache, calling-game", _median_time(lambda: lm.model.run_with_cache(ids), 50),
               BUDGETS["forward"]))

    players = ["Pietro", "Paolo", *map(str, range(1, 9))]
    words = ["<BOS>"]
    while len(words) < lm.model.cfg.n_ctx:
        i = len(words)
        words += [players[i % 10], "chiama", players[(i + 1) % 10], "<SEP>"]
    clean = words[:lm.model.cfg.n_ctx]
    corrupted = [players[(players.index(w) + 5) % 10] if w in players else w for w in clean]
    first, second = lm.model(lm.encode(clean))[-1].argsort(descending=True)[:2].tolist()
    pair = (" ".join(clean), " ".join(corrupted), lm.vocab.tokens[first], lm.vocab.tokens[second])
    print(_row(f"patching grid, every head and MLP x {len(clean)} positions, median of 5",
               _median_time(lambda: patch(lm, *pair), 5), BUDGETS["patching_grid"]))

    for label, seconds in load_costs():
        print(_row(label, seconds, None))
    for label, seconds, budget in minilm_costs():
        print(_row(label, seconds, budget))
    for row in smollm2_costs():
        print(_row(*row))
    for row in cli_costs():
        print(_row(*row))
    print("(each chapter's peak memory, executed from nothing: scripts/book.py bench, the next part of make bench)")
    for row in induction_costs():
        print(_row(*row))
    for row in real_model_costs():
        print(_row(*row))
    for row in page_model_costs():
        print(_row(*row))

    t = time.perf_counter()
    import sklearn.manifold  # noqa: F401  (paid once per kernel, before the first layout)
    print(_row("import scikit-learn's t-SNE (once per kernel)", time.perf_counter() - t, None))
    rng = np.random.default_rng(0)
    os.environ["COURSE_TSNE_STORE"] = "off"      # time real runs here, not reads from data/tsne/
    sets = [("28 calling-game rows", point_set("calling-game"), 5),
            ("84 real-language rows", point_set("real-language"), 10)]
    for label, ps, perp in sets:
        # Each run uses a new seed, so nothing is reused: this is the uncached cost of a first
        # layout; a step back to a layout already seen is a dictionary lookup in the explorer.
        runs, times = [], []
        for seed in range(5):
            t = time.perf_counter()
            runs.append(tsne_run(ps.vectors, perplexity=perp, seed=seed))
            times.append(time.perf_counter() - t)
        print(_row(f"t-SNE, {label}, perplexity {perp}, uncached, median of 5", statistics.median(times),
                   BUDGETS["tsne_first"]))
        print(f"    iterations {[r.n_iter for r in runs]}, converged {sum(r.converged for r in runs)} of 5, "
              f"KL {[round(r.kl, 3) for r in runs]}, same-group share of 5 nearest "
              f"{[round(same_group_share(r.layout, ps.groups), 3) for r in runs]}")
    wide = rng.normal(size=(84, 384))
    seeds = iter(range(100))
    print(_row("t-SNE, 84 random points of 384 dimensions, median of 5",
               _median_time(lambda: tsne_run(wide, perplexity=15, seed=next(seeds)), 5), BUDGETS["tsne_first"]))
    del os.environ["COURSE_TSNE_STORE"]
    for label, seconds in tsne_steps():
        print(_row(label, seconds, BUDGETS["tsne_step"] if "p95" in label else None))

    for label, seconds in slider_steps(lm):
        print(_row(f"{label}, one step, p95 of 40", seconds, BUDGETS["slider_step"]))

    if train_models:
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
