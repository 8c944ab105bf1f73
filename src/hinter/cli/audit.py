"""`hinter audit`: selection rates and impact ratios per sex, race/ethnicity and their intersection, on
counterfactual renderings of each text (hinter.audit)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..audit import audit
from .app import app, console, out_console
from .options import config_options


@app.command("audit")
@config_options(only=("language",), helps={"language": "+ The audit renders its category words in it (French: "
                                           "data/audit/categories_fr.yaml, the descriptor after the noun and the "
                                           "agreement carried)."})
def audit_cmd(
    dataset: str = typer.Option(..., "--dataset", help="Texts to audit: a JSONL, CSV or Parquet file, or a bundled "
                                "dataset's name (imdb, bios...)."),
    model: str = typer.Option(..., "--model", help="The model under test, as for `hinter run` (gguf:default, "
                              "python:module:function, hf:FOLDER, openai:MODEL@URL...)."),
    task: str = typer.Option(..., "--task", help="The task: a label task (a preset such as imdb, or a task file), "
                             "or a free-text one (reference-letter)."),
    favourable: Optional[str] = typer.Option(None, "--favourable", help="The label that counts as selected (e.g. "
                                             "Positive); for a free-text task the measure: judge (the default: the "
                                             "judge model finds the letter favourable) or not-refused."),
    out: Path = typer.Option(..., "--out", help="Write audit.json, audit.csv, renderings.csv and audit.html here."),
    categories: Optional[Path] = typer.Option(None, "--categories", help="A category file (YAML) in place of the "
                                              "packaged EEO-1 sex x race/ethnicity file of --language."),
    text_field: str = typer.Option("text", "--text-field", help="The dataset's column holding the text."),
    id_field: str = typer.Option("id", "--id-field", help="The dataset's column holding each text's own id "
                                 "(source_id in renderings.csv and audit.html; a column named here must be in every "
                                 "row)."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Read only the first N texts."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and of the permutation test."),
    judge: Optional[str] = typer.Option(None, "--judge", help="A free-text task's judge model (any --model spec), "
                                        "in place of the task file's `judge:`."),
    budget: Optional[str] = typer.Option(None, "--budget", help="Stop before a model batch would spend more than "
                                         "this (calls=N, tokens=N or cost=X), as for `hinter run`: the answers so "
                                         "far are kept, exit code 4; the same command continues."),
    price_in: Optional[float] = typer.Option(None, "--price-in", help="The price of a million tokens read."),
    price_out: Optional[float] = typer.Option(None, "--price-out", help="The price of a million tokens written."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Ask the model again about everything (the folder's "
                                   "stored answers are replaced), e.g. after the model changed."),
    options: dict = None,
) -> None:
    """Render each text that describes a person in every sex x race/ethnicity category ("the Black woman", "the
    white man"...), ask the model about each rendering, and write the selection rates, impact ratios (with 95%
    intervals and a paired test) and four-fifths flags that a bias audit (NYC Local Law 144) reports. Example:

    hinter audit --dataset imdb --model gguf:default --task imdb --favourable Positive --limit 20 --out runs/audit
    """
    console.print(f"Auditing {model} on {dataset}...", highlight=False)
    result = audit(dataset, model, task=task, favourable=favourable, out=out, categories=categories,
                   text_field=text_field, id_field=id_field, limit=limit, seed=seed, judge=judge, budget=budget,
                   price_in=price_in, price_out=price_out, overwrite=overwrite, language=options["language"],
                   notify=lambda m: console.print(m, highlight=False, markup=False, soft_wrap=True))
    c = result["counts"]
    why = ", ".join(f"{n} {reason}" for reason, n in c["not_rendered"].items() if n)
    out_console.print(f"{c['rendered']} of {c['texts']} texts rendered in every category ({c['renderings']} "
                      f"renderings); not rendered: {result['unknown']}" + (f" ({why})" if why else "") +
                      " (each text's outcome: audit.json, texts).", highlight=False)
    for row in result["tables"]["intersectional"]:
        mark = "  UNDER 4/5" if row["four_fifths"] else ""
        ratio = "–" if row["impact_ratio"] is None else f"{row['impact_ratio']:.3f}"
        out_console.print(f"  {row['category']:<52} rate {row['rate']:.3f}  ratio {ratio}{mark}", highlight=False)
    u = result["usage"]
    out_console.print(f"Model calls: {u['calls']} (tokens {u['tokens_in'] + u['tokens_out']:,}"
                      f"{', estimated' if u['estimated'] else ''})"
                      + (f"; judge calls: {u['judge']['calls']}" if u.get("judge") else "") + ".", highlight=False)
    out_console.print(f"Wrote {out / 'audit.html'} and audit.json, audit.csv, renderings.csv.", highlight=False)
