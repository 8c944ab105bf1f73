"""The CI gate that run, report and check share: --fail-on conditions (exit 1 naming each that holds) and JUnit."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hinter.analysis.health import Thresholds, require_trustworthy
from hinter.cli.app import console

FAIL_ON_HELP = ("CI gate: exit 1 when this condition on summary.json holds (repeatable). Example: --fail-on "
                "\"intersectional.error_rate>0.05\" --fail-on \"hidden>0\". Syntax: docs/summary-schema.md.")


def check_syntax(conditions: list[str]) -> None:
    """Fail on a malformed --fail-on before a long run; paths are resolved against the summary afterwards."""
    from hinter.report.gate import check_syntax as check
    for c in conditions:
        check(c)


def gate(s: dict, fail_on: list[str], junit: Optional[Path], thresholds: Thresholds = Thresholds(),
         allow_model_errors: bool = False, verdict: bool = False, folder: Optional[Path] = None) -> None:
    """A partial run or a failed model stops the gate first (exit 3): a gate must not pass on what was not tested.
    `verdict`: the run itself ends here (run, demo, resume), so a failed model stops it even without conditions.
    `folder`: the run's, named in the messages."""
    from hinter.errors import HinterError
    from hinter.report.gate import evaluate, parse_condition, write_junit, write_junit_error
    from hinter.analysis.triage import gated
    if verdict or fail_on or junit is not None:
        # a gate on a run that tested nothing would pass on nothing: exit 3 saying why (health.untested)
        try:
            require_trustworthy(s, thresholds, allow_model_errors, require_tested=bool(fail_on) or junit is not None,
                                folder=folder)
        except HinterError as e:
            if junit is not None:  # the CI's JUnit says why there is no verdict (issue 30: not a missing file)
                write_junit_error(junit, e.message)
                console.print(f"JUnit: {junit}", highlight=False)
            raise
    t = s.get("triage")
    s = gated(s)  # a reviewer's "not a bias" (triage.json, hinter serve): those instances do not count
    if t and t["dismissed"] and (fail_on or junit is not None):
        console.print(f"Triage: {t['dismissed']} biases dismissed by a reviewer ({t['file']}) are left out of the gate.",
                      highlight=False)
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
