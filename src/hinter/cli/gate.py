"""The CI gate that run, report and check share: --fail-on conditions (exit 1 naming each that holds) and JUnit."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..health import Thresholds, require_trustworthy
from .app import console

FAIL_ON_HELP = ("CI gate: exit 1 when this condition on summary.json holds (repeatable). Example: --fail-on "
                "\"intersectional.error_rate>0.05\" --fail-on \"hidden>0\". Syntax: docs/summary-schema.md.")


def check_syntax(conditions: list[str]) -> None:
    """Fail on a malformed --fail-on before a long run; paths are resolved against the summary afterwards."""
    from ..report.gate import check_syntax as check
    for c in conditions:
        check(c)


MAX_FAILED_SHARE_OPT = typer.Option(0.05, "--max-failed-share", help="The model counts as failed (exit 3, and "
                                    "check/--fail-on refuse the run) when more than this share of its calls got a "
                                    "model error or an unparseable answer.")
MAX_FAILED_ORIGINALS_OPT = typer.Option(0, "--max-failed-originals", help="... or when more than this many "
                                        "originals got no usable answer (their mutants cannot be tested).")
ALPHA_OPT = typer.Option(None, "--alpha", help="False discovery rate of the findings (Benjamini-Hochberg over all "
                         "cells of the run): a finding is significant when its q-value is at most this. Default: "
                         "the run's (0.05).")
LABEL_OPT = typer.Option(None, "--label", help="The label of interest of the findings: an effect is the change of "
                         "its share (or of its score). Default: the task's first label (imdb: Positive).")
ALLOW_ERRORS_OPT = typer.Option(False, "--allow-model-errors", help="Gate a run whose model failed anyway "
                                "(its errors are never counted as bias or as no bias).")


def gate(s: dict, fail_on: list[str], junit: Optional[Path], thresholds: Thresholds = Thresholds(),
         allow_model_errors: bool = False) -> None:
    """A partial run or a failed model stops the gate first (exit 3): a gate must not pass on what was not tested."""
    from ..report.gate import evaluate, parse_condition, write_junit
    if fail_on or junit is not None:
        require_trustworthy(s, thresholds, allow_model_errors)
    conditions = [parse_condition(c, s) for c in fail_on]
    if junit is not None:
        write_junit(junit, s, conditions)
        console.print(f"JUnit: {junit}", highlight=False)
    held = evaluate(conditions, s)
    for c, path, value in held:
        console.print(f"[red]FAIL[/] {c.text}: {path} = {value}", highlight=False)
    if held:
        raise typer.Exit(1)
    if conditions:
        console.print("Gate passed: " + "; ".join(c.text for c in conditions), highlight=False)
