"""A campaign from a RunConfig, as run, demo and resume start it: read the dataset, run with a progress bar,
then write the outputs and the report once, from one summary, and print the summary table."""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from rich.progress import BarColumn, Progress, ProgressColumn, TimeElapsedColumn
from rich.table import Column, Table
from rich.text import Text

from ..config import Execution, RunConfig
from ..errors import InputError
from ..health import Thresholds
from .app import console, out_console, running_in


def read_campaign(config: RunConfig, out: Path | None):
    """The campaign's texts (bad rows listed in OUT/skipped_rows.txt) and its dictionary, checked and linted."""
    from ..dictionary import load_dictionary, with_packs
    read = config.read_dataset()
    if config.label_field != "label" and read.records and all(r.gold is None for r in read.records):
        raise InputError(f"no row has the label field {config.label_field!r}", where="--label-field",
                         fix="Name the column holding the gold label, or leave --label-field out (gold labels "
                             "are optional).")
    if read.skipped and out is not None:
        out.mkdir(parents=True, exist_ok=True, mode=0o700)
        (out / "skipped_rows.txt").write_text("\n".join(read.skipped) + "\n", encoding="utf-8")
        console.print(f"[yellow]Skipped {len(read.skipped)} bad row(s)[/], listed in {out / 'skipped_rows.txt'}; "
                      f"the first: {read.skipped[0]}", highlight=False, soft_wrap=True)
    dictionary = with_packs(load_dictionary(config.dictionary), config.packs)
    dictionary.restrict(config.attributes)  # fail on an unknown attribute before loading any model
    used = dictionary.restrict(config.attributes, config.include_occupational)
    texts = [r.text for r in read.records]
    print_dictionary_lint(used, texts, config.exclude_evaluative)
    print_no_match(used, texts, config.attributes)
    return read.records, dictionary


def print_no_match(dictionary, texts: list[str], attributes) -> None:
    """Say at the start when no text holds a word of the run's attributes: the run can test nothing (texts in
    another language than the dictionary's, a wrong --text-field...)."""
    matcher = dictionary.matcher
    if any(matcher.find(t) for t in texts):
        return
    language = ("the built-in dictionary is English" if dictionary.source.split("+")[0] == "built-in"
                else f"the dictionary is {dictionary.source}")
    console.print(f"[yellow]warning:[/] no text of the dataset holds a word of the dictionary's attributes "
                  f"{', '.join(attributes)}: nothing can be tested ({language}; check the texts' language, "
                  "--text-field, --attributes or --dictionary).", highlight=False, soft_wrap=True)


# A campaign estimated above this many calls asks for confirmation first, where stdin is a terminal (--yes: never).
CONFIRM_ABOVE_CALLS = 10_000


def run_campaign(config: RunConfig, execution: Execution, out: Path, overwrite: bool = False,
                 analysis: dict | None = None, suite=None, dry_run: bool = False, yes: bool = False) -> dict | None:
    """Run `config` into `out`; returns the summary (also in OUT/summary.json). `analysis`: {"alpha", "label"}
    for the findings, recorded with the run (None values: the defaults). `suite`: a loaded suite, run instead of
    mutating and validating (`run --suite`). `dry_run`: print the campaign's estimate and stop (None, no model
    call); `yes`: never ask for confirmation."""
    from ..engine import execute
    from ..models import ModelSpec, identity_limit
    from ..report import write_outputs
    from ..usage import BudgetReached

    task = None
    if config.task is not None:  # an unknown task is an error whatever the backend (a python: model ignores it)
        from ..tasks import get_task
        task = get_task(config.task)
    if suite is None:
        records, dictionary = read_campaign(config, out)
    else:  # the suite holds the texts, mutants and verdicts: no dataset, dictionary or parser to load
        records, dictionary = suite.records, None
    from ..executor import make_executor

    def new_executor():
        return make_executor(execution.executor, address=execution.ray_address, workers=execution.workers,
                             cpus_per_worker=execution.cpus_per_worker, gpus_per_worker=execution.gpus_per_worker)

    if dry_run or _worth_estimating(config):
        if not estimate_first(config, records, dictionary, suite, out, overwrite, new_executor, dry_run, yes):
            return None
    running_in(out)
    if not overwrite:
        check_model_unchanged(config, out)
    executor = new_executor()
    started = time.perf_counter()
    state = CampaignProgress(len(records), config.batch_texts)
    with _display(state) as show:
        def report(stage: str, done: int, total: int) -> None:
            if stage == "load" and done:
                console.print(f"Running on {executor.describe()}.", highlight=False)
            state.update(stage, done, total)
            show()

        try:
            result = execute(config, records, ModelSpec(config.model, config.task, execution.concurrency),
                             dictionary=dictionary, out=out, executor=executor, overwrite=overwrite,
                             progress=report, suite=suite)
        except BudgetReached as e:
            stopped: BudgetReached | None = e
        else:
            stopped = None
    analysis = {k: v for k, v in (analysis or {}).items() if v is not None}
    if task is not None:
        # the label of interest is --label, else the task's first label (measures.findings_section); a multi-label
        # task makes every label of interest
        analysis.update(task_labels=list(task.labels), multi_label=task.multi_label)
    analysis_settings = {f"analysis.{k}": v for k, v in analysis.items()}
    if stopped is not None:  # everything asked so far is kept; the summary says which cells it leaves incomplete
        stop_at_budget(config, records, dictionary, suite, out, analysis_settings)
        raise stopped
    record_budget(config, result.store)
    print_reuse(out, len(records), state.stored_at_start or 0, state.calls)
    limit = identity_limit(str(result.store.settings().get("model", "")), config.model)
    if limit is not None:  # recorded with the run, and said where answers were reused (the risk is there)
        result.store.save_settings({"checks.model_identity": limit})
        if state.stored_at_start:
            console.print(f"[yellow]Note:[/] {limit}; pass --overwrite to ask it again.", highlight=False,
                          soft_wrap=True)
    result.store.save_settings(analysis_settings)
    s = write_outputs(result)
    print_summary(s, out, time.perf_counter() - started)
    return s


