"""`python scripts/site_bench.py`: the explorers on the built site, in figures.

For every page with an explorer: the page's weight, the bytes of explorer data in it (budget 2 MB),
and in Chromium, served from 127.0.0.1, the time from moving a control to the new picture in the
page (p95 over every control moved several times; budget one frame, 16 ms). Prints; asserts nothing.
"""
from __future__ import annotations

import functools
import http.server
import re
import shutil
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
DATA_BUDGET = 2_000_000
FRAME_MS = 16.0

# Moves every control of every explorer on the page `rounds` times and times each update: the
# event handler runs synchronously, so the time to the end of dispatchEvent is the time until the
# new picture is in the page (the browser paints it in the next frame).
TIMING = """(rounds) => {
  const times = [];
  document.querySelectorAll('.course-static [data-control]').forEach(el => {
    for (let r = 0; r < rounds; r++) {
      const t = performance.now();
      if (el.tagName === 'BUTTON') { el.click(); }
      else if (el.type === 'range') { el.value = String((+el.value + 1) % (+el.max + 1)); el.dispatchEvent(new Event('input')); }
      else { el.selectedIndex = (el.selectedIndex + 1) % el.options.length; el.dispatchEvent(new Event('change')); }
      times.push(performance.now() - t);
    }
  });
  times.sort((a, b) => a - b);
  return [times.length, times[Math.max(0, Math.ceil(0.95 * times.length) - 1)], times[times.length - 1]];
}"""


def explorer_bytes(html: str) -> int:
    return sum(len(m.encode()) for m in re.findall(r'<script type="application/json" class="course-explorer-data">(.*?)</script>',
                                                 html, re.S))


def main() -> int:
    from playwright.sync_api import sync_playwright

    if not (SITE / "index.html").exists():
        print("the site is not built: run `make book` first")
        return 1
    pages = sorted(p for p in SITE.rglob("*.html") if 'class="course-explorer-data"' in p.read_text(errors="ignore"))
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    print(f"{'page':42s} {'page KB':>8s} {'explorer data KB':>17s} {'moves':>6s} {'p95 ms':>7s} {'max ms':>7s}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        for path in pages:
            rel = path.relative_to(SITE).as_posix()
            text = path.read_text()
            page = browser.new_page()
            page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
            page.goto(f"{url}/{rel}")
            page.wait_for_selector(".course-static-live")
            moves, p95, worst = page.evaluate(TIMING, 5)
            data = explorer_bytes(text)
            flag = "" if data <= DATA_BUDGET and p95 <= FRAME_MS else "  OVER budget"
            print(f"{rel:42s} {len(text.encode()) / 1e3:8.0f} {data / 1e3:17.0f} {moves:6d} {p95:7.2f} {worst:7.2f}{flag}")
            page.close()
        browser.close()
    server.shutdown()
    print(f"budgets: explorer data <= {DATA_BUDGET / 1e6:g} MB a page; an update within one frame ({FRAME_MS:g} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
