"""`hinter run`: a bias test of one model on one dataset."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hinter.campaign import Reading, suite_config
from hinter.config import MODEL, Execution, RunConfig, option_fields
from hinter.errors import InputError
from hinter.files import storage_errors
from hinter.analysis.health import Thresholds
from hinter.models import SPEC_HELP
from hinter.cli import options as o
from hinter.cli.app import app
from hinter.cli.campaign import prompted, run_campaign, write_report_and_gate
from hinter.cli.gate import FAIL_ON_HELP, check_syntax

MODEL_FLAGS = ", ".join(f.metadata["flag"] for f in option_fields(MODEL))


@app.command("run")
@o.config_options(defaults={"model": "gguf:default", "task": "imdb"}, helps={
    "dataset": "+ Required unless --suite is given.", "model": f"The model under test: {SPEC_HELP}.",
    "task": "+ Left out, a classifier (python:, hf:, http:) answers its own labels; imdb is then only the prompt of a "
            "model asked through one (openai:, gguf:, hf-causal:)."})
@o.execution_options()
def run_cmd(
    ctx: typer.Context,
    options: dict,
    execution: Execution,
    suite: Optional[Path] = typer.Option(None, "--suite", help="A suite file of `hinter suite build`: test its "
                                         "mutants with their recorded verdicts, running only the model and the "
                                         "oracle (no spaCy needed). The suite fixes the dataset, dictionary, "
                                         "attributes, order, limit, sampling and validity options; the model's "
                                         f"options ({MODEL_FLAGS}) are this command's."),
    out: Path = typer.Option(Path("runs/latest"), "--out", "-o", help="Output folder: run.sqlite, summary.json, "
                             "biases.csv, report.html. A new or empty folder, or one of an earlier run: a folder "
                             "holding other files and no run is refused."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a run already in --out (its run.sqlite and "
                                   "the files SQLite keeps beside it; no other file is deleted). Without it, a run "
                                   "with the same settings is continued where it stopped."),
    fail_on: list[str] = typer.Option([], "--fail-on", help=FAIL_ON_HELP),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML file: one test case per attribute "
                                         "and attribute combination, failing where a --fail-on condition holds "
                                         "(or, with none, where it has a bias)."),
    max_failed_share: float = o.MAX_FAILED_SHARE_OPT, max_failed_originals: int = o.MAX_FAILED_ORIGINALS_OPT,
    allow_model_errors: bool = o.ALLOW_ERRORS_OPT, alpha: Optional[float] = o.ALPHA_OPT,
    label: Optional[str] = o.LABEL_OPT, raw_csv: bool = o.RAW_CSV_OPT,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the campaign's estimate (model calls, tokens, and "
                                 "cost with prices) and stop: no model is loaded or called. Mutation and validity "
                                 "run to know which texts would be asked (minutes on a large dataset); with --suite "
                                 "it is instant. A run on an API model prints an upper bound first (mutation alone)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Never ask for confirmation (a campaign estimated above "
                             "10,000 model calls asks first where the input is a terminal)."),
) -> None:
    """Run a bias test. Example:

    hinter run --dataset imdb --model gguf:default --attributes race,gender,body --order 2 --limit 50 --out runs/imdb

    In CI: hinter run ... --fail-on "intersectional.error_rate>0.05" --fail-on "hidden>0" --junit bias.xml

    On a Ray cluster: hinter run ... --executor ray --ray-address HEAD_IP:6379
    """
    check_syntax(fail_on)
    if getattr(ctx.get_parameter_source("task"), "name", None) == "DEFAULT" and not prompted(options["model"]):
        # a classifier (python:, hf:, http:) answers its own labels: only a task the user gives constrains them
        # (imdb is the default prompt of a model that needs one)
        options = {**options, "task": None}
    loaded = None
    if suite is not None and not dry_run and execution.executor == "local":
        # torch's import and CUDA's start (hf:, hf-causal:) while the suite is read: the model loads in this
        # process (ray: in its workers), which forks no parser in a suite run
        from hinter.models import startup
        startup.begin(options["model"])
    if suite is not None:
        # every setting the suite fixed when it was built: given beside --suite, it would be silently ignored
        given = [f.metadata["flag"] for f in option_fields() if f.metadata["stage"] != MODEL
                 and getattr(ctx.get_parameter_source(f.name), "name", None) == "COMMANDLINE"]
        from hinter.pipeline.suite import load_suite
        loaded = load_suite(suite, "--suite") if not given else None
        config = suite_config(loaded, {f.name: options[f.name] for f in option_fields(MODEL)}, given, "--suite")
    elif options["dataset"] is None:
        raise InputError("no dataset given", where="--dataset", fix="Give --dataset (a file or a bundled sample such "
                         "as imdb), or --suite with a suite file of `hinter suite build`.")
    else:
        config = RunConfig(**options)
    from hinter.report.gate import check_paths
    check_paths(fail_on, config.attributes, config.order)
    with storage_errors(out):  # a full disk, a damaged run.sqlite: one paragraph with the path and the fix
        s = run_campaign(config, execution, out, overwrite, Reading(alpha, label, raw_csv or None), suite=loaded,
                         dry_run=dry_run, yes=yes)
        if s is None:  # --dry-run: the estimate only
            return
        write_report_and_gate(out, s, fail_on, junit, Thresholds(max_failed_share, max_failed_originals),
                              allow_model_errors)
