"""The Python API: `hinter.run` and `hinter.build_suite`, taking every RunConfig field by name (the options of
`hinter run` and `hinter suite build`, under their field names: attributes, order, packs, person_only, repair,
exclude_evaluative, sample...), so an option added to RunConfig is an argument here without a change."""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from hinter.pipeline import suite as suites
from hinter.campaign import Campaign, Reading, input_notes, read_texts, suite_config
from hinter.config import DATASET, MODEL, RunConfig, option_fields
from hinter.datasets import sample_records
from hinter.mutation.dictionary import Dictionary
from hinter.pipeline.engine import Run
from hinter.errors import InputError
from hinter.records import TextRecord
from hinter.pipeline.suite import load_suite

log = logging.getLogger("hinter")


def _config(config: RunConfig | None, options: dict[str, Any], where: str) -> RunConfig:
    """`config` (default: RunConfig()) with `options` replaced; an unknown name is an error listing the known."""
    names = [f.name for f in option_fields()]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise InputError(f"{where}() got unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}",
                         where=where, fix=f"The options (RunConfig's fields): {', '.join(names)}.")
    return (config or RunConfig()).replace(**options)


def _texts(texts: Sequence[str | TextRecord] | None, config: RunConfig, where: str) -> tuple[list, list[str]]:
    """The texts to test and the bad rows skipped: `texts` (their first `limit`, a seeded `sample` of them), else
    the config's dataset read and checked as every path reads it (hinter.campaign.read_texts)."""
    if texts is None:
        if config.dataset is None:
            raise InputError("no texts given", where=where, fix="Pass the texts to test, dataset= a file or a "
                             "bundled sample (imdb...), or suite= a suite file.")
        return read_texts(config)
    if config.dataset is not None:
        raise InputError("both texts and dataset= given", where=where, fix="Pass one of them.")
    # the options that say how a dataset is read mean nothing for texts given here: never silently ignored
    ignored = [f.name for f in option_fields(DATASET) if f.name not in ("dataset", "limit", "sample")
               and getattr(config, f.name) != f.default]
    if ignored:
        raise InputError(f"{', '.join(ignored)} apply to a dataset that hinter reads, not to texts given",
                         where=where, fix="Pass dataset= (a file) instead of the texts, or leave them out.")
    return sample_records(list(texts)[:config.limit], config.sample, config.seed), []


def run(texts: Sequence[str | TextRecord] | None = None, model=None, *, out: str | Path | None = None,
        suite: str | Path | None = None, config: RunConfig | None = None, dictionary: str | Path | Dictionary | None
        = None, parser=None, overwrite: bool = False, progress: Callable[[str, int, int], None] | None = None,
        executor=None, alpha: float | None = None, label: str | None = None, raw_csv: bool | None = None,
        **options) -> Run:
    """Run a bias test: atomic mutants for each attribute and intersectional ones up to `order`, then write
    summary.json and biases.csv into the run folder (`out`; default: a new temporary folder). Returns the Run.

    `texts`: the texts (strings or TextRecords), or None to read `dataset=` (a file or a bundled sample).
    `model`: a spec ("gguf:default", "python:pkg.mod:fn"), a ModelSpec, a Model, or a function list[str] ->
    list[outcome]; None: `model=` of the config. `options`: any RunConfig field by name, as `hinter run` takes it
    (attributes=("race", "gender"), order=2, packs=("names",), person_only=True, repair=True,
    exclude_evaluative=True, window=2000, repeats=5, validity="reference", sample=50, ...), over `config` when
    both are given. `dictionary`: None for the built-in one, a path, or a Dictionary. An `out` folder holding a run
    with the same settings is continued (texts already stored are skipped); one with other settings is an error
    unless `overwrite`. `progress(stage, done, total)` is called as work advances (stage "load" around loading the
    parser and the model; "texts": texts stored, first those a resumed run had; "model": texts of the current
    batch answered, after each model batch; "errors": model errors so far). `executor`: where parsing and model
    calls run (default: LocalExecutor(); hinter.executor.make_executor("ray") spreads them over a Ray cluster with
    the same results); not a setting: a run started on one may be continued on another. `alpha`, `label`: how
    the findings are read, as `hinter run --alpha --label` (default: 0.05; the task's first label, or every label
    of a multi-label task); `raw_csv`: CSV cells as they are (default: a cell a spreadsheet would run as a formula
    is written as text), as `--raw-csv`. A `budget=` reached raises hinter.usage.BudgetReached after writing what was asked;
    the same call continues the run. It runs through hinter.campaign.Campaign, as `hinter run` does.
    `suite`: a file of `hinter.build_suite` (`hinter suite build`): its texts, mutants and verdicts are tested,
    with no parsing; the options then are the model stage's alone (model, task, query_discarded, window, repeats,
    batch_texts): the suite fixed the others.
    """
    if isinstance(dictionary, (str, Path)):
        options["dictionary"] = str(dictionary)
    config = _config(config, options, "hinter.run")
    if isinstance(model, str):
        config = config.replace(model=model)
    elif model is not None:  # an object runs: a spec in the config would record another model
        config = config.replace(model=None)
    elif config.model is not None:
        model = config.model
    else:
        raise InputError("no model given", where="hinter.run",
                         fix="Pass model=: a spec such as 'gguf:default' or a function.")
    loaded, skipped = None, []
    if suite is not None:
        fixed = [f.name for f in option_fields() if f.metadata["stage"] != MODEL
                 and (f.name in options or getattr(config, f.name) != f.default)]
        if not fixed and (texts is not None or isinstance(dictionary, Dictionary)):
            fixed = ["texts or a dictionary"]
        loaded = load_suite(suite) if not fixed else None
        config = suite_config(loaded, {f.name: getattr(config, f.name) for f in option_fields(MODEL)}, fixed,
                              "hinter.run")
        records = loaded.records
    else:
        records, skipped = _texts(texts, config, "hinter.run")
    return Campaign(config, records, model, Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="hinter-run-")),
                    dictionary=dictionary if isinstance(dictionary, Dictionary) else None, suite=loaded,
                    executor=executor, parser=parser, overwrite=overwrite, analysis=Reading(alpha, label, raw_csv),
                    skipped_rows=skipped).run(progress).run


def build_suite(texts: Sequence[str | TextRecord] | None = None, *, out: str | Path, config: RunConfig | None = None,
                dictionary: str | Path | Dictionary | None = None, parser=None, executor=None,
                progress: Callable[[str, int, int], None] | None = None, **options) -> Path:
    """Mutate and validate a campaign, and write its suite to `out` (no model); returns the suite's path.
    `options`: the RunConfig fields of the dataset, mutation and validity stages by name (attributes, order,
    packs, person_only, repair, validity, sample...), over `config`; `texts` None reads `dataset=`. The model
    stage's options (model, window, repeats...) belong to the run of the suite: `hinter.run(suite=...)`."""
    if isinstance(dictionary, (str, Path)):
        options["dictionary"] = str(dictionary)
    config = _config(config, options, "hinter.build_suite")
    model_stage = [f.name for f in option_fields(MODEL) if f.name in options]
    if model_stage:
        raise InputError(f"{', '.join(model_stage)} belong to the model stage, not to a suite",
                         where="hinter.build_suite", fix="Give them to hinter.run(suite=..., model=...).")
    records, skipped = _texts(texts, config, "hinter.build_suite")
    for note in input_notes(config, records, skipped, None):
        log.warning(note)
    return suites.build_suite(records, out=out, config=config,
                              dictionary=dictionary if isinstance(dictionary, Dictionary) else None, parser=parser,
                              executor=executor, progress=progress)