def _worth_estimating(config: RunConfig) -> bool:
    """An estimate before a run: for an API model (a bill), or where a budget or prices are given."""
    from ..models import ModelSpec
    return ModelSpec(config.model or "").is_api or config.budget is not None or config.price_in is not None \
        or config.price_out is not None


def campaign_prices(config: RunConfig):
    """The prices per million tokens: --price-in / --price-out, else the model spec's price_in / price_out."""
    from ..errors import HinterError
    from ..models import parse_model_spec
    from ..usage import Prices
    given: dict = {}
    try:
        given = parse_model_spec(config.model).given if config.model else {}
    except HinterError:
        pass
    return Prices(config.price_in, config.price_out).merged(Prices(given.get("price_in"), given.get("price_out")))


def _prompt_task(config: RunConfig):
    """The task whose prompt each call sends around a text (None for models that read the text alone)."""
    from ..models import ModelSpec
    from ..tasks import get_task
    spec = ModelSpec(config.model or "")
    prompted = spec.is_api or (spec.backend is not None and spec.backend.prefix in ("gguf", "hf-causal"))
    return get_task(config.task or "imdb") if prompted else None


def estimate_first(config: RunConfig, records, dictionary, suite, out: Path, overwrite: bool, new_executor,
                   dry_run: bool, yes: bool) -> bool:
    """Print the campaign's estimate; False when the run must not go on (a dry run, or a 'no' at the prompt).
    A dry run runs mutation and validity (exact); before a run, mutation alone (an upper bound), unless a suite
    gives the verdicts."""
    import sys

    import typer

    from ..engine import estimate_campaign
    exact = dry_run or suite is not None
    if dry_run:
        console.print("Dry run: mutation and validity run to know the texts to ask; no model is loaded or called."
                      if suite is None else "Dry run: the suite's texts and verdicts; no model is loaded or called.",
                      highlight=False, soft_wrap=True)
    e = estimate_campaign(config, records, dictionary=dictionary, suite=suite, out=None if overwrite else out,
                          exact=exact, task=_prompt_task(config), prices=campaign_prices(config),
                          executor=new_executor() if exact and suite is None else None)
    target = out_console if dry_run else console
    from ..pipeline import answers_per_text
    for line in e.lines(answers_per_text(config)):
        target.print(line, highlight=False, soft_wrap=True, markup=False)
    if config.budget is not None:
        target.print(f"  --budget {config.budget}: the run stops before a batch would exceed it (what earlier "
                     "sessions of this run spent counts).", highlight=False, soft_wrap=True, markup=False)
    if dry_run:
        import json
        out_console.print(json.dumps({"estimate": e.as_dict()}), highlight=False, soft_wrap=True, markup=False)
        return False
    if e.calls > CONFIRM_ABOVE_CALLS and not yes and sys.stdin.isatty() and sys.stderr.isatty():
        if not typer.confirm(f"The campaign may make {e.calls:,} model calls. Go on?", default=False,
                             err=True):
            console.print("Nothing was asked. Pass --yes to skip this question, or narrow the campaign (--limit, "
                          "--sample, --pairs-per-attribute, --budget).", highlight=False, soft_wrap=True)
            raise typer.Exit(1)
    return True


