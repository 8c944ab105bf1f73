"""`hinter demo`: the embedded model on the bundled IMDB sample, in a few minutes."""
from __future__ import annotations

from pathlib import Path

import typer

from hinter.config import Execution, RunConfig
from hinter.cli import options as o
from hinter.cli.app import app, console
from hinter.cli.campaign import run_campaign, write_report_and_gate

DEMO_TEXTS = 40
DEMO_PAIRS = 4
# The demo's campaign; --texts (--limit) and --max-pairs-per-text are the command's options.
DEMO = {"attributes": ("race", "gender", "body"), "order": 2, "dataset": "imdb", "model": "gguf:default",
        "task": "imdb"}
# --generative: free-text answers (docs/generative.md): short reference letters for bundled biographies, four
# samples per prompt (the fewest with which a mutant's own test can reach 0.05); generation is slow on a CPU, so
# few texts and one pair per attribute.
GENERATIVE_TEXTS = 8
GENERATIVE = {"attributes": ("gender", "race"), "order": 2, "dataset": "bios", "model": "gguf:default",
              "task": "reference-letter", "max_pairs_per_text": 1}


@app.command("demo")
@o.config_options(only=("max_pairs_per_text",), defaults={"max_pairs_per_text": DEMO_PAIRS}, helps={
    "max_pairs_per_text": "Per review and attribute, a seeded sample of at most this many of the word pairs present."})
def demo_cmd(
    options: dict,
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Output folder."),
    texts: int = typer.Option(None, "--texts", show_default=False, help=f"How many bundled texts to test (default "
                              f"{DEMO_TEXTS} IMDB reviews of 200; with --generative {GENERATIVE_TEXTS} biographies "
                              "of 80)."),
    generative: bool = typer.Option(False, "--generative", help="Free-text answers instead of labels: the embedded "
                                    "model writes a short reference letter for each bundled biography (Bias in "
                                    "Bios) and its mutants, four samples each, judged by sentiment, refusal, length "
                                    "and meaning after masking who the letter is about (docs/generative.md). "
                                    "About 10 seconds per biography on 2 cores."),
) -> None:
    """Test the embedded Gemma 3 270M on the bundled IMDB sample: race x gender, body x gender, race x body.

    With --generative: on reference letters it writes for bundled biographies (gender x race).
    """
    if generative:
        texts = texts or GENERATIVE_TEXTS
        console.print(f"[bold]hinter demo --generative[/]: the first {texts} of 80 bundled biographies (Bias in Bios); "
                      "gender and race, one word pair each per biography, atomic and order-2 mutants; the embedded "
                      "Gemma 3 270M writes a reference letter for each version, 4 samples at temperature 0.7.",
                      highlight=False)
        config = RunConfig(**GENERATIVE, limit=texts)
    else:
        texts = texts or DEMO_TEXTS
        pairs = options["max_pairs_per_text"]
        console.print(f"[bold]hinter demo[/]: the first {texts} of 200 bundled IMDB reviews; per review and attribute "
                      f"a seeded sample of at most {pairs} of the word pairs present; attributes race, gender, body; "
                      "atomic and order-2 intersectional mutants; the embedded Gemma 3 270M.", highlight=False)
        config = RunConfig(**DEMO, limit=texts, **options)
    s = run_campaign(config, Execution(), out, overwrite=True)
    write_report_and_gate(out, s, [], None)
    if not generative:
        console.print("The full campaign (all 200 bundled reviews, every pair: about 170,000 candidate mutants, hours "
                      "on 2 cores):\n  hinter run --dataset imdb --model gguf:default --attributes race,gender,body "
                      "--order 2 --out runs/full", highlight=False)
