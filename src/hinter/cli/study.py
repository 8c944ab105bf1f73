"""`hinter study`: many models on many datasets, the paper's four research questions as tables (hinter.study)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
import typer.core

from hinter.config import Execution, option_fields
from hinter.cli import options as o
from hinter.cli.app import app, console

LISTS = ("--models", "--datasets")


class _ListsCommand(typer.core.TyperCommand):
    """--models A B C and --datasets D E take every value up to the next option: given to click as
    --models A --models B --models C (click's options take one value each)."""

    def parse_args(self, ctx, args):
        spread, current = [], None
        for arg in args:
            if arg in LISTS:
                current = arg
                continue
            if arg.startswith("-") or current is None:
                current = None
                spread.append(arg)
            else:
                spread += [current, arg]
        return super().parse_args(ctx, spread)


STUDY_FIELDS = tuple(f.name for f in option_fields() if f.name not in ("model", "dataset", "query_discarded"))


@app.command("study", cls=_ListsCommand)
@o.config_options(only=STUDY_FIELDS)
@o.execution_options(only=("workers",))
def study_cmd(
    ctx: typer.Context,
    options: dict,
    execution: Execution,
    models: list[str] = typer.Option([], "--models", help="The models under test, each a spec as `hinter run "
                                     "--model` takes it: --models gguf:default gguf:smollm2 python:pkg.mod:fn"),
    datasets: list[str] = typer.Option([], "--datasets", help="The datasets, each a file or a bundled sample: "
                                       "--datasets imdb ledgar. Each gets one suite, validated once, that every "
                                       "model runs on; its task is its own (a bundled sample) unless --task says."),
    study: Optional[Path] = typer.Option(None, "--study", help="A YAML file listing models: and datasets:, and any "
                                         "run option by field name (limit: 5, attributes: [race, gender]); the "
                                         "command line's lists and options add to and override it. "
                                         "models_by_dataset: {imdb: [hf:runs/minilm-imdb]} runs a model on its "
                                         "dataset alone (a classifier fine-tuned for it)."),
    out: Path = typer.Option(..., "--out", "-o", help="The study folder: suites/, runs/, rq1.csv .. rq4.csv, "
                             "study.html. Run again with the same settings, it continues where it stopped."),
    suites_only: bool = typer.Option(False, "--suites-only", help="Build (or reuse) each dataset's suite in "
                                     "OUT/suites and stop: the same command without it, on another machine with "
                                     "OUT copied there, reuses them (spaCy here; the models on a GPU machine)."),
) -> None:
    """Run the paper's study: every model on every dataset (one suite per dataset, the discarded mutants queried),
    then its four research questions as tables beside the paper's numbers, and one page. Example:

    hinter study --models gguf:default gguf:smollm2 --datasets imdb ledgar --sample 10 --out study
    """
    from hinter.executor import LocalExecutor
    from hinter.study import StudyPlan, read_study_file, run_study, write_tables
    planned = read_study_file(study) if study else {"models": [], "datasets": [], "options": {},
                                                    "models_by_dataset": {}}
    given = {name: options[name] for name in STUDY_FIELDS
             if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"}
    plan = StudyPlan(tuple(dict.fromkeys([*planned["models"], *models])),
                     tuple(dict.fromkeys([*planned["datasets"], *datasets])), {**planned["options"], **given},
                     planned["models_by_dataset"])
    started = time.perf_counter()
    runs = run_study(plan, out, executor=LocalExecutor(execution.workers), suites_only=suites_only,
                     say=lambda line: console.print(line, highlight=False, soft_wrap=True))
    if suites_only:
        console.print(f"Suites built: {out}/suites ({time.perf_counter() - started:.1f} s)", highlight=False)
        return
    write_tables(runs)
    console.print(f"Study written: {out}/rq1.csv .. rq4.csv, {out}/study.html "
                  f"({time.perf_counter() - started:.1f} s)", highlight=False, soft_wrap=True)
