"""`python scripts/site_bench.py`: the built website in Chromium, in figures (part of `make bench`).

For every page: its weight as a host serves it (every file the page loads, gzip-compressed the
way a web server compresses text; fonts and images counted as they are) and its number of
requests; what a page fetches after its explorers are ready (the induction explorer's checkpoints)
is listed apart, beside it, not in its weight. For every page with an explorer, also: the time from the start of the page's load until
its explorers answer a first move (budget 1 s), and the time of one interaction, the model's
forward pass in the page plus the new picture, p95 over prompts of every length up to the
model's context (budget one frame, 16 ms). Served from 127.0.0.1; prints, asserts nothing.

    python scripts/site_bench.py [--pages all|explorers] [--only PAGE] [--json FILE]
"""
from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import shutil
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
from lib.budgets import BUDGETS  # noqa: E402

WEIGHT_BUDGET = BUDGETS["page_gzip_bytes"]
TASK_MS = BUDGETS["longest_task_ms"]
FRAME_MS = BUDGETS["frame_ms"]
READY_MS = BUDGETS["ready_ms"]
# Files a host sends as they are (already compressed); everything else is gzip-compressed.
COMPRESSED = (".woff2", ".woff", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".gz")


def served_size(url: str, body: bytes) -> int:
    path = url.split("?")[0].split("#")[0].lower()
    if path.endswith(COMPRESSED):
        return len(body)
    return len(gzip.compress(body, compresslevel=6))


# The addresses the explorers fetched after they were ready (what the views ask for `later`, such as the
# induction explorer's checkpoints): the resource timings of fetch() calls that start after `readyAt`.
# Fonts, styles and scripts the page itself loads late stay in its weight.
JS_LATER = """() => { const s = window.courseExplorers;
    if (!s || !s.ready) return [];
    return performance.getEntriesByType('resource').filter((e) => e.initiatorType === 'fetch' && e.startTime > s.readyAt)
        .map((e) => e.name); }"""


# Every long task (tests/browser/conftest.py measures them on its per-page visit too) of the page's main thread (over 50 ms: the browser's own threshold), from the first script on.
LONG_TASKS = """window.__courseLongTasks = [];
try {
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__courseLongTasks.push([e.startTime, e.duration]); })
    .observe({ type: "longtask", buffered: true });
} catch (e) { /* a browser without long-task timing reports none */ }"""
# The long tasks that began once the page was shown (its first contentful paint), [start ms, duration ms].
SHOWN_LONG_TASKS = """() => { const shown = performance.getEntriesByName('first-contentful-paint')[0];
    const at = shown ? shown.startTime : 0;
    return (window.__courseLongTasks || []).filter(([start]) => start >= at); }"""


def page_weight(browser, url: str) -> dict:
    """Every response of one page load (until the network is idle): count, raw bytes, gzip bytes; and,
    apart, what the page fetched after its explorers were ready ("later": not part of the page's budget,
    which is what a reader waits for); and the longest task of its main thread once it was shown, with
    its icon fonts' bytes."""
    context = browser.new_context()
    context.add_init_script(LONG_TASKS)
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("data:", "blob:"))
                  or "127.0.0.1" in r.request.url else r.abort())
    page = context.new_page()
    bodies = []

    def keep(response):
        try:
            bodies.append((response.url, response.body()))
        except Exception:       # a redirect or an aborted request has no body
            pass

    page.on("response", keep)
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(300)          # late requests (fonts after typesetting)
    later = set(page.evaluate(JS_LATER))
    tasks = page.evaluate(SHOWN_LONG_TASKS)
    context.close()
    every = [(u, b) for u, b in bodies if not u.startswith(("data:", "blob:"))]
    local = [(u, b) for u, b in every if u not in later]
    return {"requests": len(local), "raw": sum(len(b) for _, b in local),
            "longest_task_ms": max((d for _, d in tasks), default=0.0), "long_tasks": len(tasks),
            "icon_font_bytes": sum(len(b) for u, b in local if "/fontawesome/" in u),
            "gzip": sum(served_size(u, b) for u, b in local),
            "later_gzip": sum(served_size(u, b) for u, b in every if u in later),
            "later": sorted(u.split("/_static/")[-1] for u, _ in every if u in later),
            "files": sorted(((served_size(u, b), u.split("/_static/")[-1] if "/_static/" in u else u.rsplit("/", 1)[-1])
                             for u, b in local), reverse=True)}


