"""`hinter check`: the CI gate on a finished run, without running again."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hinter.files import storage_errors
from hinter.analysis.health import Thresholds
from hinter.cli import options as o
from hinter.cli.app import app, console
from hinter.cli.gate import check_syntax, gate


@app.command("check")
def check_cmd(
    run_dir: Path = typer.Argument(..., help="The output folder of a `hinter run` or of a `hinter audit`."),
    fail_on: list[str] = typer.Option(["biased>0"], "--fail-on", help="Exit 1 when this condition on the summary "
                                      "holds (repeatable; default: any bias)."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML file."),
    max_failed_share: float = o.MAX_FAILED_SHARE_OPT, max_failed_originals: int = o.MAX_FAILED_ORIGINALS_OPT,
    allow_model_errors: bool = o.ALLOW_ERRORS_OPT, alpha: Optional[float] = o.ALPHA_OPT,
    label: Optional[str] = o.LABEL_OPT,
) -> None:
    """The CI gate on a finished run, without running again. An unfinished run, or one whose model failed
    (see --max-failed-share), fails with exit 3 whatever the conditions say. Example:

    hinter check runs/nightly --fail-on "intersectional.error_rate>0.05" --fail-on "hidden>0" --junit bias.xml

    Only findings that hold up: hinter check runs/nightly --fail-on "significant_findings>0"

    An audit's folder (hinter audit): exit 1 when a category's impact ratio is under four-fifths and holds up
    (its p-value at most --alpha, default 0.05): the default condition biased>0 counts those cells. Its paths:
    biased, under_four_fifths, lowest_impact_ratio, intersectional.*.impact_ratio, scoring.biased...
    """
    check_syntax(fail_on)
    from hinter.audit.folder import is_audit
    if is_audit(run_dir):
        return audit_gate(run_dir, fail_on, junit, alpha)
    from hinter.analysis.measures import summary
    from hinter.store import open_run
    from hinter.analysis.triage import attach
    with storage_errors(run_dir):
        store = open_run(run_dir, verify=True)
        try:
            s = attach(summary(store, alpha, label), store, run_dir)  # a reviewer's verdicts (hinter serve) count
            warn_non_finite(store)
        finally:
            store.close()
    gate(s, fail_on, junit, Thresholds(max_failed_share, max_failed_originals), allow_model_errors, folder=run_dir)


def audit_gate(folder: Path, fail_on: list[str], junit: Optional[Path], alpha: Optional[float]) -> None:
    """The gate on an audit's folder: an audit with no table gives no verdict (exit 3, and a JUnit error case);
    otherwise exit 1 naming each --fail-on condition that holds and each cell that holds up under four-fifths."""
    from hinter.audit.folder import failing_cells, gate_summary, load_audit, write_audit_junit
    from hinter.analysis.health import NothingTested
    from hinter.report.gate import evaluate, parse_condition, write_junit_error
    from hinter.cli.app import console
    s = gate_summary(load_audit(folder), alpha)
    if not s["rendered"]:
        error = NothingTested("the audit has no table (no applicant in every category: no text rendered and "
                              "answered, or no decision row), so a gate passed on it would vouch for nothing",
                              where=str(folder),
                              fix="Read its limitations in audit.html, then audit again.")
        if junit is not None:
            write_junit_error(junit, error.message)
        raise error
    conditions = [parse_condition(c, s) for c in fail_on]
    held = evaluate(conditions, s)
    if junit is not None:
        write_audit_junit(junit, s, held)
        console.print(f"JUnit: {junit}", highlight=False)
    for c, path, value in held:
        console.print(f"[red]FAIL[/] {c.text}: {path} = {value}", highlight=False)
    if held:
        for line in failing_cells(s):
            console.print(f"  {line}", highlight=False, markup=False)
        raise typer.Exit(1)
    if conditions:
        console.print(f"Gate passed: {'; '.join(c.text for c in conditions)} (audit: {s['under_four_fifths']} "
                      f"cells under four-fifths, none holding up at p <= {s['alpha']:g})"
                      if not s["biased"] else f"Gate passed: {'; '.join(c.text for c in conditions)}",
                      highlight=False)


def warn_non_finite(store) -> None:
    """Say that answers of the run hold scores that are not numbers (NaN, infinity: stored by an older hinter),
    read without them: the measures on scores leave them out, their labels count."""
    n = store.non_finite_scores()
    if n:
        console.print(f"[yellow]warning:[/] {n} stored answer{'s' if n != 1 else ''} of this run hold scores that are "
                      "not finite numbers (NaN or infinity, kept by an older hinter): read without their scores "
                      "(their labels count). `hinter run ... --overwrite` asks the model again.", highlight=False,
                      soft_wrap=True)
