"""A campaign from a RunConfig, as run, demo and resume start it: read the dataset, run with a progress bar,
then write the outputs and the report once, from one summary, and print the summary table."""
from __future__ import annotations

import json
import logging
import sys
import threading
import time
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, ProgressColumn, TimeElapsedColumn
from rich.table import Column, Table
from rich.text import Text

from hinter.mutation import lint
from hinter.campaign import Campaign, Reading, read_texts
from hinter.config import Execution, RunConfig
from hinter.mutation.dictionary import load_dictionary, with_packs
from hinter.pipeline.engine import estimate_campaign
from hinter.errors import HinterError
from hinter.analysis.health import Thresholds, untested
from hinter.models import ModelSpec, parse_model_spec
from hinter.pipeline.stages import answers_per_text
from hinter.report import write_report
from hinter.pipeline.runlock import check_out_folder
from hinter.models.tasks import get_task
from hinter.usage import Prices
from hinter.cli.app import console, out_console, running_in
from hinter.cli.gate import gate


def read_campaign(config: RunConfig):
    """The campaign's texts, the bad rows skipped (for Campaign.skipped_rows, or input_notes) and its dictionary,
    checked (hinter.campaign.read_texts) and linted."""
    records, skipped = read_texts(config)
    dictionary = with_packs(load_dictionary(config.dictionary, language=config.language), config.packs)
    dictionary.restrict(config.attributes)  # fail on an unknown attribute before loading any model
    used = dictionary.restrict(config.attributes, config.include_occupational)
    texts = [r.text for r in records]
    print_dictionary_lint(used, texts, config.exclude_evaluative)
    print_no_match(used, texts, config.attributes)
    return records, skipped, dictionary


def say_notes(notes: list[str]) -> None:
    """Print input_notes' lines (a warning's first word in yellow)."""
    for note in notes:
        warning = note.startswith("warning:")
        console.print(Text.assemble(("warning:", "yellow"), note[len("warning:"):]) if warning else
                      Text(note, style=None), highlight=False, soft_wrap=True)


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
                 analysis: Reading = Reading(), suite=None, dry_run: bool = False, yes: bool = False) -> dict | None:
    """Run `config` into `out` through hinter.campaign.Campaign, with a progress bar; returns the summary (also in
    OUT/summary.json). `suite`: a loaded suite, run instead of mutating and validating (`run --suite`).
    `dry_run`: print the campaign's estimate and stop (None, no model call); `yes`: never ask for confirmation."""
    check_out_folder(out)  # before reading anything: a folder of the user's is refused at once
    if suite is None:
        records, skipped, dictionary = read_campaign(config)
    else:  # the suite holds the texts, mutants and verdicts: no dataset, dictionary or parser to load
        records, skipped, dictionary = suite.records, [], None
    campaign = Campaign(config, records, config.model, out, dictionary=dictionary, suite=suite, execution=execution,
                        overwrite=overwrite, analysis=analysis, skipped_rows=skipped)
    campaign.check_inputs(lambda note: say_notes([note]))  # before the estimate, as the other checks
    if dry_run or _worth_estimating(config):
        if not estimate_first(config, records, dictionary, suite, out, overwrite, campaign.new_executor, dry_run, yes):
            return None
    running_in(out)
    started = time.perf_counter()
    state = CampaignProgress(len(records), config.batch_texts)

    def say(message: str) -> None:
        console.print(message, highlight=False, soft_wrap=True, markup=False)

    with _display(state) as show:
        def report(stage: str, done: int, total: int) -> None:
            state.update(stage, done, total)
            show()

        s = campaign.run(report, notify=say).summary
    print_summary(s, out, time.perf_counter() - started)
    return s


def _worth_estimating(config: RunConfig) -> bool:
    """An estimate before a run: for an API model (a bill), or where a budget or prices are given."""
    return ModelSpec(config.model or "").is_api or config.budget is not None or config.price_in is not None \
        or config.price_out is not None


def campaign_prices(config: RunConfig):
    """The prices per million tokens: --price-in / --price-out, else the model spec's price_in / price_out."""
    given: dict = {}
    try:
        given = parse_model_spec(config.model).given if config.model else {}
    except HinterError:
        pass
    return Prices(config.price_in, config.price_out).merged(Prices(given.get("price_in"), given.get("price_out")))


def prompted(model: str | None) -> bool:
    """Whether the model is asked through a task's prompt (an API, gguf:, hf-causal:), not a classifier that reads
    the text alone and answers its own labels (python:, hf:, http:)."""
    spec = ModelSpec(model or "")
    return spec.backend is not None and (spec.backend.prefix in ("openai", "openai-chat", "gguf", "hf-causal")
                                         or spec.backend.is_api and spec.backend.prefix != "http")


def _prompt_task(config: RunConfig):
    """The task whose prompt each call sends around a text (None for models that read the text alone)."""
    backend = ModelSpec(config.model or "").backend
    return get_task(config.task or "imdb") if backend is not None and backend.sends_prompt else None


def estimate_first(config: RunConfig, records, dictionary, suite, out: Path, overwrite: bool, new_executor,
                   dry_run: bool, yes: bool) -> bool:
    """Print the campaign's estimate; False when the run must not go on (a dry run, or a 'no' at the prompt).
    A dry run runs mutation and validity (exact); before a run, mutation alone (an upper bound), unless a suite
    gives the verdicts."""


    exact = dry_run or suite is not None
    if dry_run:
        console.print("Dry run: mutation and validity run to know the texts to ask; no model is loaded or called."
                      if suite is None else "Dry run: the suite's texts and verdicts; no model is loaded or called.",
                      highlight=False, soft_wrap=True)
    e = estimate_campaign(config, records, dictionary=dictionary, suite=suite, out=None if overwrite else out,
                          exact=exact, task=_prompt_task(config), prices=campaign_prices(config),
                          executor=new_executor() if exact and suite is None else None)
    target = out_console if dry_run else console
    for line in e.lines(answers_per_text(config)):
        target.print(line, highlight=False, soft_wrap=True, markup=False)
    if config.budget is not None:
        target.print(f"  --budget {config.budget}: the run stops before a batch would exceed it (what earlier "
                     "sessions of this run spent counts).", highlight=False, soft_wrap=True, markup=False)
    if dry_run:
        out_console.print(json.dumps({"estimate": e.as_dict()}), highlight=False, soft_wrap=True, markup=False)
        return False
    if e.calls > CONFIRM_ABOVE_CALLS and not yes and sys.stdin.isatty() and sys.stderr.isatty():
        if not typer.confirm(f"The campaign may make {e.calls:,} model calls. Go on?", default=False,
                             err=True):
            console.print("Nothing was asked. Pass --yes to skip this question, or narrow the campaign (--limit, "
                          "--sample, --pairs-per-attribute, --budget).", highlight=False, soft_wrap=True)
            raise typer.Exit(1)
    return True


def print_dictionary_lint(dictionary, texts: list[str], excluded: bool = False) -> None:
    """The cheap lint of the run's pairs, in one line: the kinds that need no parse (self-pair, duplicate,
    asymmetric, evaluative, and inside-word on the run's texts); `hinter dictionary lint` gives the details."""
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
    from hinter.report.html.prose import describe_finding, findings_heading
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
    r = write_report(out, summary_=s)
    out_console.print(f"Report: {r['files'][0]}", highlight=False)
    gate(s, fail_on, junit, thresholds, allow_model_errors, verdict=True, folder=out)