def longest_task_cpu(browser, url: str) -> float:
    """The processor time of the page's longest main-thread task once it is shown (its first contentful paint),
    from Chrome's trace (a task's thread time): on a busy machine a task's clock time grows with everything
    else the machine runs, its thread time hardly at all, so this is the figure to read against the budget
    there."""
    page = browser.new_page()
    browser.start_tracing(page=page, categories=["devtools.timeline", "disabled-by-default-devtools.timeline", "loading"])
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(500)
    trace = json.loads(browser.stop_tracing())
    page.close()
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    main = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"
            and e.get("args", {}).get("name") == "CrRendererMain"}
    shown = [e["ts"] for e in events if e.get("name") == "firstContentfulPaint"]
    tasks = [e for e in events if e.get("name") == "RunTask" and (e.get("pid"), e.get("tid")) in main]
    return max((e.get("tdur", 0) / 1e3 for e in tasks if not shown or e["ts"] >= shown[0]), default=0.0)


def explorer_timings(browser, url: str) -> dict | None:
    """Ready time and interaction p95 of the explorers on one page, measured by the page itself
    (course-explorers' bench hook), or None if the page has no live explorers."""
    context = browser.new_context()
    context.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
    page = context.new_page()
    page.goto(url)
    try:
        page.wait_for_function("() => window.courseExplorers && window.courseExplorers.ready", timeout=10000)
    except Exception:
        context.close()
        return None
    ready = page.evaluate("() => window.courseExplorers.readyAt")
    figures = page.evaluate("() => window.courseExplorers.bench()")
    context.close()
    return {"ready_ms": ready, **figures}


# The induction chapter's training explorer: when its checkpoints (fetched after the page is ready) have
# arrived, and one move of its slider (a checkpoint's forward pass on the shown sequence and the new
# picture, laid out), over every checkpoint, twice, in a scattered order.
INDUCTION_PAGE = "chapters/part1/induction.html"
JS_INDUCTION_BENCH = """async () => {
    const s = window.courseExplorers;
    await Promise.all(s.later);
    const file = performance.getEntriesByType('resource').find((e) => e.name.includes('.checkpoints.'));
    const ex = s.explorers.find((e) => e.spec.view === 'training');
    const slider = ex.root.querySelector('input[type=range][data-control="step"]'), n = +slider.max + 1;
    const times = [], compute = [];
    for (let r = 0; r < 2; r++) for (let i = 0; i < n; i++) {
        slider.value = String((7 * i + r) % n);
        const t = performance.now();
        await ex.update();
        void ex.root.querySelector('.course-figure').offsetHeight;
        times.push(performance.now() - t);
        compute.push(ex.timing[0]);
    }
    const p95 = (xs) => { xs = xs.slice().sort((a, b) => a - b); return xs[Math.ceil(0.95 * xs.length) - 1]; };
    return {ready_ms: s.readyAt, checkpoints_start_ms: file ? file.startTime : null,
            checkpoints_ms: file ? file.responseEnd : null, moves: times.length, p95_ms: p95(times),
            median_ms: times.slice().sort((a, b) => a - b)[Math.floor(times.length / 2)],
            compute_p95_ms: p95(compute), max_ms: Math.max(...times)};
}"""


def induction_timings(browser, url: str) -> dict | None:
    """The training explorer's page: its checkpoints' arrival and one slider move, p95 (None: no such page)."""
    if not (SITE / INDUCTION_PAGE).exists():
        return None
    context = browser.new_context()
    context.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
    page = context.new_page()
    page.goto(f"{url}/{INDUCTION_PAGE}")
    page.wait_for_function("() => window.courseExplorers && window.courseExplorers.ready", timeout=10000)
    figures = page.evaluate(JS_INDUCTION_BENCH)
    context.close()
    return figures


PATCHING_MS = {"grid": 1000.0, "first_row": 100.0, "pick": 16.0}

