"""`hinter check`: the CI gate on a finished run, without running again."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..files import storage_errors
from ..health import Thresholds
from . import options as o
from .app import app
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
        finally:
            store.close()
    gate(s, fail_on, junit, Thresholds(max_failed_share, max_failed_originals), allow_model_errors, folder=run_dir)
