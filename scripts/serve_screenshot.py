"""Regenerate docs/serve.png: `hinter serve` on a run of a model with a planted bias (scripts/report_screenshot.py's:
negative when a review names a woman together with a Black, African, Asian or Arab person) over 20 bundled IMDB
reviews, in Debian's chromium: a sentence tried, one bias triaged.

    .venv/bin/python scripts/serve_screenshot.py [RUN_DIR]
"""
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    hinter = [sys.executable, "-m", "hinter.cli"]
    subprocess.run(hinter + ["run", "--dataset", "imdb", "--limit", "20", "--attributes", "race,gender", "--max-pairs-per-text",
                             "3", "--model", "python:report_screenshot:planted", "--out", str(out), "--overwrite"],
                   env=env, check=True, capture_output=True)
    (out / "triage.json").unlink(missing_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen(hinter + ["serve", str(out), "--port", str(port)], env=env, stderr=subprocess.PIPE, text=True)
    try:
        url = next(m.group(1) for line in p.stderr if (m := re.search(r"(http://\S+token=\S+)", line)))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1360, "height": 1000})
            page.goto(url)
            page.fill("#try-text", "The Basque man in the lead is brilliant and I loved every minute of it.")
            page.click("#try-go")
            page.wait_for_selector(".try-row")
            page.select_option("#f-hidden", "1")
            card = page.locator("article.inst:visible").first
            card.locator(".tri-reason").fill("a real hidden bias: both changes together flip it")
            card.locator(".tri-confirm").click()
            page.locator("article.inst[data-triage=confirmed]").first.wait_for()
            docs = HERE.parent / "docs"
            page.evaluate("window.scrollTo(0, 0)")  # boxes are relative to the viewport
            top = page.locator("#try").bounding_box()["y"] - 10
            page.screenshot(path=str(docs / "serve.png"), full_page=True,
                            clip={"x": 0, "y": top, "width": 1360, "height": 760})
            browser.close()
    finally:
        p.terminate()
        p.wait()
    print("written:", HERE.parent / "docs" / "serve.png")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/planted-serve"))
