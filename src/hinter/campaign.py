"""A campaign: everything a run needs, resolved once, and `Campaign.run()`, the only way a run happens.

`hinter run`, `hinter resume`, `hinter demo`, `hinter.run`, `hinter study` and suite runs all build a Campaign and
call `run()`; they differ only in how they read their inputs and show progress. `hinter audit` and `hinter.audit`,
which make their own texts (renderings, not mutants), take the model stage alone (`model_session`: the same
model-changed check, executor, outcome cache, usage meter and budget). So every behaviour around the
pipeline exists once: the task checked, the model-changed check, the budget stop and its record, the analysis
settings the findings read (a multi-label task analyses every label, whichever way the run was started), the
model-identity note, the reuse message and the outputs. Messages for the user go to `notify(message)`: the CLI
prints them, the API logs them. The run-level checks of the inputs live here too, so that every path makes them:
`read_texts` (a --label-field no row holds), `Campaign.check_inputs` (bad rows listed in skipped_rows.txt, a dataset
in another language than the run's) and `suite_config` (the settings a suite fixed cannot be changed).
"""
from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, Union

from hinter.config import DERIVED_NAMES, Execution, RunConfig
from hinter.mutation.dictionary import Dictionary
from hinter.pipeline.engine import ModelSession, Run, execute
from hinter.errors import InputError
from hinter.pipeline.estimate import incomplete_cells
from hinter.executor import Executor, make_executor
from hinter.files import write_atomic
from hinter.languages import language_mismatch
from hinter.models import ModelSpec, identity_limit, load_model
from hinter.models.callable import SOURCE_MARK
from hinter.pipeline.stages import campaign_dictionary, campaign_texts
from hinter.records import TextRecord
from hinter.pipeline.runlock import make_out_folder
from hinter.report import write_outputs
from hinter.store import RunStore
from hinter.models.tasks import AnyTask, get_task
from hinter.usage import BudgetReached

if TYPE_CHECKING:  # typing only: suite imports the engine, as this module does
    from hinter.models.base import Model
    from hinter.pipeline.suite import Suite
    from hinter.validity import Parser

log = logging.getLogger("hinter")

# What a campaign tests: a spec ("gguf:default"), a ModelSpec, a loaded Model, or a function list[str] -> outcomes.
ModelLike = Union[str, ModelSpec, "Model", Callable[[list], list]]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Reading:
    """How the findings are read and written, recorded with the run (analysis.* settings): the false discovery rate,
    the label of interest (None: the run's default, 0.05 and the task's first label or, multi-label, every label)
    and `raw_csv` (CSV cells as they are, not made safe for spreadsheets)."""

    alpha: float | None = None
    label: str | None = None
    raw_csv: bool | None = None

    def settings(self, task: AnyTask | None) -> dict:
        given = {k: v for k, v in (("alpha", self.alpha), ("label", self.label), ("raw_csv", self.raw_csv))
                 if v is not None}
        if task is not None:
            given.update(task_labels=list(task.labels), multi_label=task.multi_label)
        return {f"analysis.{k}": v for k, v in given.items()}


@dataclass
class CampaignResult:
    """What `Campaign.run()` returns: the run, its summary (also in summary.json), and what this session did."""

    run: Run
    summary: dict
    stored_at_start: int
    calls: int


class _Tally:
    """Counts what this session did from the engine's progress calls, and passes them on."""

    def __init__(self, progress: Progress | None):
        self.progress = progress
        self.stored_at_start: int | None = None
        self.calls = self.batch_calls = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "texts":
            if self.stored_at_start is None:
                self.stored_at_start = done
            self.calls += self.batch_calls
            self.batch_calls = 0
        elif stage == "model":
            self.batch_calls = done
        if self.progress is not None:
            self.progress(stage, done, total)


