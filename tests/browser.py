"""The browser tests' one way to open a page: Debian's chromium (apt-get install chromium; `make test` installs it)
driven by Playwright, with every request the page makes and every script error it raises recorded."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextmanager
def chromium_page(width: int = 1360, height: int = 900):
    """(page, requests, errors): a new page of a headless chromium; `requests` collects the URL of every request it
    makes and `errors` its uncaught script errors, both still readable after the block."""
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    assert Path(CHROMIUM).exists(), "install Debian's chromium: apt-get install -y chromium (make test does)"
    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page, requests, errors
        finally:
            browser.close()


def serve(run_dir, pythonpath: str | None = None) -> tuple[subprocess.Popen, str]:
    """`hinter serve RUN_DIR` on a free loopback port, with the tests' planted models importable (`pythonpath`:
    another PYTHONPATH, e.g. with a checkout's sources first): (process, URL with the token), once the server says
    it listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, "-m", "hinter.cli", "serve", str(run_dir), "--port", str(port)],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                         env={**os.environ, "PYTHONPATH": pythonpath or str(Path(__file__).parent)})
    lines = []
    for line in p.stderr:
        lines.append(line)
        m = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        if m:
            return p, m.group(1)
    raise AssertionError("hinter serve did not start: " + "".join(lines))