def stop_at_budget(config: RunConfig, records, dictionary, suite, out: Path, analysis_settings: dict) -> None:
    """A run stopped by --budget: record which cells are incomplete, then write summary.json and biases.csv from
    what is stored (the report is left to `hinter report`)."""
    from ..engine import Run
    from ..estimate import incomplete_cells
    from ..pipeline import campaign_dictionary, campaign_texts
    from ..report import write_outputs
    from ..store import RunStore
    store = RunStore(out / "run.sqlite")
    try:
        done = store.done_text_ids()
        if suite is not None:
            cells = incomplete_cells(config, suite.records, done, suite=suite)
            total = len(suite.records)
        else:
            texts = campaign_texts(config, records)
            cells = incomplete_cells(config, texts, done, dictionary=campaign_dictionary(config, dictionary))
            total = len(texts)
        store.save_settings({**analysis_settings, "checks.budget": {
            "budget": config.budget, "reached": True, "incomplete_cells": cells, "texts_done": len(done),
            "texts_total": total}})
        write_outputs(Run(out, store))
        console.print(f"Stopped at the budget {config.budget}: {len(done)} of {total} texts done (a text is done "
                      f"with all its mutants answered), {store.outcome_count()} answers kept for the next run; "
                      f"incomplete: {', '.join(cells) or 'none'}. Written: {out / 'summary.json'} (usage.budget).",
                      highlight=False, soft_wrap=True)
    finally:
        store.close()


def record_budget(config: RunConfig, store) -> None:
    """A finished run records its budget (not reached), replacing an earlier session's stop."""
    if config.budget is not None or "checks.budget" in store.settings():
        store.save_settings({"checks.budget": {"budget": config.budget, "reached": False, "incomplete_cells": [],
                                               "texts_done": len(store.done_text_ids()),
                                               "texts_total": store.settings().get("texts")}})


def check_model_unchanged(config: RunConfig, out: Path) -> None:
    """Refuse to continue a run whose python: model changed since (its code is in its fingerprint), as for any
    other changed setting. Loading such a model costs an import, so it is checked here, before anything else; the
    run's recorded settings compare the spec, which an edited function keeps."""
    if not (config.model or "").startswith("python:") or not (out / "run.sqlite").is_file():
        return
    from ..config import DERIVED_NAMES
    from ..models import load_model
    from ..models.callable import SOURCE_MARK
    from ..store import RunStore
    before = RunStore.read_settings(out).get("model")
    now = load_model(config.model).fingerprint
    if before is not None and before != now and SOURCE_MARK not in before and now.startswith(before + SOURCE_MARK):
        raise InputError(f"the folder holds a run whose model {before} was recorded by a hinter that did not "
                         "fingerprint a python: model's code: whether the model changed since cannot be known",
                         where=str(out), fix="Pass --overwrite to test the model again, or continue the run with "
                         "the hinter version that started it.")
    if before is not None and before != now:
        raise InputError(f"the folder holds a run with other settings: {DERIVED_NAMES['model']}: {before} before, "
                         f"{now} now", where=str(out),
                         fix="The model's code changed since its answers were stored: pass --overwrite to test it "
                             "again, choose another output folder, or undo the change to continue the run.")


def print_reuse(out: Path, total: int, stored_before: int, calls: int) -> None:
    """Say that a rerun reused stored answers: a finished run asked again answers from its folder, not the model."""
    if not stored_before:
        return
    if stored_before >= total:
        console.print(f"All {total} texts were already tested in {out}: nothing asked, the stored answers were reused; "
                      "pass --overwrite to test again.", highlight=False, soft_wrap=True)
    else:
        console.print(f"{stored_before} of {total} texts were already tested in {out}: their stored answers were "
                      f"reused; the other {total - stored_before} were tested now ({calls} model calls).",
                      highlight=False, soft_wrap=True)


