"""The command line: `hinter run`, `hinter demo`."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from .errors import HinterError, InputError

app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode=None,
    help="hinter finds intersectional bias in language models.\n\n"
         "It mutates real texts with word pairs of a bias dictionary (one attribute at a time, and several at "
         "once), keeps the mutants whose grammar matches the original (the dependency invariant), and reports "
         "every mutant whose model outcome differs from the original's. An intersectional bias whose atomic "
         "parts do not change the outcome is hidden: atomic testing alone never finds it.\n\n"
         "Start with `hinter demo`, then `hinter run --help`.")
console = Console(stderr=True)
# Wide enough for the summary table when the output is a file or a pipe.
out_console = Console(width=None if sys.stdout.isatty() else 110)
_debug = False

DEMO_TEXTS = 40
DEMO_PAIRS = 4


@dataclass(frozen=True)
class Execution:
    """Where the work runs: not a setting of the run (the results are the same), so `resume` may change it."""

    executor: str = "local"
    ray_address: Optional[str] = None
    workers: Optional[int] = None
    cpus_per_worker: float = 1.0
    gpus_per_worker: float = 0.0
    concurrency: Optional[int] = None


EXECUTOR_OPT = typer.Option("local", "--executor", help="Where parsing and model calls run: local (this machine: "
                            "spaCy on each core, the model in this process) or ray (the workers of a Ray cluster; "
                            "pip install 'hinter[ray]'). The results are the same.")
RAY_ADDRESS_OPT = typer.Option(None, "--ray-address", help="With --executor ray: the cluster to join (HOST:PORT of its "
                               "head, ray://HOST:10001, or auto). Default: RAY_ADDRESS, else Ray is started on this machine.")
WORKERS_OPT = typer.Option(None, "--workers", help="Worker processes: spaCy processes for local (default: one per "
                           "core, at most 4), Ray actors for ray (default: as many as the cluster's CPUs allow).")
CPUS_OPT = typer.Option(1.0, "--cpus-per-worker", help="With --executor ray: CPUs each worker reserves (and gives a "
                        "local model's threads).")
GPUS_OPT = typer.Option(0.0, "--gpus-per-worker", help="With --executor ray: GPUs each worker reserves, e.g. 1 for "
                        "one copy of an hf: or hf-causal: model per GPU (0.5: two workers share one).")
CONCURRENCY_OPT = typer.Option(None, "--concurrency", help="API models (openai:...): requests at once, in all (default "
                               "4). With Ray the bound is global: the workers share it.")


def _parse_attributes(value: str) -> tuple[str, ...]:
    attrs = tuple(a.strip() for a in value.split(",") if a.strip())
    if not attrs:
        raise InputError("no attribute given", where="--attributes", fix="Write e.g. --attributes race,gender.")
    return attrs


def _print_summary(s: dict, out_dir: Path, seconds: float) -> None:
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
    if s.get("model_errors"):
        out_console.print(f"[red]Model errors: {s['model_errors']} texts got no answer after retries[/] (counted "
                          "apart, never as bias or as no bias; their raw error is in run.sqlite).")
    out_console.print(f"Model calls: {s['model_calls']}, sentences tagged: {s.get('sentences_tagged', 0)}, "
                      f"given dependencies: {s['sentences_parsed']}, "
                      f"wall time {seconds:.1f} s.")
    out_console.print(f"Written: {out_dir / 'run.sqlite'}, {out_dir / 'summary.json'}, {out_dir / 'biases.csv'}")


def _execute(dataset: str, model: str, attributes: str, order: int, limit: Optional[int], out: Path, text_field: str,
             label_field: str, dictionary: Optional[Path], pairs_per_attribute: Optional[int],
             max_pairs_per_text: Optional[int], seed: int, task: str, no_jobs: bool, query_discarded: bool,
             overwrite: bool, skip_bad_rows: bool = False, execution: Execution = Execution()) -> dict:
    from .datasets import read_dataset
    from .engine import run

    attrs = _parse_attributes(attributes)
    if order < 1:
        raise InputError(f"--order must be at least 1, got {order}", where="--order")
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}", where="--limit")
    read = read_dataset(dataset, text_field=text_field, label_field=label_field, limit=limit,
                        skip_bad_rows=skip_bad_rows)
    records = read.records
    if read.skipped:
        out.mkdir(parents=True, exist_ok=True, mode=0o700)
        (out / "skipped_rows.txt").write_text("\n".join(read.skipped) + "\n", encoding="utf-8")
        console.print(f"[yellow]Skipped {len(read.skipped)} bad row(s)[/], listed in {out / 'skipped_rows.txt'}; "
                      f"the first: {read.skipped[0]}", highlight=False, soft_wrap=True)
    from .dictionary import load_dictionary
    dic = load_dictionary(dictionary)
    dic.restrict(attrs)  # fail on an unknown attribute before loading any model
    from .executor import make_executor
    from .models import ModelSpec
    if execution.concurrency is not None and execution.concurrency < 1:
        raise InputError(f"--concurrency must be at least 1, got {execution.concurrency}", where="--concurrency")
    ex = make_executor(execution.executor, address=execution.ray_address, workers=execution.workers,
                       cpus_per_worker=execution.cpus_per_worker, gpus_per_worker=execution.gpus_per_worker)
    where = "this machine" if ex.name == "local" else "the Ray workers"
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=False) as progress:
        bar = progress.add_task(f"Loading the parser and the model on {where}...", total=len(records))

        def report(stage: str, done: int, total: int) -> None:
            if stage == "load":
                if done and ex.name == "ray":
                    progress.console.print(f"Ray: {len(ex.actors)} workers on {len(set(ex.nodes))} node(s), the "
                                           f"model on {len(ex.model_actors)} of them.", highlight=False)
                progress.update(bar, description="Mutating, validating, querying")
                return
            progress.update(bar, completed=done, total=total)

        result = run(records, ModelSpec(model, task, execution.concurrency), attrs, order, dic, out=out, executor=ex,
                     pairs_per_attribute=pairs_per_attribute, max_pairs_per_text=max_pairs_per_text, seed=seed, include_occupational=not no_jobs,
                     query_discarded=query_discarded, overwrite=overwrite, progress=report,
                     extra_settings={"cli": {  # what `hinter resume` needs to run the same command again
                         "dataset": dataset, "model": model, "attributes": attributes, "order": order, "limit": limit,
                         "text_field": text_field, "label_field": label_field,
                         "dictionary": None if dictionary is None else str(dictionary),
                         "pairs_per_attribute": pairs_per_attribute, "max_pairs_per_text": max_pairs_per_text,
                         "seed": seed, "task": task, "no_jobs": no_jobs, "query_discarded": query_discarded,
                         "skip_bad_rows": skip_bad_rows}})
    s = result.summary()
    _print_summary(s, out, time.perf_counter() - started)
    return s


@app.command("run")
def run_cmd(
    dataset: str = typer.Option(..., "--dataset", "-d", help="A JSONL, CSV or Parquet file with a text column, a "
                                "Hugging Face datasets folder (save_to_disk), or a bundled sample: imdb, ecthr, "
                                "eurlex, ledgar, scotus. Example: --dataset reviews.jsonl"),
    model: str = typer.Option("gguf:default", "--model", "-m", help="The model under test: gguf:default (embedded "
                              "Gemma 3 270M), gguf:PATH, hf:FOLDER (a Hugging Face sequence classifier), "
                              "openai:MODEL@BASE_URL (completions endpoint; key from OPENAI_API_KEY), "
                              "openai-chat:MODEL@BASE_URL (chat endpoint), or python:package.module:function (a "
                              "function taking a list of texts and returning one label per text)."),
    attributes: str = typer.Option("race,gender", "--attributes", "-a", help="Sensitive attributes, comma-separated, "
                                   "from the dictionary (built-in: race, gender, body). Example: -a race,gender,body"),
    order: int = typer.Option(2, "--order", "-k", help="Highest order of intersectional mutants: 1 = atomic only, "
                              "2 = pairs of attributes (the paper), 3 = triples..."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", help="Test only the first N texts."),
    out: Path = typer.Option(Path("runs/latest"), "--out", "-o", help="Output folder: run.sqlite, summary.json, biases.csv."),
    text_field: str = typer.Option("text", "--text-field", help="The dataset column holding the text."),
    label_field: str = typer.Option("label", "--label-field", help="The dataset column holding the gold label (optional)."),
    dictionary: Optional[Path] = typer.Option(None, "--dictionary", help="Your own dictionary: a folder ATTRIBUTE/"
                                              "SOURCE_TARGET.csv (word;replacement lines) or one CSV/JSON file with "
                                              "columns attribute, source_group, target_group, word, replacement."),
    pairs_per_attribute: Optional[int] = typer.Option(None, "--pairs-per-attribute", help="Use a seeded sample of this "
                                                      "many word pairs per attribute (default: all)."),
    max_pairs_per_text: Optional[int] = typer.Option(None, "--max-pairs-per-text", help="Per text and attribute, use "
                                                     "a seeded sample of at most this many of the pairs present "
                                                     "(default: all). Bounds the campaign on long texts."),
    seed: int = typer.Option(0, "--seed", help="Seed of the pair samples."),
    task: str = typer.Option("imdb", "--task", help="The task: its prompt and answer parser for generative models "
                             "(the paper's imdb, ecthr, eurlex, ledgar, scotus), or a YAML/JSON task file."),
    no_jobs: bool = typer.Option(False, "--no-jobs", help="Leave out the occupational gender pairs (assistant;CEO)."),
    query_discarded: bool = typer.Option(False, "--query-discarded", help="Also ask the model about discarded mutants, "
                                         "to count the false positives the invariant avoids."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a run already in --out. Without it, a run "
                                   "with the same settings is continued where it stopped."),
    skip_bad_rows: bool = typer.Option(False, "--skip-bad-rows", help="Leave out dataset rows that cannot be used "
                                       "(no text, empty text, a repeated id, a text over 1,000,000 characters) "
                                       "instead of stopping; they are counted and listed in OUT/skipped_rows.txt."),
    fail_on: list[str] = typer.Option([], "--fail-on", help="CI gate: exit 1 when this condition on summary.json "
                                      "holds (repeatable). Example: --fail-on \"intersectional.error_rate>0.05\" "
                                      "--fail-on \"hidden>0\". Syntax: docs/summary-schema.md."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML file: one test case per attribute "
                                         "and attribute combination, failing where a --fail-on condition holds "
                                         "(or, with none, where it has a bias)."),
    executor: str = EXECUTOR_OPT, ray_address: Optional[str] = RAY_ADDRESS_OPT, workers: Optional[int] = WORKERS_OPT,
    cpus_per_worker: float = CPUS_OPT, gpus_per_worker: float = GPUS_OPT, concurrency: Optional[int] = CONCURRENCY_OPT,
) -> None:
    """Run a bias test. Example:

    hinter run --dataset imdb --model gguf:default --attributes race,gender,body --order 2 --limit 50 --out runs/imdb

    In CI: hinter run ... --fail-on "intersectional.error_rate>0.05" --fail-on "hidden>0" --junit bias.xml

    On a Ray cluster: hinter run ... --executor ray --ray-address HEAD_IP:6379
    """
    _check_conditions_syntax(fail_on)
    s = _execute(dataset, model, attributes, order, limit, out, text_field, label_field, dictionary,
                 pairs_per_attribute, max_pairs_per_text, seed, task, no_jobs, query_discarded, overwrite,
                 skip_bad_rows, Execution(executor, ray_address, workers, cpus_per_worker, gpus_per_worker, concurrency))
    _write_report_and_gate(out, s, fail_on, junit)


@app.command("demo")
def demo_cmd(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Output folder."),
    texts: int = typer.Option(DEMO_TEXTS, "--texts", help="How many bundled IMDB reviews to test (200 are bundled)."),
    pairs: int = typer.Option(DEMO_PAIRS, "--max-pairs-per-text", help="Per review and attribute, a seeded sample of "
                              "at most this many of the word pairs present."),
) -> None:
    """Test the embedded Gemma 3 270M on the bundled IMDB sample: race x gender, body x gender, race x body."""
    console.print(f"[bold]hinter demo[/]: the first {texts} of 200 bundled IMDB reviews; per review and attribute a "
                  f"seeded sample of at most {pairs} of the word pairs present; attributes race, gender, body; atomic "
                  "and order-2 intersectional mutants; the embedded Gemma 3 270M.", highlight=False)
    s = _execute("imdb", "gguf:default", "race,gender,body", 2, texts, out, "text", "label", None, None, pairs, 0,
                 "imdb", False, False, True)
    _write_report_and_gate(out, s, [], None)
    console.print("The full campaign (all 200 bundled reviews, every pair: about 170,000 candidate mutants, hours on "
                  "2 cores):\n  hinter run --dataset imdb --model gguf:default --attributes race,gender,body "
                  "--order 2 --out runs/full", highlight=False)


@app.command("resume")
def resume_cmd(
    run_dir: Path = typer.Argument(..., help="The output folder of an interrupted `hinter run`."),
    executor: str = EXECUTOR_OPT, ray_address: Optional[str] = RAY_ADDRESS_OPT, workers: Optional[int] = WORKERS_OPT,
    cpus_per_worker: float = CPUS_OPT, gpus_per_worker: float = GPUS_OPT, concurrency: Optional[int] = CONCURRENCY_OPT,
) -> None:
    """Continue an interrupted run where it stopped: no finished batch is redone, no answered model call repeated.
    The executor options may differ from the first run's (a run started here may finish on a Ray cluster).

    Example: hinter resume runs/imdb
    """
    import json
    import sqlite3

    db_path = run_dir / "run.sqlite"
    if not db_path.is_file():
        raise InputError("no run.sqlite here", where=str(run_dir), fix="Give the --out folder of a `hinter run`.")
    try:
        row = sqlite3.connect(db_path).execute("SELECT value FROM settings WHERE key = 'cli'").fetchone()
    except sqlite3.DatabaseError as e:
        raise InputError(f"run.sqlite cannot be read ({e})", where=str(db_path)) from None
    if row is None:
        raise InputError("this run was not started by `hinter run`", where=str(run_dir),
                         fix="Resume it the way it was started (hinter.run(...) with the same arguments and out=).")
    c = json.loads(row[0])
    s = _execute(c["dataset"], c["model"], c["attributes"], c["order"], c["limit"], run_dir, c["text_field"],
             c["label_field"], None if c["dictionary"] is None else Path(c["dictionary"]), c["pairs_per_attribute"],
             c["max_pairs_per_text"], c["seed"], c["task"], c["no_jobs"], c["query_discarded"], False,
             c.get("skip_bad_rows", False),
             Execution(executor, ray_address, workers, cpus_per_worker, gpus_per_worker, concurrency))
    _write_report_and_gate(run_dir, s, [], None)


# ---------------------------------------------------------------- report, gate, diff (issue 5)

def _check_conditions_syntax(conditions: list[str]) -> None:
    """Fail on a malformed --fail-on before a long run; paths are resolved against the summary afterwards."""
    from .report.gate import _COND
    for c in conditions:
        if not _COND.match(c):
            raise InputError(f"cannot read the condition {c!r}", where="--fail-on",
                             fix="Write PATH OP NUMBER, e.g. \"intersectional.error_rate>0.05\" or \"hidden>0\" "
                                 "(OP: > >= < <= == !=).")


def _gate(s: dict, fail_on: list[str], junit: Optional[Path]) -> None:
    """Evaluate --fail-on conditions (exit 1 naming each that holds) and write the JUnit file."""
    from .report.gate import evaluate, parse_condition, write_junit
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


def _write_report_and_gate(out: Path, s: dict, fail_on: list[str], junit: Optional[Path]) -> None:
    from .report import write_report
    r = write_report(out)
    out_console.print(f"Report: {r['files'][0]}", highlight=False)
    _gate(r["summary"], fail_on, junit)


@app.command("report")
def report_cmd(
    run_dir: Path = typer.Argument(..., help="The output folder of a `hinter run`."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="Another run on the same data: adds a section "
                                            "of biases new, fixed and kept since that run (and writes diff.json)."),
    fail_on: list[str] = typer.Option([], "--fail-on", help="As for `hinter run`: exit 1 when the condition holds."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="As for `hinter run`: write a JUnit XML file."),
) -> None:
    """Write RUN_DIR/report.html: one self-contained page (no network) with the headline numbers, plots and every
    bias side by side with its original and components; also instances.csv, instances.parquet (with pyarrow)
    and an up-to-date summary.json. Example:

    hinter report runs/demo && xdg-open runs/demo/report.html
    """
    _check_conditions_syntax(fail_on)
    from .report import write_report
    r = write_report(run_dir, baseline)
    out_console.print("Written: " + ", ".join(str(f) for f in r["files"]), highlight=False)
    _gate(r["summary"], fail_on, junit)


@app.command("check")
def check_cmd(
    run_dir: Path = typer.Argument(..., help="The output folder of a `hinter run`."),
    fail_on: list[str] = typer.Option(["biased>0"], "--fail-on", help="Exit 1 when this condition on the summary "
                                      "holds (repeatable; default: any bias)."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML file."),
) -> None:
    """The CI gate on a finished run, without running again. Example:

    hinter check runs/nightly --fail-on "intersectional.error_rate>0.05" --fail-on "hidden>0" --junit bias.xml
    """
    _check_conditions_syntax(fail_on)
    from .measures import summary
    from .report.diff import open_run
    store = open_run(run_dir, "RUN_DIR")
    try:
        s = summary(store)
    finally:
        store.close()
    _gate(s, fail_on, junit)


@app.command("diff")
def diff_cmd(
    run_a: Path = typer.Argument(..., help="The baseline run folder."),
    run_b: Path = typer.Argument(..., help="The new run folder (same data and dictionary)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the whole diff as JSON to this file "
                                            "('-' for standard output)."),
    show: int = typer.Option(10, "--show", help="How many biases of each kind to list."),
) -> None:
    """Biases new in RUN_B, fixed in RUN_B and present in both, hidden ones counted apart. Example:

    hinter diff runs/model-v1 runs/model-v2 --json diff.json
    """
    import json as _json

    from .report.diff import diff, open_run
    a, b = open_run(run_a, "RUN_A"), open_run(run_b, "RUN_B")
    try:
        d = diff(a, b, str(run_a), str(run_b))
    finally:
        a.close()
        b.close()
    if json_out is not None and str(json_out) == "-":
        sys.stdout.write(_json.dumps(d, indent=2) + "\n")
        return
    if json_out is not None:
        json_out.write_text(_json.dumps(d, indent=2) + "\n", encoding="utf-8")
    for w in d["warnings"]:
        console.print(f"[yellow]warning:[/] {w}", highlight=False)
    c = d["counts"]
    table = Table(title=f"Biases of {run_b} against {run_a} ({d['compared_mutants']} mutants tested in both)",
                  title_justify="left")
    for col in ("", "all", "hidden", "not hidden"):
        table.add_column(col, justify="right" if col else "left")
    for k, label in (("new", "new in B"), ("fixed", "fixed in B"), ("both", "in both")):
        table.add_row(label, str(c[k]), str(c[k + "_hidden"]), str(c[k] - c[k + "_hidden"]))
    out_console.print(table)
    un = d["unmatched_biases"]
    if un["a"] or un["b"]:
        out_console.print(f"Biases whose mutant the other run did not test: {un['a']} in A, {un['b']} in B.")
    for k, label in (("new", "New in B"), ("fixed", "Fixed in B")):
        for i in d["instances"][k][:show]:
            out_console.print(f"{label}: text {i['text_id_b']}, {i['replacements']}"
                              f"{' (hidden)' if i['hidden'] else ''}: A {i['original_outcome_a']} -> {i['outcome_a']},"
                              f" B {i['original_outcome_b']} -> {i['outcome_b']}", highlight=False, soft_wrap=True)
    if json_out is not None:
        out_console.print(f"Written: {json_out}")


def main() -> None:
    global _debug
    if "--debug" in sys.argv:
        _debug = True
        sys.argv.remove("--debug")
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:  # typer.Exit(n) is returned, not raised, outside standalone mode
            sys.exit(code)
    except HinterError as e:
        if _debug:
            raise
        console.print(f"[red]error:[/] {e.message}", highlight=False, soft_wrap=True)
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        console.print("Interrupted. Every finished batch is saved in the run folder: run the same command again, "
                      "or `hinter resume OUT_FOLDER`, to continue where it stopped.", soft_wrap=True)
        sys.exit(130)
    except Exception as e:
        # Usage errors (a bad option value, an unknown option). Typer vendors its own copy of click, so
        # match both its classes and click's.
        import click
        from typer._click import exceptions as typer_click
        if isinstance(e, (click.exceptions.ClickException, typer_click.ClickException)):
            e.show()
            sys.exit(e.exit_code)
        raise


if __name__ == "__main__":
    main()
