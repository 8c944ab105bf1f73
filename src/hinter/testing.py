"""Assertions for a project's own test suite:

    import hinter
    from hinter.testing import assert_no_bias

    def test_my_classifier_has_no_hidden_bias(tmp_path):
        run = hinter.run(my_texts, my_model, attributes=("race", "gender"), out=tmp_path)
        assert_no_bias(run, fail_on=("intersectional.error_rate>0.05", "hidden>0"))
"""
from __future__ import annotations

import json
from pathlib import Path

from hinter.analysis.health import untested
from hinter.report.gate import evaluate, parse_condition
from hinter.report.instances import load_instances
from hinter.store import open_run


def _summary(run) -> tuple[dict, object]:
    if hasattr(run, "summary") and hasattr(run, "store"):
        return run.summary(), run.store
    folder = Path(run)
    store = open_run(folder, "run")
    try:
        return json.loads((folder / "summary.json").read_text(encoding="utf-8")), store
    except BaseException:
        store.close()
        raise


def assert_no_bias(run, fail_on: tuple[str, ...] | list[str] = ("biased>0",), examples: int = 5) -> None:
    """Fail (AssertionError) when any `fail_on` condition holds on the run's summary (the syntax of
    `hinter run --fail-on`, see hinter.report.gate). The default fails on any bias at all. `run` is a
    hinter.Run or a run folder. The message names each condition that holds and shows a few biases. A run that
    tested no mutant fails too, saying why (no dictionary word matched, every mutant discarded...)."""
    summary, store = _summary(run)
    why = untested(summary)
    if why:  # no condition can hold on nothing: passing would vouch for a model that was never tested
        raise AssertionError(f"hinter tested no mutant: {why}")
    held = evaluate([parse_condition(c, summary) for c in fail_on], summary)
    if not held:
        return
    lines = [f"{c.text}: {path} = {value}" for c, path, value in held]
    for inst in load_instances(store, limit=examples):
        lines.append(f"  text {inst.text_id}: {'; '.join(r.describe() for r in inst.replacements)}: "
                     f"{inst.original.outcome!r} -> {inst.mutant.outcome!r}{' (hidden)' if inst.hidden else ''}")
    raise AssertionError("hinter found bias:\n" + "\n".join(lines))
