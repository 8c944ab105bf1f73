"""A campaign from a RunConfig, as run, demo and resume start it: read the dataset, run with a progress bar,
then write the outputs and the report once, from one summary, and print the summary table."""
from __future__ import annotations

import time
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from ..config import Execution, RunConfig
from ..errors import InputError
from ..health import Thresholds, require_trustworthy
from .app import console, out_console


def run_campaign(config: RunConfig, execution: Execution, out: Path, overwrite: bool = False,
                 analysis: dict | None = None) -> dict:
    """Run `config` into `out`; returns the summary (also in OUT/summary.json). `analysis`: {"alpha", "label"}
    for the findings, recorded with the run (None values: the defaults)."""
    from ..datasets import read_dataset
    from ..dictionary import load_dictionary
    from ..engine import execute
    from ..models import ModelSpec
    from ..report import write_outputs

    task = None
    if config.task is not None:  # an unknown task is an error whatever the backend (a python: model ignores it)
        from ..tasks import get_task
        task = get_task(config.task)
    read = read_dataset(config.dataset, text_field=config.text_field, label_field=config.label_field,
                        limit=config.limit, skip_bad_rows=config.skip_bad_rows)
    if config.label_field != "label" and read.records and all(r.gold is None for r in read.records):
        raise InputError(f"no row has the label field {config.label_field!r}", where=f"--label-field",
                         fix="Name the column holding the gold label, or leave --label-field out (gold labels "
                             "are optional).")
    if read.skipped:
        out.mkdir(parents=True, exist_ok=True, mode=0o700)
        (out / "skipped_rows.txt").write_text("\n".join(read.skipped) + "\n", encoding="utf-8")
        console.print(f"[yellow]Skipped {len(read.skipped)} bad row(s)[/], listed in {out / 'skipped_rows.txt'}; "
                      f"the first: {read.skipped[0]}", highlight=False, soft_wrap=True)
    dictionary = load_dictionary(config.dictionary)
    dictionary.restrict(config.attributes)  # fail on an unknown attribute before loading any model
    executor = execution.make_executor()
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=False) as progress:
        bar = progress.add_task("Loading the parser and the model...", total=len(read.records))

        def report(stage: str, done: int, total: int) -> None:
            if stage == "load":
                if done:
                    progress.console.print(f"Running on {executor.describe()}.", highlight=False)
                progress.update(bar, description="Mutating, validating, querying")
                return
            progress.update(bar, completed=done, total=total)

        result = execute(config, read.records, ModelSpec(config.model, config.task, execution.concurrency),
                         dictionary=dictionary, out=out, executor=executor, overwrite=overwrite, progress=report)
    analysis = {k: v for k, v in (analysis or {}).items() if v is not None}
    if "label" not in analysis and task is not None:
        analysis["label"] = task.labels[0]  # the label of interest: by default the task's first
    result.store.save_settings({f"analysis.{k}": v for k, v in analysis.items()})
    s = write_outputs(result)
    print_summary(s, out, time.perf_counter() - started)
    return s


def print_summary(s: dict, out_dir: Path, seconds: float) -> None:
    table = Table(title="Bias by attribute (atomic) and combination (intersectional)", title_justify="left")
    table.add_column("attributes", no_wrap=True)
    for col in ("mutants", "valid", "discarded", "biased", "error rate", "hidden", "hidden rate"):
        table.add_column(col, justify="right", no_wrap=True)

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    for kind in ("atomic", "intersectional"):
        rows = [(combo, m) for combo, m in s[kind].items()] + [(f"all {kind}", s["totals"][kind])]
        for combo, m in rows:
            inter = kind == "intersectional"
            table.add_row(combo, str(m["mutants"]), str(m["valid"]), pct(m["discarded_share"]), str(m["biased"]),
                          pct(m["error_rate"]), str(m["hidden"]) if inter else "", pct(m["hidden_rate"]) if inter else "",
                          style="bold" if combo.startswith("all ") else None)
    out_console.print(table)
    ob = s["originals_with_bias"]
    out_console.print(
        f"Texts tested: {s['texts']}. Originals with at least one bias: {ob['count']} of {ob['of_originals_with_valid_mutants']} "
        f"with a valid mutant. Unparseable outcomes: {s['unparseable']['originals']} originals, "
        f"{s['unparseable']['mutants']} mutants. Overlapping combinations skipped: {s['overlaps_skipped']}.")
    unseen = s["totals"]["atomic"]["unseen"] + s["totals"]["intersectional"]["unseen"]
    if unseen:
        out_console.print(f"[yellow]{unseen} valid mutants changed only beyond what the model read[/] (counted apart "
                          "as unseen, not tested): pass --window to test them.")
    if s.get("model_errors"):
        out_console.print(f"[red]Model errors: {s['model_errors']} texts got no answer after retries[/] (counted "
                          "apart, never as bias or as no bias; their raw error is in run.sqlite).")
    out_console.print(f"Model calls: {s['model_calls']}, sentences tagged: {s.get('sentences_tagged', 0)}, "
                      f"given dependencies: {s['sentences_parsed']}, "
                      f"wall time {seconds:.1f} s.")
    print_findings(s)
    out_console.print(f"Written: {out_dir / 'run.sqlite'}, {out_dir / 'summary.json'}, {out_dir / 'biases.csv'}")


def print_findings(s: dict, show: int = 10) -> None:
    """Which findings hold up: the significant cells (q <= alpha), population-hidden combinations marked."""
    from ..findings import describe
    a = s["findings_analysis"]
    significant = [f for f in s["findings"] if f["significant"]]
    head = (f"Findings that hold up (Benjamini-Hochberg q <= {a['alpha']} over {len(s['findings'])} cells; label of "
            f"interest {a['label']}, measured on {'scores' if a['measure'] == 'score' else 'labels'}): ")
    if not significant:
        out_console.print(head + "none. No cell's changes differ from what chance gives on this many texts.",
                          highlight=False, soft_wrap=True)
        return
    out_console.print(head + f"{len(significant)}, of which {s['population_hidden']} population-hidden.",
                      highlight=False, soft_wrap=True)
    for f in sorted(significant, key=lambda f: (not f.get("population_hidden"), f["q_value"]))[:show]:
        out_console.print("  " + describe(f, a["label"], a["measure"]), highlight=False, soft_wrap=True)


def write_report_and_gate(out: Path, s: dict, fail_on: list[str], junit: Path | None,
                          thresholds: Thresholds = Thresholds(), allow_model_errors: bool = False) -> None:
    """The report, then the verdict: a failed model ends the run with exit 3 whatever the gate says."""
    from ..report import write_report
    from .gate import gate
    r = write_report(out, summary_=s)
    out_console.print(f"Report: {r['files'][0]}", highlight=False)
    gate(s, fail_on, junit, thresholds, allow_model_errors)
    require_trustworthy(s, thresholds, allow_model_errors)