def print_dictionary_lint(dictionary, texts: list[str], excluded: bool = False) -> None:
    """The cheap lint of the run's pairs, in one line: the kinds that need no parse (self-pair, duplicate,
    asymmetric, evaluative, and inside-word on the run's texts); `hinter dictionary lint` gives the details."""
    from .. import lint
    findings = lint.static_findings(dictionary.pairs) + lint.text_findings(dictionary.pairs, texts, never=False)
    line = lint.summary_line(findings)
    if line is None:
        return
    evaluative = any(f.kind == "evaluative" for f in findings)
    hint = ("; --exclude-evaluative leaves the evaluative ones out of this run" if excluded and evaluative else
            "; --exclude-evaluative would leave the evaluative ones out" if evaluative else "")
    console.print(f"dictionary: {line} (hinter dictionary lint for details{hint}).", highlight=False, soft_wrap=True)


# Progress. A bar on a terminal; otherwise (CI logs, a file) a plain line every PLAIN_EVERY_S seconds.
PLAIN_EVERY_S = 10.0


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _rate(per_second: float) -> str:
    return f"{per_second:.0f}" if per_second >= 10 else f"{per_second:.2g}"


class CampaignProgress(logging.Handler):
    """What the campaign has done, from the engine's progress(stage, done, total) calls: "load" (0, then 1 once
    the parser and the model are up), "texts" (texts stored, first the ones a resumed run had already), "model"
    (this batch's texts answered so far, of those it asks: per model batch) and "errors" (model errors so far).
    Between two stored batches the count of texts moves with the model's answers, so a slow model shows life.
    Also a logging handler: the latest warning of the model backends (`hinter.models`: retries...)."""

    def __init__(self, total: int, batch_texts: int, clock=time.monotonic):
        super().__init__(logging.WARNING)
        self.total, self.batch_texts, self.clock = total, max(1, batch_texts), clock
        self.started = clock()
        self.loaded = False
        self.work_started: float | None = None
        self.stored_at_start: int | None = None
        self.stored = 0
        self.batch_calls = self.batch_asks = 0  # this batch: texts answered by the model, texts it asks
        self.calls_before_batch = 0
        self.errors = 0
        self.warnings = 0
        self.warning: str | None = None
        self.tokens: int | None = None
        self.tokens_estimated = False
        self.cost: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        self.warnings += 1
        self.warning = " ".join(record.getMessage().split())

    def update(self, stage: str, done: int, total: int) -> None:
        if stage == "load":
            self.loaded = self.loaded or bool(done)
        elif stage == "texts":
            if self.stored_at_start is None:
                self.stored_at_start, self.work_started = done, self.clock()
            self.stored, self.total = done, total
            self.calls_before_batch += self.batch_calls
            self.batch_calls = self.batch_asks = 0
        elif stage == "model":
            self.batch_calls, self.batch_asks = done, total
        elif stage == "errors":
            self.errors = done
        elif stage in ("tokens", "tokens~"):  # hinter.usage.Meter: every session of the run
            self.tokens, self.tokens_estimated = done, stage == "tokens~"
        elif stage == "cost":
            self.cost = done

    @property
    def done(self) -> float:
        """Texts done: those stored, and the share of the current batch the model has answered."""
        if not self.batch_asks:
            return float(self.stored)
        batch = min(self.batch_texts, self.total - self.stored)
        return self.stored + batch * min(1.0, self.batch_calls / self.batch_asks)

    @property
    def calls(self) -> int:
        return self.calls_before_batch + self.batch_calls

    def speed(self) -> float | None:
        """Texts per second in this session (None before any is done)."""
        if self.work_started is None:
            return None
        moved, seconds = self.done - (self.stored_at_start or 0), self.clock() - self.work_started
        return moved / seconds if moved > 0 and seconds > 0 else None

    def parts(self, elapsed: bool = True, calls: bool = True) -> list[str]:
        """The status, piece by piece: texts done, speed, ETA, model calls, model errors (while loading: what, and
        for how long if `elapsed`). The latest warning is apart (`warning`)."""
        if self.work_started is None:
            return ["starting the run" if self.loaded else "loading the parser and the model",
                    *([_duration(self.clock() - self.started)] if elapsed else [])]
        speed = self.speed()
        parts = [f"{int(self.done)}/{self.total} texts"]
        if speed is None:
            parts.append("waiting for the first answers")
        else:
            parts += [f"{_rate(speed)} texts/s", f"ETA {_duration((self.total - self.done) / speed)}"]
        if calls:
            parts.append(f"{self.calls} model call{'s' if self.calls != 1 else ''}")
        if self.tokens is not None:
            about = "~" if self.tokens_estimated else ""
            parts.append(f"{about}{self.tokens:,} tokens" + ("" if self.cost is None else
                                                              f", cost {about}{self.cost:.4g}"))
        if self.errors:
            parts.append(f"{self.errors} model error{'s' if self.errors != 1 else ''}")
        return parts

    def line(self) -> str:
        """The plain line printed every PLAIN_EVERY_S seconds where stderr is not a terminal."""
        parts = self.parts()
        if self.warning is not None:
            parts.append(f"{self.warnings} warning{'s' if self.warnings != 1 else ''}, the latest: {self.warning[:200]}")
        return "hinter: " + ", ".join(parts)


