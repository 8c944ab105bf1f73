"""`hinter augment`: counterfactual training data (each original with its valid mutants, labelled as the
original) from a run, a suite, or a dataset directly (mutation and the dependency invariant, no model)."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import List, Optional

import typer

from hinter.report import augment as aug
from hinter.config import DATASET, MUTATION, VALIDITY, Execution, RunConfig, option_fields
from hinter.errors import InputError
from hinter.executor import LocalExecutor
from hinter.store import open_run
from hinter.pipeline.suite import build_suite, load_suite
from hinter.cli import options as o
from hinter.cli.app import app, console
from hinter.campaign import input_notes
from hinter.cli.campaign import read_campaign, say_notes

LABELS_SAID = {"gold": "the dataset's gold labels", "model": "the model's outcomes on the originals (the dataset "
               "has no gold labels)", "none": "none (the dataset has no gold labels and no model was asked): "
               "every label is empty"}


@app.command("augment")
@o.config_options(DATASET, MUTATION, VALIDITY, helps={
    "exclude_evaluative": "+ With RUN or a suite: their mutants that use such a pair (as the run recorded them) are "
                          "left out.",
    "seed": "+ Also the seed of --balance's draws."})
@o.execution_options(only=("workers",))
def augment_cmd(
    options: dict,
    execution: Execution,
    source: Optional[Path] = typer.Argument(None, metavar="[RUN]", help="A run folder, or a suite file. Leave it out "
                                            "with --dataset: the dataset is mutated and validated here (no model)."),
    out: Path = typer.Option(..., "--out", "-o", help="The file to write: .jsonl (one object per line), .csv, or a "
                             "folder name without a suffix (a `datasets` folder, Dataset.save_to_disk)."),
    significant: bool = typer.Option(False, "--significant", help="Only mutants of the cells of the run's "
                                     "significant findings (and their originals)."),
    only: Optional[List[str]] = typer.Option(None, "--only", help="Only mutants of this combination: attributes "
                                             "joined by '+' (gender+race), each optionally with its groups "
                                             "(gender:male>female+race:european>african). Repeat for several."),
    balance: str = typer.Option("none", "--balance", help="groups: within each combination of attributes, as many "
                                "mutants per cell (source -> target groups) as its smallest cell has; combinations: "
                                "as many per combination as the smallest; both: every cell of every combination as many as the "
                                "smallest cell of all; none (the default)."),
    mutants_only: bool = typer.Option(False, "--mutants-only", help="Write the mutants alone, not their originals "
                                      "(to add to a training set that holds them)."),
    raw_csv: bool = o.RAW_CSV_OPT,
) -> None:
    """Counterfactual training data: each original with its valid mutants (atomic and intersectional), every
    mutant labelled with its original's gold label (else the model's outcome on it), no text twice. Fields:
    text, label, source_id, kind (original, atomic, intersectional), text_id, attributes, groups, replacements.

    Examples:

    hinter augment runs/minilm --significant --exclude-evaluative --balance groups --out fix.jsonl

    hinter augment --dataset imdb --attributes race,gender --out imdb-cf.csv
    """

    fmt = aug.output_format(out)
    if balance not in aug.BALANCES:
        raise InputError(f"--balance {balance!r} is not one of {', '.join(aug.BALANCES)}", where="--balance",
                         fix=f"Give one of {', '.join(aug.BALANCES)}.")
    try:
        combinations = tuple(aug.parse_combination(c) for c in only or ())
    except ValueError as e:
        raise InputError(f"--only: {e}", where="--only", fix="e.g. --only gender+race or "
                         "--only gender:male>female+race:european>african") from None
    selection = aug.Selection(combinations=combinations, balance=balance, originals=not mutants_only,
                              seed=options["seed"], exclude_pairs=aug.EVALUATIVE if options["exclude_evaluative"]
                              else frozenset())
    config = RunConfig(**options)  # the CLI's values parsed as a run parses them (attributes: a tuple)
    if source is not None:
        given = [f.metadata["flag"] for f in option_fields() if getattr(config, f.name) != f.default
                 and f.name in options and f.name not in ("exclude_evaluative", "seed")]
        if given:
            raise InputError(f"{', '.join(given)} cannot change {source}: its mutants are made", where=given[0],
                             fix="Leave them out, or augment from the dataset: --dataset without RUN.")
        result = _from_source(source, selection, significant)
    else:
        if options["dataset"] is None:
            raise InputError("nothing to augment from", where="RUN",
                             fix="Give a run folder or a suite file, or --dataset to mutate a dataset here.")
        if significant:
            raise InputError("--significant needs a run's findings", where="--significant",
                             fix="Give the run folder (hinter augment RUN --significant ...), or leave it out.")
        result = _from_dataset(config, selection, execution.workers)
    written = aug.write(result.rows, out, raw_csv)
    kinds = {k: sum(r.kind == k for r in result.rows) for k in aug.KINDS}
    c = result.counts
    left = [f"{n} {what}" for n, what in ((c["unlabelled_texts"], "texts without a label (and their mutants)"),
                                          (c["evaluative_left_out"], "mutants with an evaluative pair"),
                                          (c["outside_selection"], "mutants outside the cells chosen"),
                                          (c["repeated_texts"], "mutants repeating a text"),
                                          (c["balanced_away"], "mutants drawn away by --balance")) if n]
    console.print(f"Written: {written} ({fmt}): {len(result.rows):,} rows, " + ", ".join(
        f"{n:,} {k}" for k, n in kinds.items()) + f". Labels: {LABELS_SAID[result.label_source]}."
        + (" Left out: " + "; ".join(left) + "." if left else ""), highlight=False, soft_wrap=True)
    if not result.rows:
        console.print("[yellow]warning:[/] no row written: no valid mutant is left after the selection.",
                      highlight=False)


def _from_source(source: Path, selection, significant: bool):
    if source.is_dir():
        store = open_run(source, "RUN")
        try:
            return aug.from_run(store, selection, significant)
        finally:
            store.close()
    if significant:
        raise InputError("--significant needs a run's findings, and a suite has none", where="--significant",
                         fix="Give the run folder of `hinter run --suite`, or leave --significant out.")
    return aug.from_suite(load_suite(source, "RUN"), selection)


def _from_dataset(config: RunConfig, selection, workers: Optional[int]):
    """Mutation and validity as `hinter suite build` runs them (the pipeline), into a suite read back at once."""
    records, skipped, dictionary = read_campaign(config)
    say_notes(input_notes(config, records, skipped, None))
    with tempfile.TemporaryDirectory(prefix="hinter-augment-") as tmp:
        path = build_suite(records, out=Path(tmp) / "augment.suite", config=config, dictionary=dictionary,
                           executor=LocalExecutor(workers))
        return aug.from_suite(load_suite(path), selection)
