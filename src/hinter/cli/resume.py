"""`hinter resume`: continue an interrupted run where it stopped."""
from __future__ import annotations

from pathlib import Path

import typer

from hinter.config import MODEL, Execution, option_fields
from hinter.errors import InputError
from hinter.files import storage_errors
from hinter.cli import options as o
from hinter.cli.app import app
from hinter.cli.campaign import run_campaign, write_report_and_gate


@app.command("resume")
@o.execution_options()
def resume_cmd(
    execution: Execution,
    run_dir: Path = typer.Argument(..., help="The output folder of an interrupted `hinter run`."),
) -> None:
    """Continue an interrupted run where it stopped: no finished batch is redone, no answered model call repeated.
    The executor options may differ from the first run's (a run started here may finish on a Ray cluster).

    Example: hinter resume runs/imdb
    """
    from hinter.pipeline.recorded_settings import config_of
    from hinter.store import RunStore
    settings = RunStore.read_settings(run_dir)
    if not settings:
        raise InputError("this run was stopped before it recorded its settings: nothing was tested or asked yet",
                         where=str(run_dir), fix="Run the same `hinter run` command again (with this folder as --out).")
    config = config_of(settings)
    if config is None or config.dataset is None or config.model is None:  # a run of texts or a model object
        raise InputError("this run was not started by `hinter run`", where=str(run_dir),
                         fix="Resume it the way it was started (hinter.run(...) with the same arguments and out=).")
    suite = None
    if settings.get("suite") is not None:  # a suite run: the same suite, checked to be the one it started with
        from hinter.pipeline.suite import load_suite
        suite = load_suite(settings["suite"], where=str(run_dir))
        if suite.fingerprint != settings.get("suite_fingerprint"):
            raise InputError(f"the suite {settings['suite']} is not the one this run started with (it was rebuilt "
                             "or replaced)", where=str(run_dir), fix="Put the original suite back, or start a new "
                             "run: hinter run --suite FILE --out NEW_FOLDER.")
        config = suite.run_config(**{f.name: getattr(config, f.name) for f in option_fields(MODEL)})
    with storage_errors(run_dir):
        s = run_campaign(config, execution, run_dir, suite=suite)
        write_report_and_gate(run_dir, s, [], None)
