"""`hinter suite ...`: build a suite (mutants and their verdicts, once) and say what one holds. A suite is then
tested with `hinter run --suite FILE --model M` (model stage and oracle only, no spaCy)."""
from __future__ import annotations

import time
from pathlib import Path

import typer

from hinter.config import DATASET, MUTATION, VALIDITY, Execution, RunConfig
from hinter.executor import LocalExecutor
from hinter.records import dictionary_replacements
from hinter.pipeline.suite import build_suite, load_suite, suite_counts
from hinter.cli import options as o
from hinter.cli.app import app, console, out_console
from hinter.campaign import input_notes
from hinter.cli.campaign import read_campaign, say_notes

suite_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                        help="Suites: validate once, test any number of models anywhere (a GPU box without spaCy).")
app.add_typer(suite_app, name="suite")


@suite_app.command("build")
@o.config_options(DATASET, MUTATION, VALIDITY, required=("dataset",))
@o.execution_options(only=("workers",))
def build_cmd(
    options: dict,
    execution: Execution,
    out: Path = typer.Option(..., "--out", "-o", help="The suite file to write (gzip JSON lines), e.g. imdb.suite."),
) -> None:
    """Mutate and validate a campaign once, and write its suite: texts, mutants as edits, verdicts, discard
    reasons, and the fingerprints of dataset, dictionary, parser, splitter, validity mode and hinter version.

    Example: hinter suite build --dataset imdb --attributes race,gender --limit 100 --out imdb.suite

    then, for each model (on any machine with hinter, even without spaCy):
    hinter run --suite imdb.suite --model hf:runs/minilm-imdb --out runs/minilm
    """

    config = RunConfig(**options)
    records, skipped, d = read_campaign(config)
    say_notes(input_notes(config, records, skipped, None))
    started = time.perf_counter()
    path = build_suite(records, out=out, config=config, dictionary=d, executor=LocalExecutor(execution.workers))
    texts, mutants = suite_counts(path)  # from its trailer: reading it all back took a second per 170,000 mutants
    console.print(f"Suite written: {path} ({path.stat().st_size:,} bytes, {texts} texts, "
                  f"{mutants:,} mutants), {time.perf_counter() - started:.1f} s. Test a "
                  f"model with: hinter run --suite {path} --model MODEL --out FOLDER", highlight=False, soft_wrap=True)


@suite_app.command("info")
def info_cmd(suite: Path = typer.Argument(..., help="A suite file.")) -> None:
    """What a suite holds: its settings, fingerprints, and mutants counted per combination."""
    s = load_suite(suite, "SUITE")
    h = s.header
    out_console.print(f"{s.path}: hinter suite, format {h['format_version']}, built by hinter {h['hinter_version']}; "
                      f"fingerprint {s.fingerprint}", highlight=False, soft_wrap=True)
    config = {k: v for k, v in h["config"].items() if v not in (None, False, [], ())}
    out_console.print("settings: " + ", ".join(f"{k}={v}" for k, v in config.items()), highlight=False,
                      soft_wrap=True)
    out_console.print("fingerprints: " + ", ".join(f"{k} {v}" for k, v in h["fingerprints"].items()),
                      highlight=False, soft_wrap=True)
    counts: dict[str, list[int]] = {}
    for ms in s.mutants.values():
        for m in ms:
            c = counts.setdefault("+".join(r.attribute for r in dictionary_replacements(m.replacements)), [0, 0])
            c[0] += 1
            c[1] += m.valid
    out_console.print(f"{len(s.records)} texts, {sum(c[0] for c in counts.values()):,} mutants:", highlight=False)
    for combo, (n, valid) in sorted(counts.items(), key=lambda kv: (kv[0].count("+"), kv[0])):
        out_console.print(f"  {combo}: {n:,} mutants, {valid:,} valid", highlight=False)