JS_PATCHING_BENCH = """async (n) => {
    const base = new URL('_static/explorers/', document.baseURI).href;
    const { loadModel } = await import(base + 'model.js');
    const views = await import(base + 'views.js'), readout = await import(base + 'readout.js');
    const m = await loadModel(base + 'models/', 'calling-game');
    const players = ['Pietro', 'Paolo', '1', '2', '3', '4', '5', '6', '7', '8'];
    const out = [];
    for (let r = 0; r < 3; r++) {
        // A prompt of n tokens (calls in a row), and its corrupted twin (every player renamed).
        const words = ['<BOS>'];
        for (let i = 0; words.length < n; i++) words.push(players[(i + r) % 10], 'chiama', players[(i + r + 1) % 10], '<SEP>');
        const clean = words.slice(0, n);
        const a = m.encode(clean.join(' ')), b = m.encode(clean.map((w) => (players.includes(w) ? players[(players.indexOf(w) + 5) % 10] : w)).join(' '));
        const [t, u] = readout.order(m.promptLogits(a)).slice(0, 2);      // the clean run's two best tokens
        const start = performance.now();
        let first = null;
        const grid = views.UNITS['part1/ablation'].patchingGrid(m, a, b, t, u, () => { if (first === null) first = performance.now() - start; });
        const whole = performance.now() - start;
        const t0 = performance.now();
        views.VIEWS.patching({model: m}, {clean: a.map((i) => m.vocab.tokens[i]).join(' '), swap: false,
            corrupted: b.map((i) => m.vocab.tokens[i]).join(' '), target: m.vocab.tokens[t], against: m.vocab.tokens[u],
            cell: 'L0H3', position: ''});
        const view = performance.now() - t0;
        const t1 = performance.now();     // a pick: another cell of the same grid
        views.VIEWS.patching({model: m}, {clean: a.map((i) => m.vocab.tokens[i]).join(' '), swap: false,
            corrupted: b.map((i) => m.vocab.tokens[i]).join(' '), target: m.vocab.tokens[t], against: m.vocab.tokens[u],
            cell: 'MLP0', position: '3'});
        out.push({whole, first, view, pick: performance.now() - t1});
    }
    return out;
}"""


# The grid as the page's explorer draws it: row by row (views.js gives each partial view to `progress`,
# yielding to the browser between rows), into a figure on the page. "First cells visible": from the
# start of the computation to the first animation frame after a drawing that holds a row of cells
# (the frame in which the browser paints them).
JS_PROGRESSIVE_BENCH = """async (n) => {
    const base = new URL('_static/explorers/', document.baseURI).href;
    const { loadModel } = await import(base + 'model.js');
    // A module of its own (its cache of grids empty): every grid here is computed, none looked up.
    const views = await import(base + 'views.js?progressive'), readout = await import(base + 'readout.js');
    const render = await import(base + 'render.js');
    const m = await loadModel(base + 'models/', 'calling-game');
    const players = ['Pietro', 'Paolo', '1', '2', '3', '4', '5', '6', '7', '8'];
    const figure = document.createElement('div');
    document.body.prepend(figure);
    const out = [];
    for (let r = 3; r < 6; r++) {       // prompts the other benchmark did not compute (no grid cached)
        const words = ['<BOS>'];
        for (let i = 0; words.length < n; i++) words.push(players[(i + r) % 10], 'chiama', players[(i + r + 1) % 10], '<SEP>');
        const clean = words.slice(0, n);
        const corrupted = clean.map((w) => (players.includes(w) ? players[(players.indexOf(w) + 5) % 10] : w));
        const [t, u] = readout.order(m.promptLogits(m.encode(clean.join(' ')))).slice(0, 2);
        const values = {clean: clean.join(' '), swap: false, corrupted: corrupted.join(' '), target: m.vocab.tokens[t],
                        against: m.vocab.tokens[u], cell: 'L0H3', position: ''};
        const start = performance.now();
        let visible = null, drawn = 0;
        const progress = (view) => {
            render.draw(figure, 'patching', view, {width: 640});
            drawn++;
            if (visible === null && view.grid.some(Boolean)) {
                visible = -1;
                requestAnimationFrame(() => { visible = performance.now() - start; });
            }
        };
        const view = await views.VIEWS.patching({model: m, progress, stale: () => false}, values);
        render.draw(figure, 'patching', view, {width: 640});
        const whole = performance.now() - start;
        await new Promise((done) => requestAnimationFrame(done));
        out.push({visible, whole, drawn});
    }
    figure.remove();
    return out;
}"""


