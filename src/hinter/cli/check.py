"""`hinter check`: the CI gate on a finished run, without running again."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..files import storage_errors
from ..health import Thresholds
from . import options as o
from .app import app, console
from .gate import check_syntax, gate


@app.command("check")
def check_cmd(
    run_dir: Path = typer.Argument(..., help="The output folder of a `hinter run`."),
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
    """
    check_syntax(fail_on)
    from ..measures import summary
    from ..store import open_run
    from ..triage import attach
    with storage_errors(run_dir):
        store = open_run(run_dir, verify=True)
        try:
            s = attach(summary(store, alpha, label), store, run_dir)  # a reviewer's verdicts (hinter serve) count
            warn_non_finite(store)
        finally:
            store.close()
    gate(s, fail_on, junit, Thresholds(max_failed_share, max_failed_originals), allow_model_errors, folder=run_dir)


def warn_non_finite(store) -> None:
    """Say that answers of the run hold scores that are not numbers (NaN, infinity: stored by an older hinter),
    read without them: the measures on scores leave them out, their labels count."""
    n = store.non_finite_scores()
    if n:
        console.print(f"[yellow]warning:[/] {n} stored answer{'s' if n != 1 else ''} of this run hold scores that are "
                      "not finite numbers (NaN or infinity, kept by an older hinter): read without their scores "
                      "(their labels count). `hinter run ... --overwrite` asks the model again.", highlight=False,
                      soft_wrap=True)