class _StatusColumn(ProgressColumn):
    """The bar's status, computed at each refresh (speed and ETA move even while no batch ends)."""

    def __init__(self, state: CampaignProgress):
        super().__init__(table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1))  # one line, cut at its end
        self.state = state

    def render(self, task) -> Text:
        state = self.state
        # the bar's own column shows the time; a warning takes the place of the model calls (the line is short)
        text = Text(" · ".join(state.parts(elapsed=False, calls=state.warning is None)), no_wrap=True,
                    overflow="ellipsis")
        if state.warning is not None:
            text.append(f" · {state.warnings} warning{'s' if state.warnings != 1 else ''}: {state.warning}",
                        style="yellow")
        return text


class _display:
    """The progress display around a campaign; entering gives `show()`, to call after each update."""

    def __init__(self, state: CampaignProgress):
        self.state = state
        self.terminal = console.is_terminal
        self.models_log = logging.getLogger("hinter.models")
        self._stop = threading.Event()

    def __enter__(self):
        self.models_log.addHandler(self.state)
        if self.terminal:
            self.progress = Progress(TimeElapsedColumn(), BarColumn(bar_width=20), _StatusColumn(self.state),
                                     console=console, expand=True)
            self.progress.start()
            self.bar = self.progress.add_task("", total=self.state.total)
            return lambda: self.progress.update(self.bar, completed=self.state.done, total=self.state.total)
        # not a terminal: a plain line every PLAIN_EVERY_S seconds, whether or not a batch ended meanwhile
        self._thread = threading.Thread(target=self._plain_lines, name="hinter-progress", daemon=True)
        self._thread.start()
        return lambda: None

    def _plain_lines(self) -> None:
        while not self._stop.wait(PLAIN_EVERY_S):
            console.print(self.state.line(), highlight=False, markup=False, soft_wrap=True)

    def __exit__(self, exc_type, exc, tb) -> None:
        self.models_log.removeHandler(self.state)
        if self.terminal:
            self.progress.stop()
            return
        self._stop.set()
        self._thread.join(timeout=5)
        if exc_type is None:
            s = self.state
            tokens = "" if s.tokens is None else f"{'~' if s.tokens_estimated else ''}{s.tokens:,} tokens, "
            console.print(f"hinter: {s.stored}/{s.total} texts, {s.calls} model calls, {tokens}"
                          f"{_duration(s.clock() - s.started)}", highlight=False, markup=False, soft_wrap=True)