@dataclass
class Campaign:
    """A run, resolved once: its settings (`config`), the texts (`records`: a suite's, or read by the caller), the
    dictionary (None: the config's; unused with a suite), the model (a spec, a ModelSpec, a Model or a function),
    where it runs (`executor`, else one made from `execution`), the folder and how the findings are read."""

    config: RunConfig
    records: Sequence[str | TextRecord]
    model: ModelLike
    out: Path
    dictionary: Dictionary | None = None
    suite: Suite | None = None
    execution: Execution = field(default_factory=Execution)
    executor: Executor | None = None
    parser: Parser | None = None
    overwrite: bool = False
    analysis: Reading = field(default_factory=Reading)
    skipped_rows: Sequence[str] = ()  # the dataset's bad rows left out ("where: problem"), from read_texts
    task: AnyTask | None = field(init=False, default=None)
    _inputs_checked: bool = field(init=False, default=False, repr=False)

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        # an unknown task is an error whatever the backend (a python: model ignores it), before anything loads
        self.task = get_task(self.config.task) if self.config.task is not None else None
        if isinstance(self.model, str):
            self.model = ModelSpec(self.model, self.config.task, self.execution.concurrency)

    def new_executor(self) -> Executor:
        e = self.execution
        return make_executor(e.executor, address=e.ray_address, workers=e.workers, cpus_per_worker=e.cpus_per_worker,
                             gpus_per_worker=e.gpus_per_worker)

    def check_inputs(self, notify: Callable[[str], None] = log.warning) -> None:
        """The run-level notes on the inputs, made once (`run()` makes them unless the caller did first, as the
        CLI does before its estimate): the bad rows skipped, listed in OUT/skipped_rows.txt, and a dataset that
        reads as another language than the run's."""
        if self._inputs_checked:
            return
        self._inputs_checked = True
        for message in input_notes(self.config, [] if self.suite is not None else self.records, self.skipped_rows,
                                   self.out):
            notify(message)

    def run(self, progress: Progress | None = None, notify: Callable[[str], None] = log.info) -> CampaignResult:
        """Run the campaign into `out` (continuing a run with the same settings), write summary.json and
        biases.csv, and return the CampaignResult. A --budget stop records the incomplete cells, writes the outputs
        of what was asked, then raises BudgetReached (a later run continues it)."""
        self.check_inputs(notify)
        if not self.overwrite:
            self.check_model_unchanged()
        executor = self.executor or self.new_executor()
        tally = _Tally(progress)

        def report(stage: str, done: int, total: int) -> None:
            if stage == "load" and done:
                notify(f"Running on {executor.describe()}.")
            tally(stage, done, total)

        analysis = self.analysis.settings(self.task)
        try:
            run = execute(self.config, self.records, self.model, dictionary=self.dictionary, out=self.out,
                          parser=self.parser, overwrite=self.overwrite, progress=report, executor=executor,
                          suite=self.suite)
        except BudgetReached:  # everything asked so far is kept; the summary says which cells it leaves incomplete
            notify(self._stop_at_budget(analysis))
            raise
        store = run.store
        if self.config.budget is not None or "checks.budget" in store.settings():
            # a finished run records its budget (not reached), replacing an earlier session's stop
            store.save_settings({"checks.budget": {"budget": self.config.budget, "reached": False,
                                                   "incomplete_cells": [], "texts_done": len(store.done_text_ids()),
                                                   "texts_total": store.settings().get("texts")}})
        stored = tally.stored_at_start or 0
        reuse = reuse_message(self.out, len(self.records), stored, tally.calls)
        if reuse:
            notify(reuse)
        limit = identity_limit(str(store.settings().get("model", "")), self.config.model)
        if limit is not None:  # recorded with the run, and said where answers were reused (the risk is there)
            store.save_settings({"checks.model_identity": limit})
            if stored:
                notify(f"Note: {limit}; pass --overwrite to ask it again.")
        store.save_settings(analysis)
        return CampaignResult(run, write_outputs(run), stored, tally.calls)

    def model_session(self, settings: dict, progress: Progress | None = None) -> ModelSession:
        """The model stage alone, for a campaign that makes its own texts (`hinter audit`): the same model-changed
        check, executor, store, outcome cache, usage meter and --budget as `run()` (engine.model_stage), the
        answers kept in `out`/run.sqlite under `settings`. A context manager."""
        if not self.overwrite:
            self.check_model_unchanged()
        return ModelSession(self.config, self.model, self.out, settings, executor=self.executor or self.new_executor(),
                            parser=self.parser, overwrite=self.overwrite, progress=progress)

    def check_model_unchanged(self) -> None:
        """Refuse to continue a run whose python: model changed since (its code is in its fingerprint), as for any
        other changed setting. Loading such a model costs an import, so it is checked before anything else; the
        run's recorded settings compare the spec, which an edited function keeps."""
        spec = self.model.spec if isinstance(self.model, ModelSpec) else None
        if not (spec or "").startswith("python:") or not (self.out / "run.sqlite").is_file():
            return
        before = RunStore.read_settings(self.out).get("model")
        now = load_model(spec).fingerprint
        if before is not None and before != now and SOURCE_MARK not in before and now.startswith(before + SOURCE_MARK):
            raise InputError(f"the folder holds a run whose model {before} was recorded by a hinter that did not "
                             "fingerprint a python: model's code: whether the model changed since cannot be known",
                             where=str(self.out), fix="Pass --overwrite to test the model again, or continue the run "
                             "with the hinter version that started it.")
        if before is not None and before != now:
            raise InputError(f"the folder holds a run with other settings: {DERIVED_NAMES['model']}: {before} "
                             f"before, {now} now", where=str(self.out),
                             fix="The model's code changed since its answers were stored: pass --overwrite to test "
                                 "it again, choose another output folder, or undo the change to continue the run.")

    def _stop_at_budget(self, analysis: dict) -> str:
        """A run stopped by --budget: record which cells are incomplete, then write summary.json and biases.csv
        from what is stored (the report is left to `hinter report`). Returns what to tell the user."""
        store = RunStore(self.out / "run.sqlite")
        try:
            done = store.done_text_ids()
            if self.suite is not None:
                cells = incomplete_cells(self.config, self.suite.records, done, suite=self.suite)
                total = len(self.suite.records)
            else:
                texts = campaign_texts(self.config, self.records)
                cells = incomplete_cells(self.config, texts, done,
                                         dictionary=campaign_dictionary(self.config, self.dictionary))
                total = len(texts)
            store.save_settings({**analysis, "checks.budget": {
                "budget": self.config.budget, "reached": True, "incomplete_cells": cells, "texts_done": len(done),
                "texts_total": total}})
            write_outputs(Run(self.out, store))
            kept = store.outcome_count()
        finally:
            store.close()
        return (f"Stopped at the budget {self.config.budget}: {len(done)} of {total} texts done (a text is done with "
                f"all its mutants answered), {kept} answers kept for the next run; incomplete: "
                f"{', '.join(cells) or 'none'}. Written: {self.out / 'summary.json'} (usage.budget).")


