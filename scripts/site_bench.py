"""`python scripts/site_bench.py`: the built website in Chromium, in figures (part of `make bench`).

For every page: its weight as a host serves it (every file the page loads, gzip-compressed the
way a web server compresses text; fonts and images counted as they are) and its number of
requests. For every page with an explorer, also: the time from the start of the page's load until
its explorers answer a first move (budget 1 s), and the time of one interaction, the model's
forward pass in the page plus the new picture, p95 over prompts of every length up to the
model's context (budget one frame, 16 ms). Served from 127.0.0.1; prints, asserts nothing.

    python scripts/site_bench.py [--pages all|explorers] [--json FILE]
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
FRAME_MS = BUDGETS["frame_ms"]
READY_MS = BUDGETS["ready_ms"]
# Files a host sends as they are (already compressed); everything else is gzip-compressed.
COMPRESSED = (".woff2", ".woff", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".gz")


def served_size(url: str, body: bytes) -> int:
    path = url.split("?")[0].split("#")[0].lower()
    if path.endswith(COMPRESSED):
        return len(body)
    return len(gzip.compress(body, compresslevel=6))


def page_weight(browser, url: str) -> dict:
    """Every response of one page load (until the network is idle): count, raw bytes, gzip bytes."""
    context = browser.new_context()
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
    context.close()
    local = [(u, b) for u, b in bodies if not u.startswith(("data:", "blob:"))]
    return {"requests": len(local), "raw": sum(len(b) for _, b in local),
            "gzip": sum(served_size(u, b) for u, b in local),
            "files": sorted(((served_size(u, b), u.split("/_static/")[-1] if "/_static/" in u else u.rsplit("/", 1)[-1])
                             for u, b in local), reverse=True)}


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
    server, url = serve(SITE)
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    rows = []
    print(f"{'page':42s} {'requests':>8s} {'raw KB':>8s} {'gzip KB':>8s} {'ready ms':>9s} {'move p95 ms':>12s} "
          f"{'(compute':>9s} {'draw)':>6s} {'moves':>6s}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        for path in pages:
            rel = path.relative_to(SITE).as_posix()
            weight = page_weight(browser, f"{url}/{rel}")
            timing = explorer_timings(browser, f"{url}/{rel}") if has_explorer[path] else None
            over = weight["gzip"] > WEIGHT_BUDGET or (timing and (timing["ready_ms"] > READY_MS
                                                                  or timing["p95_ms"] > FRAME_MS))
            rows.append({"page": rel, "explorer": has_explorer[path], **weight, "timing": timing})
            t = (f"{timing['ready_ms']:9.0f} {timing['p95_ms']:12.2f} {timing['compute_p95_ms']:9.2f} "
                 f"{timing['draw_p95_ms']:6.2f} {timing['moves']:6d}" if timing else f"{'':9s} {'':12s} {'':16s} {'':6s}")
            print(f"{rel:42s} {weight['requests']:8d} {weight['raw'] / 1e3:8.0f} {weight['gzip'] / 1e3:8.0f} {t}"
                  + ("  OVER budget" if over else ""))
        browser.close()
    server.shutdown()
    for kind, chosen in (("with explorers", [r for r in rows if r["explorer"]]),
                         ("without explorers", [r for r in rows if not r["explorer"]])):
        if chosen:
            print(f"pages {kind}: {len(chosen)}; gzip {min(r['gzip'] for r in chosen) / 1e3:.0f}-"
                  f"{max(r['gzip'] for r in chosen) / 1e3:.0f} KB, raw {min(r['raw'] for r in chosen) / 1e6:.2f}-"
                  f"{max(r['raw'] for r in chosen) / 1e6:.2f} MB, requests {min(r['requests'] for r in chosen)}-"
                  f"{max(r['requests'] for r in chosen)}")
    print(f"budgets: page weight <= {WEIGHT_BUDGET / 1e6:g} MB gzip; explorers ready <= {READY_MS:g} ms after the "
          f"load starts; one interaction (forward pass + picture) <= {FRAME_MS:g} ms p95")
    if opts.json:
        Path(opts.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