def print_summary(s: dict, out_dir: Path, seconds: float) -> None:
    table = Table(title="Bias by attribute (atomic) and combination (intersectional)", title_justify="left")
    table.add_column("attributes", no_wrap=True)
    for col in ("mutants", "valid", "discarded", "biased", "error rate", "hidden", "hidden rate"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("discarded by")  # why (validity.invariant.DISCARD_REASONS)

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    for kind in ("atomic", "intersectional"):
        rows = [(combo, m) for combo, m in s[kind].items()] + [(f"all {kind}", s["totals"][kind])]
        for combo, m in rows:
            inter = kind == "intersectional"
            table.add_row(combo, str(m["mutants"]), str(m["valid"]), pct(m["discarded_share"]), str(m["biased"]),
                          pct(m["error_rate"]), str(m["hidden"]) if inter else "", pct(m["hidden_rate"]) if inter else "",
                          ", ".join(f"{r} {n}" for r, n in m.get("discarded_by", {}).items()),
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
    ev = s.get("evaluative")
    if ev and not s["settings"].get("exclude_evaluative"):
        n = {k: ev["totals"]["atomic"][k] + ev["totals"]["intersectional"][k] for k in ("mutants", "biased")}
        if n["mutants"]:
            out_console.print(f"Evaluative pairs (\"man\" -> \"ugly man\"): {n['mutants']} mutants, {n['biased']} "
                              "biased, marked in the report; --exclude-evaluative leaves them out.", highlight=False)
    if s["unparseable"].get("answers"):
        shown = [e for e in s.get("first_errors", []) if e.startswith("unparseable answer: ")]
        out_console.print(f"[yellow]Unparseable answers: {s['unparseable']['answers']}[/] (never a finding)"
                          + (f"; first: {'; '.join(e[:200] for e in shown)}" if shown else "."),
                          highlight=False, soft_wrap=True)
    if s.get("model_errors"):
        again = s["health"].get("texts_to_ask_again", 0)
        out_console.print(f"[red]Model errors: {s['model_errors']} texts got no answer after retries[/] (counted "
                          "apart, never as bias or as no bias; their raw error is in run.sqlite)"
                          + (f"; the same command or `hinter resume` asks {again} texts again." if again else "."),
                          highlight=False, soft_wrap=True)
    flip = s.get("self_flip")
    if flip and flip.get("rate") is not None:  # --repeats measured the model's own noise
        low, high = flip["ci"] or (None, None)
        out_console.print(f"Self-flip rate (--repeats: two answers of the model on one original differ): "
                          f"{100 * flip['rate']:.1f}%" + (f" (95% CI {100 * low:.1f}-{100 * high:.1f}%)"
                                                         if low is not None else "") + f", over {flip['texts']} texts.",
                          highlight=False, soft_wrap=True)
    out_console.print(f"Model calls: {s['model_calls']}, sentences tagged: {s.get('sentences_tagged', 0)}, "
                      f"given dependencies: {s['sentences_parsed']}, "
                      f"wall time {seconds:.1f} s.")
    print_usage(s)
    from ..health import untested
    why = untested(s)
    if why:
        out_console.print(f"[red]Nothing was tested[/]: {why}. A --fail-on gate or `hinter check` on this run "
                          "fails (exit 3).", highlight=False, soft_wrap=True)
    print_findings(s)
    out_console.print(f"Written: {out_dir / 'run.sqlite'}, {out_dir / 'summary.json'}, {out_dir / 'biases.csv'}")


def print_usage(s: dict) -> None:
    """What the model cost, every session of the run (summary.json's usage)."""
    u = s.get("usage")
    if not u or not u["calls"]:
        return
    about = "about " if u["estimated"] else ""
    cost = "" if u["cost"] is None else f", cost {u['cost']:.4g}" + (
        f" (not counting {u['unpriced_calls']} calls made without prices)" if u["unpriced_calls"] else "")
    est = f" ({u['estimated_calls']} calls' tokens estimated)" if u["estimated"] else ""
    retries = f", {u['retries']} retries" if u["retries"] else ""
    out_console.print(f"Usage: {u['calls']} requests (answers reused from the run folder are free), {about}"
                      f"{u['tokens_in']:,} tokens read and {u['tokens_out']:,} written{est}{cost}{retries}.",
                      highlight=False, soft_wrap=True)


def print_findings(s: dict, show: int = 10) -> None:
    """Which findings hold up: the significant cells (q <= alpha), population-hidden combinations marked; a
    multi-label run says which labels moved."""
    from ..report.html.prose import describe_finding, findings_heading
    a = s["findings_analysis"]
    significant = [f for f in s["findings"] if f["significant"]]
    if not s["findings"]:
        out_console.print("Findings that hold up: none; no cell was tested.", highlight=False)
        return
    head = findings_heading(s) + ": "
    if not significant:
        out_console.print(head + "none. No cell's changes differ from what chance gives on this many texts.",
                          highlight=False, soft_wrap=True)
        return
    moved = f" Labels that moved: {', '.join(a['labels_moved'])}." if a.get("labels") else ""
    out_console.print(head + f"{len(significant)}, of which {s['population_hidden']} population-hidden.{moved}",
                      highlight=False, soft_wrap=True)
    for f in sorted(significant, key=lambda f: (not f.get("population_hidden"), f["q_value"]))[:show]:
        out_console.print("  " + describe_finding(f, a.get("label"), a["measure"]), highlight=False, soft_wrap=True)


def write_report_and_gate(out: Path, s: dict, fail_on: list[str], junit: Path | None,
                          thresholds: Thresholds = Thresholds(), allow_model_errors: bool = False) -> None:
    """The report, then the verdict: a failed model ends the run with exit 3 whatever the gate says."""
    from ..report import write_report
    from .gate import gate
    r = write_report(out, summary_=s)
    out_console.print(f"Report: {r['files'][0]}", highlight=False)
    gate(s, fail_on, junit, thresholds, allow_model_errors, verdict=True)