def patching_timings(browser, url: str, n: int = 48) -> dict:
    """The patching grid in the page on a prompt of `n` tokens: the whole grid (8 heads and 2 MLPs x n
    positions), its first row, and one whole view (the grid and one picked cell's results page)."""
    context = browser.new_context()
    page = context.new_page()
    # intro.html, not index.html: the site's index is a redirect, and a page that navigates away
    # destroys the context the benchmark runs in.
    page.goto(f"{url}/intro.html")
    runs = page.evaluate(JS_PATCHING_BENCH, n)
    drawn = page.evaluate(JS_PROGRESSIVE_BENCH, n)
    context.close()
    def best(k, rs=runs):
        xs = sorted(r[k] for r in rs if r[k] is not None and r[k] >= 0)
        return xs[len(xs) // 2] if xs else float("nan")
    return {"grid_ms": best("whole"), "first_row_ms": best("first"), "view_ms": best("view"), "pick_ms": best("pick"),
            "first_visible_ms": best("visible", drawn), "drawn_whole_ms": best("whole", drawn),
            "drawings": best("drawn", drawn)}


REAL_PAGE = "chapters/part3/real-model.html"
# Every long task of the page's main thread (over 50 ms), recorded from the start of its load.
def real_model_timings(browser, url: str) -> dict | None:
    """SmolLM2 loaded into the real-model page: the download from the site and the load, the worker's own
    timings (one token with the cache at 32 positions, a 32-token text, the lens of every block), a typed text to
    its picture, a continuation decoded in the worker, the page's longest main-thread task while the model works,
    and, on a second visit (the browser's cache), the time from the button to the first result of a shared link's
    text."""
    context = browser.new_context()
    context.add_init_script(LONG_TASKS)
    page = context.new_page()
    page.goto(f"{url}/{REAL_PAGE}")
    page.wait_for_function("window.courseExplorers && window.courseExplorers.ready")
    if not page.locator(".course-real-load").count():
        context.close()
        return None
    ms = lambda: page.evaluate("performance.now()")  # noqa: E731
    loaded_at = ms()
    page.locator(".course-real-load").first.click()
    page.wait_for_function("window.courseSmolLM2.state === 'ready'", timeout=600_000)
    load_ms = ms() - loaded_at
    info = page.evaluate("window.courseSmolLM2.info")
    text = ("The river ran past the old mill, and the miller counted the sacks of grain one by one while his wife "
            "watched the road")
    inner = page.evaluate("(t) => window.courseSmolLM2.call('bench', { text: t, steps: 40 }).promise", text)
    views = page.evaluate("window.courseExplorers.explorers.map((e) => e.spec.view)")
    timed = {}
    for view in ("real_page", "real_decode"):
        i = views.index(view)
        box = page.locator(".course-explorer").nth(i).get_by_role("textbox", name="Your text")
        before = page.evaluate(f"window.courseExplorers.explorers[{i}].settled")
        t = ms()
        box.fill(text)
        page.wait_for_function(f"window.courseExplorers.explorers[{i}].settled > {before}", timeout=600_000)
        timed[view] = ms() - t
    tasks = page.evaluate(f"window.__courseLongTasks.filter(([start]) => start >= {loaded_at})")
    page.wait_for_timeout(400)                     # the address follows the picture once the moves pause
    shared = page.url
    again = context.new_page()
    again.goto(shared)
    again.wait_for_function("window.courseExplorers && window.courseExplorers.ready")
    i = views.index("real_page")
    t0 = again.evaluate("performance.now()")
    again.locator(".course-real-load").first.click()
    again.wait_for_function(f"(() => {{ const e = window.courseExplorers.explorers[{i}]; return e.drawn && "
                            f"e.drawn.view.tokens.join('').startsWith({text[:20]!r}); }})()", timeout=600_000)
    cached_ms = again.evaluate("performance.now()") - t0
    from_cache = again.evaluate("window.courseSmolLM2.info.fromCache === window.courseSmolLM2.info.bytes")
    context.close()
    steps = sorted(inner["steps"])
    return {"load_ms": load_ms, "bytes": info["bytes"], "memory_mb": info["memory"] / 2**20,
            "token_p95_ms": steps[max(0, round(0.95 * len(steps)) - 1)], "prefill_ms": inner["prefill"],
            "lens_ms": sorted(inner["lens"])[len(inner["lens"]) // 2], "page_ms": timed["real_page"],
            "decode_ms": timed["real_decode"], "longest_task_ms": max([d for _, d in tasks] or [0.0]),
            "long_tasks": len(tasks), "cached_ms": cached_ms, "from_cache": from_cache}


def serve(site: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def main(argv=None) -> int:
    from playwright.sync_api import sync_playwright

    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--pages", choices=("all", "explorers"), default="all")
    args.add_argument("--only", help="one page, as a path under the site (chapters/part1/induction.html)")
    args.add_argument("--json", help="also write the figures to this file")
    opts = args.parse_args(argv)
    if not (SITE / "index.html").exists():
        print("the site is not built: run `make book` first")
        return 1
    pages = sorted(p for p in SITE.rglob("*.html") if "_static" not in p.parts
                   and p.name not in ("genindex.html", "search.html"))
    has_explorer = {p: 'class="course-explorer' in p.read_text(errors="ignore") for p in pages}
    if opts.pages == "explorers":
        pages = [p for p in pages if has_explorer[p]]
    if opts.only:
        pages = [p for p in pages if p.relative_to(SITE).as_posix() == opts.only]
        if not pages:
            print(f"no page {opts.only} in the built site")
            return 1
    server, url = serve(SITE)
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    rows = []
    print(f"{'page':42s} {'requests':>8s} {'raw KB':>8s} {'gzip KB':>8s} {'icons KB':>8s} {'task ms':>8s} {'(CPU)':>6s} "
          f"{'ready ms':>9s} "
          f"{'move p95 ms':>12s} {'(compute':>9s} {'draw)':>6s} {'moves':>6s} {'later KB':>9s}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        for path in pages:
            rel = path.relative_to(SITE).as_posix()
            weight = page_weight(browser, f"{url}/{rel}")
            weight["longest_task_cpu_ms"] = longest_task_cpu(browser, f"{url}/{rel}")
            timing = explorer_timings(browser, f"{url}/{rel}") if has_explorer[path] else None
            over = weight["gzip"] > WEIGHT_BUDGET or weight["longest_task_ms"] > TASK_MS or (
                timing and (timing["ready_ms"] > READY_MS or timing["p95_ms"] > FRAME_MS))
            rows.append({"page": rel, "explorer": has_explorer[path], **weight, "timing": timing})
            t = (f"{timing['ready_ms']:9.0f} {timing['p95_ms']:12.2f} {timing['compute_p95_ms']:9.2f} "
                 f"{timing['draw_p95_ms']:6.2f} {timing['moves']:6d}" if timing else f"{'':9s} {'':12s} {'':16s} {'':6s}")
            later = f" {weight['later_gzip'] / 1e3:9.0f}" if weight["later"] else ""
            print(f"{rel:42s} {weight['requests']:8d} {weight['raw'] / 1e3:8.0f} {weight['gzip'] / 1e3:8.0f} "
                  f"{weight['icon_font_bytes'] / 1e3:8.1f} {weight['longest_task_ms']:8.0f} "
                  f"{weight['longest_task_cpu_ms']:6.0f} {t}{later}"
                  + ("  OVER budget" if over else ""))
        patching = None if opts.only else patching_timings(browser, url)
        induction = induction_timings(browser, url) if opts.only in (None, INDUCTION_PAGE) else None
        real = real_model_timings(browser, url) if opts.only in (None, REAL_PAGE) else None
        browser.close()
    server.shutdown()
    if patching:
        print(f"patching grid in the page, 48 tokens (median of 3): whole {patching['grid_ms']:.0f} ms (budget "
              f"{PATCHING_MS['grid']:g}), first row {patching['first_row_ms']:.0f} ms (budget {PATCHING_MS['first_row']:g}), "
              f"the whole view with a picked cell {patching['view_ms']:.0f} ms, a pick of another cell "
              f"{patching['pick_ms']:.1f} ms (budget {PATCHING_MS['pick']:g})")
        print(f"patching grid drawn row by row in the page, 48 tokens (median of 3): first cells visible "
              f"{patching['first_visible_ms']:.0f} ms (budget {PATCHING_MS['first_row']:g}), whole grid drawn "
              f"{patching['drawn_whole_ms']:.0f} ms (budget {PATCHING_MS['grid']:g}), in {patching['drawings']} drawings")
    for r in rows:
        if r["later"]:
            print(f"{r['page']}: fetched after the page was ready (not in its weight): {', '.join(r['later'])}, "
                  f"{r['later_gzip'] / 1e3:.0f} KB gzip")
    if induction:
        print(f"induction training explorer: ready {induction['ready_ms']:.0f} ms (budget {READY_MS:g}); its checkpoints "
              f"asked for at {induction['checkpoints_start_ms']:.0f} ms, arrived at {induction['checkpoints_ms']:.0f} ms; "
              f"one slider move (forward pass + picture) p95 {induction['p95_ms']:.2f} ms over {induction['moves']} moves, "
              f"median {induction['median_ms']:.2f} "
              f"(compute {induction['compute_p95_ms']:.2f}, max {induction['max_ms']:.2f}; budget {FRAME_MS:g})"
              + ("  OVER budget" if induction["p95_ms"] > FRAME_MS or induction["ready_ms"] > READY_MS else ""))
    if real:
        def over(x, name):
            return "within" if x <= BUDGETS[name] else "OVER"
        print(f"SmolLM2 in the page: {real['bytes'] / 1e6:.1f} MB downloaded from the site and loaded in "
              f"{real['load_ms'] / 1e3:.1f} s; WebAssembly memory {real['memory_mb']:.0f} MiB "
              f"({over(real['memory_mb'], 'smollm2_page_memory_mb')} budget {BUDGETS['smollm2_page_memory_mb']:g})")
        print(f"  in the page's worker: one token with the cache at 32 positions p95 {real['token_p95_ms']:.1f} ms "
              f"({over(real['token_p95_ms'], 'smollm2_page_token_ms')} budget {BUDGETS['smollm2_page_token_ms']:g}); "
              f"a 32-token text {real['prefill_ms']:.0f} ms ({over(real['prefill_ms'] / 1e3, 'smollm2_page_prompt')} budget "
              f"{BUDGETS['smollm2_page_prompt'] * 1e3:g}); the lens of 30 layers {real['lens_ms']:.0f} ms "
              f"({over(real['lens_ms'], 'smollm2_page_lens_ms')} budget {BUDGETS['smollm2_page_lens_ms']:g})")
        print(f"  a typed text to its next-token picture {real['page_ms']:.0f} ms; a greedy continuation {real['decode_ms']:.0f} ms; "
              f"the main thread's longest task while the model loaded and worked {real['longest_task_ms']:.0f} ms over "
              f"{real['long_tasks']} long tasks ({over(real['longest_task_ms'], 'main_thread_ms')} budget "
              f"{BUDGETS['main_thread_ms']:g})")
        print(f"  second visit, from the browser's cache ({'yes' if real['from_cache'] else 'NO'}) to the first result: "
              f"{real['cached_ms'] / 1e3:.1f} s ({over(real['cached_ms'] / 1e3, 'smollm2_page_cached')} budget "
              f"{BUDGETS['smollm2_page_cached']:g})")
    for kind, chosen in (("with explorers", [r for r in rows if r["explorer"]]),
                         ("without explorers", [r for r in rows if not r["explorer"]])):
        if chosen:
            print(f"pages {kind}: {len(chosen)}; gzip {min(r['gzip'] for r in chosen) / 1e3:.0f}-"
                  f"{max(r['gzip'] for r in chosen) / 1e3:.0f} KB, raw {min(r['raw'] for r in chosen) / 1e6:.2f}-"
                  f"{max(r['raw'] for r in chosen) / 1e6:.2f} MB, requests {min(r['requests'] for r in chosen)}-"
                  f"{max(r['requests'] for r in chosen)}")
    if rows:
        worst = max(rows, key=lambda r: r["longest_task_ms"])
        cpu = max(rows, key=lambda r: r["longest_task_cpu_ms"])
        print(f"longest task once a page is shown: {worst['longest_task_ms']:.0f} ms ({worst['page']}; budget {TASK_MS:g} "
              f"ms); by processor time {cpu['longest_task_cpu_ms']:.0f} ms ({cpu['page']}); pages with a long task: "
              f"{sum(r['long_tasks'] > 0 for r in rows)} of {len(rows)}; icon fonts "
              f"{max(r['icon_font_bytes'] for r in rows) / 1e3:.1f} KB at most on a page")
    print(f"budgets: page weight <= {WEIGHT_BUDGET / 1e6:g} MB gzip; longest task <= {TASK_MS:g} ms once shown; "
          f"explorers ready <= {READY_MS:g} ms after the "
          f"load starts; one interaction (forward pass + picture) <= {FRAME_MS:g} ms p95")
    if opts.json:
        Path(opts.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
