"""`hinter report`: the self-contained report.html and the exports of a run."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hinter.files import storage_errors
from hinter.pipeline.runlock import lock_run_folder
from hinter.cli import options as o
from hinter.cli.app import app, out_console
from hinter.cli.check import warn_non_finite
from hinter.cli.gate import check_syntax, gate


@app.command("report")
def report_cmd(
    run_dir: Path = typer.Argument(..., help="The output folder of a `hinter run`."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="Another run on the same data: adds a section "
                                            "of biases new, fixed and kept since that run (and writes diff.json)."),
    fail_on: list[str] = typer.Option([], "--fail-on", help="As for `hinter run`: exit 1 when the condition holds."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="As for `hinter run`: write a JUnit XML file."),
    alpha: Optional[float] = o.ALPHA_OPT, label: Optional[str] = o.LABEL_OPT, raw_csv: bool = o.RAW_CSV_OPT,
) -> None:
    """Write RUN_DIR/report.html: one self-contained page (no network) with the headline numbers, plots and every
    bias side by side with its original and components; also instances.csv, instances.parquet (with pyarrow)
    and an up-to-date summary.json. Example:

    hinter report runs/demo && xdg-open runs/demo/report.html
    """
    check_syntax(fail_on)
    from hinter.audit.folder import is_audit, report_refusal
    if is_audit(run_dir):
        raise report_refusal(run_dir)
    from hinter.report import write_report
    with storage_errors(run_dir):
        # a run still writing the folder is never reported on: its outputs would be a part, and replaced by its own
        lock = lock_run_folder(run_dir, fix="Wait for it to finish: the run writes its report itself when it ends "
                               "(stopped, it can be continued, then reported).") if (run_dir / "run.sqlite").is_file() \
            else None
        try:
            r = write_report(run_dir, baseline, alpha=alpha, label=label, raw_csv=raw_csv or None)
        finally:
            if lock is not None:
                lock.release()
        from hinter.store import open_run
        store = open_run(run_dir)
        try:
            warn_non_finite(store)
        finally:
            store.close()
    out_console.print("Written: " + ", ".join(str(f) for f in r["files"]), highlight=False)
    gate(r["summary"], fail_on, junit, folder=run_dir)
