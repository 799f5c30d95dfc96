"""Browser fixtures: the built site served on 127.0.0.1, and Debian's Chromium under Playwright.

Every request that does not go to 127.0.0.1 is refused (Chromium resolves no other host name) and
recorded, so a test can assert that no page reached outside (tests/browser/test_site.py shows both).
The requests are not intercepted: an intercepted request makes a round trip through this process and
turns the browser's cache off (the answer-box file took 102 CPU-s with interception, 83 without).
"""
import functools
import http.server
import os
import shutil
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "scripts"))
from site_bench import LONG_TASKS, SHOWN_LONG_TASKS  # noqa: E402  (the bench's measure of long tasks, used here too)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 # every host name but 127.0.0.1 fails to resolve: nothing reaches outside
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def site_url():
    if not (SITE / "index.html").exists():
        pytest.fail("the site is not built: run `make book` (make test builds it first)")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian's chromium is not installed (apt-get install chromium); make test installs it")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Visit:
    """One page load with its console errors, the outside requests it tried and its long tasks."""

    def __init__(self, page):
        self.page = page
        self.console_errors: list[str] = []
        self.outside: list[str] = []
        self.failed: list[str] = []

    def long_tasks(self) -> list[list[float]]:
        """The page's long tasks (over 50 ms) since it was shown: [start ms, duration ms] each."""
        return self.page.evaluate(SHOWN_LONG_TASKS)


def outside(url: str) -> bool:
    """Whether a request goes anywhere but this machine's site server (data: and blob: stay in the page)."""
    return not url.startswith(("data:", "blob:")) and urlparse(url).hostname != "127.0.0.1"


@pytest.fixture
def visit(browser):
    context = browser.new_context()
    context.add_init_script(LONG_TASKS)

    def go(url: str) -> Visit:
        page = context.new_page()
        v = Visit(page)
        page.on("request", lambda r: v.outside.append(r.url) if outside(r.url) else None)
        page.on("console", lambda m: v.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: v.console_errors.append(str(e)))
        page.on("requestfailed", lambda r: v.failed.append(r.url))
        page.on("response", lambda r: v.failed.append(r.url) if r.status >= 400 else None)
        page.goto(url, wait_until="networkidle")
        return v

    yield go
    context.close()
