"""`hinter demo`: the embedded model on the bundled IMDB sample, in a few minutes."""
from __future__ import annotations

from pathlib import Path

import typer

from ..config import Execution, RunConfig
from . import options as o
from .app import app, console
from .campaign import run_campaign, write_report_and_gate

DEMO_TEXTS = 40
DEMO_PAIRS = 4
# The demo's campaign; --texts (--limit) and --max-pairs-per-text are the command's options.
DEMO = {"attributes": ("race", "gender", "body"), "order": 2, "dataset": "imdb", "model": "gguf:default",
        "task": "imdb"}


@app.command("demo")
@o.config_options(only=("max_pairs_per_text",), defaults={"max_pairs_per_text": DEMO_PAIRS}, helps={
    "max_pairs_per_text": "Per review and attribute, a seeded sample of at most this many of the word pairs present."})
def demo_cmd(
    options: dict,
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Output folder."),
    texts: int = typer.Option(DEMO_TEXTS, "--texts", help="How many bundled IMDB reviews to test (200 are bundled)."),
) -> None:
    """Test the embedded Gemma 3 270M on the bundled IMDB sample: race x gender, body x gender, race x body."""
    pairs = options["max_pairs_per_text"]
    console.print(f"[bold]hinter demo[/]: the first {texts} of 200 bundled IMDB reviews; per review and attribute a "
                  f"seeded sample of at most {pairs} of the word pairs present; attributes race, gender, body; atomic "
                  "and order-2 intersectional mutants; the embedded Gemma 3 270M.", highlight=False)
    config = RunConfig(**DEMO, limit=texts, **options)
    s = run_campaign(config, Execution(), out, overwrite=True)
    write_report_and_gate(out, s, [], None)
    console.print("The full campaign (all 200 bundled reviews, every pair: about 170,000 candidate mutants, hours on "
                  "2 cores):\n  hinter run --dataset imdb --model gguf:default --attributes race,gender,body "
                  "--order 2 --out runs/full", highlight=False)
