"""The browser tests' one way to open a page: Debian's chromium (apt-get install chromium; `make test` installs it)
driven by Playwright, with every request the page makes and every script error it raises recorded. (`hinter serve`,
whose pages these tests open, is started by tests/cli.py's `serve`.)"""
from __future__ import annotations

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