def read_texts(config: RunConfig) -> tuple[list[TextRecord], list[str]]:
    """The config's dataset as every path reads it: its records and the bad rows skipped (`skip_bad_rows`: "where:
    problem" each, for Campaign.skipped_rows), checked: a --label-field that no row holds is an error."""
    read = config.read_dataset()
    if config.label_field != "label" and read.records and all(r.gold is None for r in read.records):
        raise InputError(f"no row has the label field {config.label_field!r}", where="--label-field",
                         fix="Name the column holding the gold label, or leave --label-field out (gold labels "
                             "are optional).")
    return read.records, list(read.skipped)


def input_notes(config: RunConfig, records: Sequence[str | TextRecord], skipped: Sequence[str],
                out: Path | None) -> list[str]:
    """What to tell the user about a campaign's inputs that does not stop it: the bad rows skipped (listed in
    OUT/skipped_rows.txt where there is a run folder) and texts that read as another language than the run's."""
    notes = []
    if skipped:
        where = ""
        if out is not None:
            make_out_folder(out)  # checked, and marked as hinter's, like the run's folder
            write_atomic(out / "skipped_rows.txt", "\n".join(skipped) + "\n")
            where = f", listed in {out / 'skipped_rows.txt'}"
        notes.append(f"Skipped {len(skipped)} bad row(s){where}; the first: {skipped[0]}")
    mismatch = language_mismatch([r if isinstance(r, str) else r.text for r in records], config.language)
    if mismatch:
        notes.append(f"warning: {mismatch}.")
    return notes


def suite_config(suite, model_options: dict[str, Any], changed: Sequence[str], where: str) -> RunConfig:
    """The RunConfig of a run of `suite`: the suite's own settings with the model stage's `model_options`.
    `changed`: the settings the caller was given beyond the model stage's (flags or names), which a suite fixed
    when it was built: any is an error, never silently ignored."""
    if changed:
        raise InputError(f"{', '.join(changed)} cannot change a suite: it was built with its own", where=where,
                         fix="Leave them out (`hinter suite info FILE` shows the suite's settings), or build another "
                             "suite with them.")
    return suite.run_config(**model_options)


def reuse_message(out: Path, total: int, stored_before: int, calls: int) -> str | None:
    """That a rerun reused stored answers: a finished run asked again answers from its folder, not the model."""
    if not stored_before:
        return None
    if stored_before >= total:
        return (f"All {total} texts were already tested in {out}: nothing asked, the stored answers were reused; "
                "pass --overwrite to test again.")
    return (f"{stored_before} of {total} texts were already tested in {out}: their stored answers were reused; "
            f"the other {total - stored_before} were tested now ({calls} model calls).")


__all__ = ["Campaign", "CampaignResult", "Reading", "input_notes", "read_texts", "reuse_message", "suite_config"]


def __getattr__(name: str):
    # `Analysis` was this module's name for `Reading` (findings.Analysis is the findings themselves): kept a while
    if name == "Analysis":
        warnings.warn("hinter.campaign.Analysis is now hinter.campaign.Reading", DeprecationWarning, stacklevel=2)
        return Reading
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
