"""Regenerate docs/report.png and docs/report-instances.png: a model with a planted bias on the bundled IMDB
reviews (real mutation, real spaCy validity check), its report.html opened in Debian's chromium.

    .venv/bin/python scripts/report_screenshot.py [RUN_DIR]

The planted model answers "negative" when a review names a woman (or girl, wife...) together with a Black, African,
Asian or Arab person, or names two people by age or looks; "positive" otherwise. It exists to show the page
with every kind of finding; `hinter demo` gives the same page for the embedded Gemma 3 270M.
"""
import re
import sys
from pathlib import Path

FEMALE = r"\b(woman|women|girl|girls|lady|ladies|wife|wives|mother|mothers|sister|sisters|daughter|daughters|actress|actresses|queen|aunt)\b"
RACE = r"\b(black|african|asian|arab|arabs|chinese|japanese|indian|african-american|muslim|blacks|asians|africans)\b"
BODY = r"\b(old|elderly|aged|bald|fat|blonde)\b"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def planted(texts):
    return ["negative" if (re.search(FEMALE, t, re.I) and re.search(RACE, t, re.I)) or
            len(re.findall(BODY, t, re.I)) >= 2 else "positive" for t in texts]


def main(out: Path) -> None:
    import hinter
    from hinter.datasets import load_dataset
    from hinter.report import write_report
    from hinter.validity import SpacyParser
    from playwright.sync_api import sync_playwright

    texts = [r.text for r in load_dataset("imdb", limit=40)]
    hinter.run(texts, planted, attributes=("body", "gender", "race"), order=2, max_pairs_per_text=4, out=out,
               overwrite=True, parser=SpacyParser())
    write_report(out)
    docs = Path(__file__).resolve().parents[1] / "docs"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1360, "height": 1000})
        page.goto((out / "report.html").resolve().as_uri())
        page.screenshot(path=str(docs / "report.png"), clip={"x": 0, "y": 0, "width": 1360, "height": 1740},
                        full_page=True)
        page.select_option("#f-hidden", "1")
        section = page.locator("#biases")
        box = section.bounding_box()
        page.screenshot(path=str(docs / "report-instances.png"), full_page=True,
                        clip={"x": 0, "y": box["y"] - 10, "width": 1360, "height": 900})
        browser.close()
    print("written:", docs / "report.png", docs / "report-instances.png")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/planted-imdb"))
