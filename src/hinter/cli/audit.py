"""`hinter audit`: selection rates and impact ratios per sex, race/ethnicity and their intersection, on
counterfactual renderings of each text (hinter.audit)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hinter.audit import audit
from hinter.audit.decisions import DecisionsInput, audit_decisions
from hinter.audit.summary import AuditSummary
from hinter.errors import InputError
from hinter.cli.app import app, console, out_console
from hinter.cli.options import audit_summary_options, config_options, dataclass_options

# the options an audit shares with a run, declared once in RunConfig (its help adapted where the audit differs)
AUDIT_RUN_OPTIONS = ("text_field", "id_field", "limit", "skip_bad_rows", "seed", "budget", "price_in", "price_out",
                     "language")


@app.command("audit")
@dataclass_options(DecisionsInput, "decisions")
@config_options(only=AUDIT_RUN_OPTIONS, helps={
    "language": "+ The audit renders its category words in it (French: data/audit/categories_fr.yaml, the "
                "descriptor after the noun and the agreement carried).",
    "id_field": "The dataset's column holding each text's own id (source_id in renderings.csv and audit.html; a "
                "column named here must be in every row).",
    "limit": "Read only the first N texts.",
    "seed": "Seed of the bootstrap and of the permutation test.",
    "budget": "Stop before a model batch would spend more than this (calls=N, tokens=N or cost=X), as for `hinter "
              "run`: the answers so far are kept, exit code 4; the same command continues.",
    "price_in": "The price of a million tokens read.", "price_out": "The price of a million tokens written."})
@audit_summary_options()
def audit_cmd(
    dataset: Optional[str] = typer.Option(None, "--dataset", help="Texts to audit: a JSONL, CSV or Parquet file, "
                                          "or a bundled dataset's name (imdb, bios...)."),
    model: Optional[str] = typer.Option(None, "--model", help="The model under test, as for `hinter run` "
                                        "(gguf:default, python:module:function, hf:FOLDER, openai:MODEL@URL...)."),
    task: Optional[str] = typer.Option(None, "--task", help="The task: a label task (a preset such as imdb, or a "
                                       "task file), or a free-text one (reference-letter)."),
    favourable: Optional[str] = typer.Option(None, "--favourable", help="The label that counts as selected (e.g. "
                                             "Positive); for a free-text task the measure: judge (the default: the "
                                             "judge model finds the letter favourable) or not-refused. With "
                                             "--decisions: the recorded decision that counts as selected."),
    out: Path = typer.Option(..., "--out", help="Write audit.json, audit.csv, renderings.csv and audit.html here."),
    categories: Optional[Path] = typer.Option(None, "--categories", help="A category file (YAML) in place of the "
                                              "packaged EEO-1 sex x race/ethnicity file of --language."),
    judge: Optional[str] = typer.Option(None, "--judge", help="A free-text task's judge model (any --model spec), "
                                        "in place of the task file's `judge:`."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Ask the model again about everything (the folder's "
                                   "stored answers are replaced), e.g. after the model changed."),
    options: dict = None, summary: AuditSummary = None, decisions: DecisionsInput = None,
) -> None:
    """Render each text that describes a person in every sex x race/ethnicity category ("the Black woman", "the
    white man"...), ask the model about each rendering, and write the selection rates, impact ratios (with 95%
    intervals and a paired test) and four-fifths flags that a bias audit (NYC Local Law 144) reports. Example:

    hinter audit --dataset imdb --model gguf:default --task imdb --favourable Positive --limit 20 --out runs/audit

    The published summary (LL144): --auditor, --distribution-date, --data-description, --test-data-reason and the
    other summary options go into audit.json, audit.csv and the page; those the rule asks for are listed as
    missing until given.

    With --decisions FILE, no model: the same tables from the decisions as recorded (historical data).
    """
    if decisions.decisions is not None:
        return _decisions_cmd(decisions, favourable, out, categories, options["seed"], options["language"],
                              given=[f for f, v in (("--dataset", dataset), ("--model", model), ("--task", task))
                                     if v is not None])
    missing = [f for f, v in (("--dataset", dataset), ("--model", model), ("--task", task)) if v is None]
    if missing:
        raise InputError(f"the audit needs {', '.join(missing)}", where="hinter audit",
                         fix="Give --dataset, --model and --task to audit a model on texts, or --decisions FILE "
                             "(with --sex-field, --race-field, --selected-field, --favourable) to audit recorded "
                             "decisions.")
    console.print(f"Auditing {model} on {dataset}...", highlight=False)
    o = options
    result = audit(dataset, model, task=task, favourable=favourable, out=out, categories=categories,
                   text_field=o["text_field"], id_field=o["id_field"], limit=o["limit"],
                   skip_bad_rows=o["skip_bad_rows"], seed=o["seed"], judge=judge,
                   budget=o["budget"], price_in=o["price_in"], price_out=o["price_out"], overwrite=overwrite,
                   language=o["language"], summary=summary,
                   notify=lambda m: console.print(m, highlight=False, markup=False, soft_wrap=True))
    c = result["counts"]
    why = ", ".join(f"{n} {reason}" for reason, n in c["not_rendered"].items() if n)
    out_console.print(f"{c['rendered']} of {c['texts']} texts rendered in every category ({c['renderings']} "
                      f"renderings); not rendered: {result['unknown']}" + (f" ({why})" if why else "") +
                      " (each text's outcome: audit.json, texts).", highlight=False)
    for line in result["limitations"]:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for row in result["tables"]["intersectional"]:
        mark = ("  UNDER 4/5" + (" (too few)" if row.get("too_few") else "")) if row["four_fifths"] else ""
        ratio = "–" if row["impact_ratio"] is None else f"{row['impact_ratio']:.3f}"
        out_console.print(f"  {row['category']:<52} rate {row['rate']:.3f}  ratio {ratio}{mark}", highlight=False)
    u = result["usage"]
    out_console.print(f"Model calls: {u['calls']} (tokens {u['tokens_in'] + u['tokens_out']:,}"
                      f"{', estimated' if u['estimated'] else ''})"
                      + (f"; judge calls: {u['judge']['calls']}" if u.get("judge") else "") + ".", highlight=False)
    out_console.print(f"Wrote {out / 'audit.html'} and audit.json, audit.csv, renderings.csv.", highlight=False)
    if result["summary"]["missing"]:
        console.print("The published summary still needs: " + ", ".join(result["summary"]["missing"]) + ".",
                      highlight=False)
    if not c["rendered"]:  # no table: a verdict on nothing would mislead (exit 3, as a run that tested nothing)
        from hinter.analysis.health import NothingTested
        why = result["limitations"][0].rstrip(".")
        raise NothingTested(why[0].lower() + why[1:],
                            fix=f"Its outputs say so in {out / 'audit.html'}.")


def _decisions_cmd(fields: DecisionsInput, favourable, out: Path, categories, seed: int, language: str,
                   given: list[str], summary: AuditSummary | None = None) -> None:
    """hinter audit --decisions: the tables of the recorded decisions, written as the model's audit is."""
    if given:
        raise InputError(f"--decisions audits recorded decisions: {', '.join(given)} cannot be given with it",
                         where="--decisions", fix="Leave out --dataset, --model and --task, or --decisions.")
    console.print(f"Auditing the decisions in {fields.decisions}...", highlight=False)
    result = audit_decisions(fields, favourable=favourable, out=out, categories=categories, language=language,
                             seed=seed, summary=summary)
    c, u = result["counts"], result["unknown"]
    out_console.print(f"{c['rows']} applicants, {c['selected']} selected; unknown: sex {u['sex']['count']}, race "
                      f"{u['race']['count']}.", highlight=False)
    for row in result["tables"]["intersectional"]:
        mark = ("  UNDER 4/5" + (" (too few)" if row.get("too_few") else "")) if row["four_fifths"] else ""
        ratio = "–" if row["impact_ratio"] is None else f"{row['impact_ratio']:.3f}"
        rate = "–" if row["rate"] is None else f"{row['rate']:.3f}"
        out_console.print(f"  {row['category']:<52} rate {rate}  ratio {ratio}{mark}"
                          + (f"  ({row['excluded']})" if row["excluded"] else ""), highlight=False)
    out_console.print(f"Wrote {out / 'audit.html'} and audit.json, audit.csv.", highlight=False)
