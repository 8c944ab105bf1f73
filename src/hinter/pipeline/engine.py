"""A run: its settings recorded and checked, its store opened and locked, the once-per-run checks, then the
pipeline (pipeline.py) over the texts not yet stored, batch by batch into the store."""
from __future__ import annotations

import logging
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from hinter.analysis.adaptive import cells_bound, plan_of
from hinter.config import RECORDED_ONLY_WHEN_SET, RunConfig, describe_differences
from hinter.mutation.dictionary import Dictionary, occupational_ids
from hinter.errors import InputError
from hinter.pipeline.estimate import estimate
from hinter.executor import Executor, LocalExecutor, validate_jobs, with_grammar_check
from hinter.executor.forked import ForkedPool, fork_available, run_here
from hinter.analysis.findings import ALPHA
from hinter.generative.judge_aspect import judge_settings
from hinter.languages import check_parser, get_language
from hinter.mutation.lint import evaluative_check
from hinter.analysis.measures import summary
from hinter.models import ModelSpec
from hinter.models.base import Outcome, OutcomeCache, predict_with_retries, task_labels
from hinter.pipeline.stages import (BatchResult, Mutate, ParsedVerdicts, TextBatch, Verdicts, answers_per_text, campaign_dictionary,
                       campaign_texts, judge_for, run_pipeline, task_of, text_batches)
from hinter.pipeline.recorded_settings import comparable
from hinter.records import Replacement, TextRecord, dictionary_replacements, text_key, texts_fingerprint
from hinter.pipeline.runlock import lock_run_folder, make_out_folder
from hinter.store import MAX_TRIES, RunStore, empty_run_error, lost_run, remove_run_files, unseal
from hinter.models.tasks import adaptive_refusal, is_generative, noise_of
from hinter.usage import JUDGE_ACCOUNT, BudgetReached, Meter, Prices, parse_budget, summary_section
from hinter.validity import Parser, SpacyParser, Validator, tolerant_compare
from hinter.validity.parsers import DEFAULT_SPACY_MODEL, default_processes

log = logging.getLogger("hinter")


@dataclass(frozen=True)
class MutantRecord:
    """One mutant as a user reads it back from a run."""

    text_id: int
    order: int
    replacements: tuple[Replacement, ...]
    text: str
    valid: bool
    outcome: str | None
    raw: str | None
    bias: bool | None
    hidden: bool | None
    strictly_hidden: bool | None

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(r.attribute for r in self.replacements)


class Run:
    """A finished run: its folder, its store, its mutants and its measures."""

    def __init__(self, out_dir: Path, store: RunStore):
        self.out_dir, self.store = out_dir, store

    @property
    def mutants(self) -> Iterator[MutantRecord]:
        for m in self.store.mutants():
            yield MutantRecord(m.text_id, m.order, m.replacements, m.text, m.valid, m.outcome, m.raw, m.bias, m.hidden,
                               m.strictly_hidden)

    def summary(self) -> dict:
        return summary(self.store)


# Copies of one text asked at start (--determinism-probes' default). A model whose answer flips with probability p
# on each call answers all n copies alike with probability (1 - p)^n + p^n: for p = 10%, 43% with n = 8 (it passed
# more often than not), 3.4% with n = 32, so 32 copies catch a 10%-noise model 96.6% of the time (a 5%-noise one
# 81%), for one batch of calls.
DETERMINISM_PROBES = 32


def chance_to_catch(probes: int, flip_rate: float = 0.1) -> float:
    """How often `probes` copies of one text catch a model that flips `flip_rate` of its answers."""
    return 1 - ((1 - flip_rate) ** probes + flip_rate ** probes)


def check_determinism(model, text: str, asked: Sequence[Outcome] = (), keep=None, meter=None,
                      probes: int = DETERMINISM_PROBES) -> tuple[dict, Outcome | None]:
    """Ask `model` about one text `probes` times, in calls of at most its batch size, bypassing every cache:
    ({"deterministic": bool or None (undecided: the model failed), "detail", "probes"}, the first answer). Scores
    count as equal within 1e-4 (float noise of kernels). `asked`: the answers an earlier session of the run got
    (only the rest are asked); `keep(answers)` is told the answers so far after each call, so that a session
    killed in the check does not have the next one pay for them again; `meter` (usage.Meter) counts each call
    before it is sent."""
    answers = list(asked)[:probes]
    step = max(1, min(probes, getattr(model, "batch_size", probes)))
    while len(answers) < probes:
        texts = [text] * min(step, probes - len(answers))
        if meter is not None:
            meter.sending(texts)
        got = predict_with_retries(model, texts, 1, 0.2)
        if meter is not None:
            meter.record(texts)
        if isinstance(got, str) or any(a.error for a in got):
            return {"deterministic": None, "detail": "the model failed on the check", "probes": probes}, None
        answers += got
        if keep is not None:
            keep(answers)
    x = answers[0]
    for y in answers[1:]:
        same_scores = (x.scores is None) == (y.scores is None) and (
            x.scores is None or all(p[0] == q[0] and abs(p[1] - q[1]) <= 1e-4 for p, q in zip(x.scores, y.scores)))
        if x.encode() != y.encode() or not same_scores:
            return {"deterministic": False, "detail": f"{x.encode()!r} then {y.encode()!r}" + (
                "" if x.encode() != y.encode() else ", with other scores"), "probes": probes}, x
    return {"deterministic": True, "detail": f"{x.encode()!r} {probes} times", "probes": probes}, x


NOT_CHECKED = "not asked: --determinism-probes 0"
PROBE_ANSWERS = "checks.determinism.asked"  # the check's answers so far, while it is unfinished


def _probe_answers(store: RunStore, model) -> list[Outcome]:
    """The determinism check's answers an earlier, killed session of this run got (from this model)."""
    kept = store.settings().get(PROBE_ANSWERS) or {}
    if kept.get("model") != model.fingerprint:
        return []
    return [Outcome(value, raw, scores=scores) for value, raw, scores in kept.get("answers", [])]


def _keep_probe_answers(store: RunStore, model):
    def keep(answers: Sequence[Outcome]) -> None:
        store.save_settings({PROBE_ANSWERS: {"model": model.fingerprint, "answers": [
            [a.encode(), a.raw, None if a.scores is None else [list(p) for p in a.scores]] for a in answers]}})
    return keep


def _open_store(out_dir: Path, settings: dict, overwrite: bool) -> RunStore:
    path = out_dir / "run.sqlite"
    if path.exists() and overwrite:
        remove_run_files(out_dir)  # the run's database alone: never a user's run.sqlite.bak beside it
    elif lost_run(out_dir):  # not started again silently over a finished run's outputs
        raise empty_run_error(path)
    # compared before anything is written: a refused run leaves the folder, its seal included, as it found it
    previous = RunStore.read_settings(out_dir) if path.exists() else {}
    if previous and comparable(previous) != comparable(settings):
        differ = describe_differences(comparable(previous), comparable(settings))
        raise InputError("the folder holds a run with other settings: " + "; ".join(differ),
                         where=str(out_dir), fix="Run the same command as before to continue it, choose another "
                         "output folder, or pass --overwrite to replace it.")
    unseal(out_dir)
    store = RunStore(path)
    store.save_settings(settings)
    return store


def prepare(config: RunConfig, texts: Sequence[str | TextRecord], dictionary: Dictionary | None
            ) -> tuple[list[TextRecord], Dictionary]:
    """The texts as the campaign mutates them, and its dictionary (packs added, restricted, sampled)."""
    return campaign_texts(config, texts), campaign_dictionary(config, dictionary)


def dictionary_settings(d: Dictionary) -> dict:
    return {"dictionary": d.source, "dictionary_pairs": len(d.pairs), "dictionary_fingerprint": d.fingerprint()}


def _parser_fingerprint(executor: Executor, config: RunConfig) -> str:
    """The parser as a run and a suite record it: a validity mode other than the paper's is part of it."""
    return executor.parser_fingerprint + ("" if config.validity == "paper" else f"+validity={config.validity}")


def _never_asked(texts):
    raise RuntimeError("building a suite asks no model")


@contextmanager
def _validity_only(executor: Executor | None, parser: Parser | None, report: Callable, spacy_model: str | None = None,
                   records=()):
    """An executor started for mutation and validity alone (a suite's build, an estimate) of `records`: no model is
    loaded."""
    executor = executor or LocalExecutor()
    try:
        report("load", 0, 1)
        executor.start(_never_asked, parser, spacy_model=spacy_model, characters=sum(len(r.text) for r in records))
        report("load", 1, 1)
        yield executor
    finally:
        executor.close()


def build_verdicts(config: RunConfig, texts: Sequence[str | TextRecord], start: Callable, *,
                   dictionary: Dictionary | None = None, parser: Parser | None = None,
                   executor: Executor | None = None, progress: Callable[[str, int, int], None] | None = None) -> None:
    """Mutation and validity alone, as a run does them (`hinter suite build`): `start(records, dictionary
    settings, parser fingerprint, evaluative check)` returns the sink each batch's pipeline.BatchResult goes to.
    On this machine (no executor, or the local one) whole texts are spread over its processes (SpreadVerdicts)."""
    records, d = prepare(config, texts, dictionary)
    report = progress or (lambda stage, done, total: None)
    check_parser(parser, config.language)
    if executor is None or isinstance(executor, LocalExecutor):
        owned = parser is None
        # a parser given without an executor is used as before, here: it may not be safe to fork (a connection)
        processes = (executor.processes if executor is not None else None) or (
            default_processes(sum(len(r.text) for r in records)) if owned else 1)
        report("load", 0, 1)
        if owned:  # loaded once, here: the workers are forked with it
            parser = SpacyParser(get_language(config.language).spacy_model or DEFAULT_SPACY_MODEL, n_process=1,
                                 language=config.language)
        try:
            source = SpreadVerdicts(Mutate(config, d), parser, processes if fork_available() else 1)
            try:
                report("load", 1, 1)
                sink = start(records, dictionary_settings(d), parser.fingerprint, evaluative_check(d.pairs))
                run_pipeline(text_batches(records, set(), config.batch_texts), source, sink, config,
                             total=len(records), report=report)
            finally:
                source.close()
        finally:
            if owned:
                parser.close()
        return
    with _validity_only(executor, parser, report, get_language(config.language).spacy_model, records) as executor:
        # the parser alone: the suite records the validity mode apart, and a run of it adds it as a plain run does
        sink = start(records, dictionary_settings(d), executor.parser_fingerprint, evaluative_check(d.pairs))
        run_pipeline(text_batches(records, set(), config.batch_texts), ParsedVerdicts(Mutate(config, d), executor.validate),
                     sink, config, total=len(records), report=report)


class SpreadVerdicts:
    """The verdicts of a suite's build over `processes` forked workers (here, for one), the same bytes whatever
    their number: each text is validated by a Validator of its own (fresh caches: its verdicts, discard reasons
    and counters depend on the text alone), and the work is cut the same way for any number of processes.

    A text is the unit, but one text can be much of a campaign: on the large IMDB campaign one review's mutated
    sentences were a fifth of the characters to parse, another's 2,308 sentences took 31 s alone. So each text is
    planned first (`_plan`: its mutants and distinct changed sentence pairs); a text whose sentences hold more than
    SPLIT characters is cut into slices of about CHUNK, tagged and parsed on any worker, then the worker that kept
    its mutants runs its Validator on those parses (`_Parsed`: a sentence it asks for is looked up, and counted, as
    if parsed). Plans go out longest text first; then slices and texts, the costliest first.
    """

    WINDOW = 4096     # texts; a window's batches are held until their texts are done
    SPLIT = 32_000    # characters: a text needing more parsed (its distinct changed sentences) is cut...
    CHUNK = 16_000    # ...into slices of about this many
    KEEP = 2_000      # mutants: a text with more is validated where it was mutated

    def __init__(self, mutate: Mutate, parser: Parser, processes: int):
        self.mutate, self.parser = mutate, parser
        self._kept: dict[int, tuple] = {}  # in a worker: the mutants of the cut texts it mutated
        with_grammar_check(None, mutate.config.grammar)  # before the fork: --grammar's checker loaded once
        preload = get_language(mutate.config.language).preload
        if preload is not None and processes > 1:  # before the fork: mutation's pipeline (English) loaded once
            preload()
        functions = {"plan": self._plan, "text": self._text, "sentences": self._sentences, "cut": self._cut}
        self.pool = ForkedPool(processes, functions) if processes > 1 else None
        self._here = lambda kind, payload: functions[kind](payload)

    def _verdicts(self, made: tuple, parser: Parser) -> tuple[TextBatch, Verdicts]:
        """A mutated text's verdicts, as ParsedVerdicts gives them, by a Validator of its own over `parser`."""
        source = ParsedVerdicts(_Made(self.mutate.config, made), lambda jobs: validate_jobs(Validator(parser), jobs))
        return next(source.verdicts([(made[0].start, made[0].texts)]))

    def _plan(self, unit) -> tuple:
        """What a text needs parsed (the characters of its distinct changed sentences): ("cut", them, its pairs in
        slices of about CHUNK characters) above SPLIT, else ("plan", them); its mutants kept here for the task
        that follows (`_kept`) when it is cut or has KEEP mutants or more (mutating them again would cost more
        than waiting for this worker), else mutated again by `_text` wherever that runs."""
        made = self.mutate.batch(*unit)
        pairs = sorted({pair for ps in made[1] if ps for pair in ps})
        size = sum(len(s) for s in {s for pair in pairs for s in pair})
        if size <= self.SPLIT:
            if len(made[0].mutants) < self.KEEP:
                return "plan", size
            self._kept[unit[0]] = made
            return "kept", size
        self._kept[unit[0]] = made
        slices, chars, seen = [[]], 0, set()
        for pair in pairs:
            if chars >= self.CHUNK:
                slices.append([])
                chars, seen = 0, set()
            slices[-1].append(pair)
            chars += sum(len(s) for s in pair if s not in seen)
            seen.update(pair)
        return "cut", size, slices

    def _text(self, unit) -> tuple:
        made = self._kept.pop(unit[0], None) or self.mutate.batch(*unit)
        return "done", self._verdicts(made, self.parser)

    def _sentences(self, pairs: list) -> tuple[str, dict, dict]:
        """A slice of a cut text's pairs: every sentence tagged, and those of pairs whose tags conform (all of them
        in a language with the agreement check) given their dependencies, as the Validator would ask."""
        sentences = list(dict.fromkeys(s for pair in pairs for s in pair))
        tags = dict(zip(sentences, self.parser.tag(sentences)))
        agreement = getattr(self.parser, "agreement", False)
        parse = list(dict.fromkeys(s for c, m in pairs if agreement or tolerant_compare(tags[c], tags[m])
                                   for s in (c, m)))
        return "slice", tags, dict(zip(parse, self.parser.parse(parse)))

    def _cut(self, job) -> tuple[str, object]:
        """A cut text's verdicts, on the worker that kept its mutants, from its slices' parses."""
        text_id, tags, parses = job
        return "done", self._verdicts(self._kept.pop(text_id), _Parsed(self.parser, tags, parses))

    def verdicts(self, batches: Iterable) -> Iterator[tuple[TextBatch, Verdicts]]:
        batches = iter(batches)
        run = self.pool.run if self.pool is not None else lambda tasks, then: run_here(self._here, tasks, then)
        while True:
            window, size = [], 0
            for start, texts in batches:
                window.append((start, texts))
                size += len(texts)
                if size >= self.WINDOW:
                    break
            if not window:
                return
            units = [(text_id, [(text_id, rec)]) for _, texts in window for text_id, rec in texts]
            # every text's plan first, the longest texts first (ties in text order); then their verdicts, the
            # costliest first, a cut text's slices by its whole cost
            tasks = [("plan", units[i]) for i in sorted(range(len(units)), key=lambda i: -len(units[i][1][0][1].text))]
            unit_of = [unit for _, unit in tasks]  # per task number: its text (follow-ups numbered on)
            waiting: Counter = Counter()  # per cut text: its slices not yet parsed
            parsed: dict[int, tuple[dict, dict]] = {}
            keeper: dict[int, int] = {}  # per cut text: the worker that kept its mutants

            def then(task: int, value, worker: int) -> list:
                """What follows a plan: the text's verdicts (on the worker that kept its mutants, if it did), or a
                cut text's slices, then, once all are parsed, its Validator on the worker that kept its mutants."""
                unit = unit_of[task]
                text_id = unit[0]
                if value[0] in ("plan", "kept"):
                    follow = [("text", unit, worker if value[0] == "kept" else None, value[1])]
                elif value[0] == "cut":
                    keeper[text_id] = worker
                    follow = [("sentences", pairs, None, value[1]) for pairs in value[2]]
                    waiting[text_id] = len(follow)
                elif value[0] == "slice":
                    tags, parses = parsed.setdefault(text_id, ({}, {}))
                    tags.update(value[1])
                    parses.update(value[2])
                    waiting[text_id] -= 1
                    follow = [] if waiting[text_id] else [("cut", (text_id, *parsed.pop(text_id)),
                                                           keeper.pop(text_id), 0)]
                else:
                    follow = []
                unit_of.extend([unit] * len(follow))
                return follow

            position = {unit[0]: i for i, unit in enumerate(units)}
            texts = ((position[value[1][0].start], value[1]) for _, value in run(tasks, then) if value[0] == "done")
            yield from _in_batches(window, texts)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


class _Made:
    """ParsedVerdicts' Mutate for a text mutated before: its batch and changed sentence pairs, as made."""

    def __init__(self, config: RunConfig, made: tuple):
        self.config, self.made = config, made

    def batch(self, start, texts) -> tuple:
        return self.made


class _Parsed:
    """A parser answering from a cut text's parses (made in slices by the workers); a sentence not among them is
    parsed by `parser`. The Validator above it counts what it asks, as with the parser itself."""

    def __init__(self, parser: Parser, tags: dict, parses: dict):
        self.parser, self.tags, self.parses = parser, tags, parses
        self.fingerprint = parser.fingerprint
        self.agreement = getattr(parser, "agreement", False)

    def tag(self, sentences):
        missing = [s for s in sentences if s not in self.tags]
        if missing:
            self.tags.update(zip(missing, self.parser.tag(missing)))
        return [self.tags[s] for s in sentences]

    def parse(self, sentences):
        missing = [s for s in sentences if s not in self.parses]
        if missing:
            self.parses.update(zip(missing, self.parser.parse(missing)))
        return [self.parses[s] for s in sentences]


def _in_batches(window: list, done: Iterator[tuple[int, tuple[TextBatch, Verdicts]]]
                ) -> Iterator[tuple[TextBatch, Verdicts]]:
    """Each batch of the window, its texts' results joined, as soon as it and the batches before it are done."""
    results: dict[int, tuple[TextBatch, Verdicts]] = {}
    first = 0  # the index of the next batch's first text
    for start, texts in window:
        while any(first + k not in results for k in range(len(texts))):
            i, result = next(done)
            results[i] = result
        yield _joined(start, [results.pop(first + k) for k in range(len(texts))])
        first += len(texts)


def _joined(start: int, parts: list[tuple[TextBatch, Verdicts]]) -> tuple[TextBatch, Verdicts]:
    counters: Counter = Counter()
    for b, _ in parts:
        counters.update(b.counters)
    early = None if all(b.early is None for b, _ in parts) else \
        [r for b, _ in parts for r in (b.early or [None] * len(b.mutants))]
    batch = TextBatch(start, [t for b, _ in parts for t in b.texts], [m for b, _ in parts for m in b.mutants],
                      [c for b, _ in parts for c in b.changed], early, counters,
                      sum(b.seconds_mutation for b, _ in parts))
    return batch, Verdicts([x for _, v in parts for x in v.valid], [r for _, v in parts for r in v.reasons],
                           sum(v.sentences_tagged for _, v in parts), sum(v.sentences_parsed for _, v in parts))


def run_settings(config: RunConfig, model_fingerprint: str, parser_fingerprint: str, derived: dict,
                 records: Sequence[TextRecord], suite=None) -> dict:
    """What a run records and compares on reopening: its options (those added later only when set), what was
    loaded (dictionary, model and parser fingerprints, the texts), and its config when resume can rebuild it."""
    return {
        "attributes": list(config.attributes), "order": config.order, **derived,
        "pairs_per_attribute": config.pairs_per_attribute, "max_pairs_per_text": config.max_pairs_per_text,
        "seed": config.seed, "include_occupational": config.include_occupational, "model": model_fingerprint,
        "parser": parser_fingerprint, "query_discarded": config.query_discarded, "texts": len(records),
        **({"window": config.window} if config.window is not None else {}),
        **({"repeats": config.repeats} if config.repeats > 1 else {}),
        **{name: v for name, v in config.recorded().items() if name in RECORDED_ONLY_WHEN_SET},
        "texts_fingerprint": texts_fingerprint(records),
        # what `hinter resume` needs to run the same campaign again: only a run read from a dataset by a spec
        **({"config": config.recorded()} if config.dataset is not None and config.model is not None else {}),
        # a suite run: which suite (resume reads it again, and refuses another one)
        **({"suite": str(suite.path), "suite_fingerprint": suite.fingerprint} if suite is not None else {}),
        **_grammar_settings(config, suite),
    }


def _grammar_settings(config: RunConfig, suite) -> dict:
    """--grammar: the checker whose verdicts the run holds (Harper's version; a suite run: the suite's), so that a
    run is never continued with another one."""
    if config.grammar is None:
        return {}
    from hinter.validity.grammar import checker_fingerprint
    return {"grammar_checker": suite.header["fingerprints"].get("grammar") if suite is not None
            else checker_fingerprint()}


def _claim_folder(out_dir: Path):
    """The run folder made and locked before any work (a second process on it stops at once); its lock."""
    make_out_folder(out_dir)  # a folder of the user's (not empty, no run) is refused: its files are never replaced
    return lock_run_folder(out_dir)


def _start_model(executor: Executor, model, parser: Parser | None, config: RunConfig, report,
                 characters: int | None = None):
    """The model started where the executor runs it, with the parser of the run's language (`characters`: the
    campaign's texts', for the executor's default worker count); (the model to ask, whether it was loaded for
    this run: then all its usage counts is the run's)."""
    report("load", 0, 1)
    loaded_here = isinstance(model, (str, ModelSpec))
    check_parser(parser, config.language)
    started = executor.start(model, parser, spacy_model=get_language(config.language).spacy_model,
                             characters=characters)
    report("load", 1, 1)
    return started, loaded_here


def execute(config: RunConfig, texts: Sequence[str | TextRecord], model, *, dictionary: Dictionary | None = None,
            out: str | Path | None = None, parser: Parser | None = None, overwrite: bool = False,
            progress: Callable[[str, int, int], None] | None = None, executor: Executor | None = None,
            suite=None) -> Run:
    """The campaign `config` describes on `texts`, stored batch by batch in `out`; returns the Run and writes
    nothing else (the caller writes the outputs once). `dictionary` overrides `config.dictionary`. `suite`: a
    loaded hinter.pipeline.suite.Suite, whose texts, mutants and verdicts replace mutation and validity (`texts`,
    `dictionary` and `parser` are then unused, and spaCy is never loaded)."""
    generative = _check_generative(config)
    if suite is None:
        records, d = prepare(config, texts, dictionary)
        derived = dictionary_settings(d)
    else:
        records, d, derived = suite.records, None, {
            k: suite.settings[k] for k in ("dictionary", "dictionary_pairs", "dictionary_fingerprint")}
        parser = suite.parser()
    out_dir = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="hinter-run-"))
    lock = _claim_folder(out_dir)
    executor = executor or LocalExecutor()
    report = progress or (lambda stage, done, total: None)
    try:
        model, loaded_here = _start_model(executor, model, parser, config, report,
                                          characters=sum(len(r.text) for r in records))
        store = _open_store(out_dir, {**run_settings(config, model.fingerprint, _parser_fingerprint(executor, config),
                                                     derived, records, suite), **generative}, overwrite)
        _add_load_seconds(store, model, loaded_here)
        cache, judge_cache = model_stage(config, model, store, report, loaded_here)
        _run_checks(store, model, records, config, d, suite, cache.meter)
        source = suite if suite is not None else ParsedVerdicts(Mutate(config, d), executor.validate)
        done = store.done_text_ids()
        again = _ask_again(store, config)
        if config.adaptive:  # kept as they are (_ask_again)
            done |= set(store.again_text_ids())
        plan = adaptive_plan(config, store, model, d, suite)
        run_pipeline(text_batches(records, done, config.batch_texts), source, StoreSink(store), config,
                     cache=cache, total=len(records), done=len(done), report=report, plan=plan,
                     decide=judge_for(config, judge_cache), again=again)
        return Run(out_dir, store)
    finally:
        executor.close()
        lock.release()


def _add_load_seconds(store: RunStore, model, loaded_here: bool) -> None:
    """The model's load, phase by phase (hf:, hf-causal:: `load_seconds`, hinter.models.startup), in the run's
    stats beside the stages' seconds: the summary's `seconds` says what the start-up took."""
    phases = getattr(model, "load_seconds", None) if loaded_here else None
    if isinstance(phases, dict):
        store.add_stats({f"seconds_{phase}": float(v) for phase, v in phases.items()})


def model_stage(config: RunConfig, model, store: RunStore, report=None, loaded_here: bool = True):
    """The model stage of every path that asks a model (a run, a suite run, an audit): the run's outcome cache
    (answers stored under the model's fingerprint, the task's labels, retries) metered by --budget and the prices
    (usage.*), and `judge_cache(judge_model)`: a judge model's cache, metered apart (usage.judge) against the same
    budget."""
    meter = usage_meter(config, model, store, report, loaded_here)
    cache = OutcomeCache(model, store, meter=meter, labels=task_labels(task_of(config)))

    def judge_cache(judge_model):
        """A judge model's cache: its calls metered apart (usage.judge), against the run's budget."""
        judge_meter = usage_meter(config, judge_model, store, since_load=False, account=JUDGE_ACCOUNT)
        meter.share_budget(judge_meter)
        return OutcomeCache(judge_model, meter=judge_meter)
    return cache, judge_cache


class ModelSession:
    """The model stage alone, as a run has it, for a campaign that makes its own texts (`hinter audit`): the folder
    locked, the model started by the executor, its answers stored in `out`/run.sqlite under `settings` (compared
    on reopening as a run's are: another model or task is refused, --overwrite replaces it), asked through
    `model_stage` (usage, --budget, the judge's account). A context manager; `ask` and `judge` return answers."""

    def __init__(self, config: RunConfig, model, out: str | Path, settings: dict, *, executor: Executor | None = None,
                 parser: Parser | None = None, overwrite: bool = False,
                 progress: Callable[[str, int, int], None] | None = None):
        self.config, self.model, self.out, self.settings = config, model, Path(out), settings
        self.executor = executor or LocalExecutor()
        self.parser, self.overwrite = parser, overwrite
        self.report = progress or (lambda stage, done, total: None)
        self.store: RunStore | None = None
        self.stored_at_start = 0

    def __enter__(self) -> "ModelSession":
        self.lock = _claim_folder(self.out)
        try:
            self.model, loaded_here = _start_model(self.executor, self.model, self.parser, self.config, self.report)
            self.store = _open_store(self.out, {**self.settings, "model": self.model.fingerprint}, self.overwrite)
            self.stored_at_start = self.store.outcome_count()
            self.cache, self._judge_cache = model_stage(self.config, self.model, self.store, self.report,
                                                        loaded_here)
            self._judges: dict = {}
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.store is not None:
                self.store.close()
                self.store = None
        finally:
            self.executor.close()
            self.lock.release()

    def _budgeted(self, ask, total: int):
        try:
            return ask()
        except BudgetReached:  # everything asked so far is kept; the folder records the stop
            self.store.save_settings({"checks.budget": {"budget": self.config.budget, "reached": True,
                                                        "incomplete_cells": [],
                                                        "texts_done": self.store.outcome_count(),
                                                        "texts_total": total}})
            raise

    def ask(self, texts: Sequence[str], samples: int = 1) -> dict[str, tuple[Outcome, ...]]:
        """Each distinct text's answers, one per sample (a generative task's `samples`), stored as they come."""
        by_repeat = self._budgeted(lambda: self.cache.predict_repeats(texts, tuple(range(samples))),
                                   len(texts) * samples)
        return {t: tuple(answers[text_key(t)] for answers in by_repeat) for t in texts}

    def judge(self, spec: str, answers: Sequence[str]) -> list[float]:
        """The judge model of `spec` (the judge aspect's rubric, hinter.generative.judge_aspect) on `answers`: 1 for
        yes, 0 for no; its calls metered apart (usage.judge), against the same budget."""
        from hinter.generative.judge_aspect import JudgeScorer, judge_model
        if spec not in self._judges:
            model = judge_model(spec)
            self._judges[spec] = JudgeScorer(model, self._judge_cache(model))
        return self._budgeted(lambda: self._judges[spec](list(answers)), len(answers))

    def finish(self) -> dict:
        """Record a finished session's budget (not reached, replacing an earlier stop); return the usage."""
        if self.config.budget is not None or "checks.budget" in self.store.settings():
            self.store.save_settings({"checks.budget": {"budget": self.config.budget, "reached": False,
                                                        "incomplete_cells": [], "texts_done": None,
                                                        "texts_total": None}})
        return self.usage()

    def usage(self) -> dict:
        """summary.json's `usage` for this folder: every session summed (the judge's apart)."""
        return summary_section(self.store.stats(), self.store.settings())

    @property
    def calls(self) -> int:
        return self.cache.calls


def _ask_again(store: RunStore, config: RunConfig) -> frozenset[int]:
    """The stored texts this run asks again, their answers having been model errors (said in the console); none
    with --adaptive, whose plan has counted their answered mutants already."""
    again = store.again_text_ids()
    if config.adaptive:
        return frozenset()
    if again:
        log.warning("asking the model again about %d texts whose answers were model errors (try %d of %d; answers "
                    "already stored are not asked again)", len(again), max(again.values()), MAX_TRIES)
    return frozenset(again)


def usage_meter(config: RunConfig, model, store: RunStore | None, report=None, since_load: bool = True,
                account: str | None = None):
    """The meter of the run's cache (hinter.usage): what the model spends, capped by --budget; `account`: another
    model of the run (the judge), counted apart."""
    return Meter(model, store, parse_budget(config.budget), Prices(config.price_in, config.price_out), report=report,
                 since_load=since_load, account=account)


def estimate_campaign(config: RunConfig, texts: Sequence[str | TextRecord], *, dictionary: Dictionary | None = None,
                      suite=None, out: str | Path | None = None, exact: bool = True, task=None,
                      executor: Executor | None = None, parser: Parser | None = None, prices=None,
                      progress: Callable[[str, int, int], None] | None = None):
    """hinter.pipeline.estimate.Estimate of the campaign's texts not yet stored in `out`, asking no model: mutation and
    (`exact`) validity run as the run will run them; a suite's verdicts are read."""
    done: set[int] = set()
    if out is not None and lost_run(out):
        raise empty_run_error(Path(out) / "run.sqlite")
    if out is not None and (Path(out) / "run.sqlite").is_file():
        store = RunStore(Path(out) / "run.sqlite")
        try:
            done = store.done_text_ids()
        finally:
            store.close()
    if suite is not None:
        return estimate(config, suite.records, suite=suite, done=done, task=task, prices=prices)
    records, d = prepare(config, texts, dictionary)
    if not exact:
        return estimate(config, records, dictionary=d, done=done, exact=False, task=task, prices=prices)
    with _validity_only(executor, parser, progress or (lambda stage, done, total: None),
                        get_language(config.language).spacy_model, records) as executor:
        return estimate(config, records, dictionary=d, done=done, task=task, prices=prices,
                        validate=executor.validate)


def adaptive_plan(config: RunConfig, store: RunStore, model, d: Dictionary | None, suite):
    """--adaptive: the run's plan (hinter.analysis.adaptive), its settings recorded on the first session and its state
    rebuilt from the stored answers on the next ones; None without --adaptive."""
    if not config.adaptive:
        return None
    task = task_of(config)
    refused = adaptive_refusal(task)
    if refused:
        raise InputError(f"--adaptive with the {refused} task "
                         f"{task.name}: adaptive testing follows one label's share", where="--adaptive",
                         fix="Leave out --adaptive for this task (a full campaign tests it).")
    labels = list(task.labels) if task is not None else list(getattr(model, "labels", None) or [])
    if not labels:
        raise InputError("--adaptive needs the label of interest, and this model names no labels", where="--adaptive",
                         fix="Give a --task with labels (its first is the label of interest).")
    if suite is not None:
        pair_ids = {r.pair_id for ms in suite.mutants.values() for m in ms
                    for r in dictionary_replacements(m.replacements)}
    else:
        pair_ids = {p.id for p in d.pairs}
    # occupational pairs' cells apart, as the findings keep them (read as the measures read them)
    occupational = occupational_ids(store.settings().get("dictionary"))
    settings = {"label": labels[0], "alpha": ALPHA, "min_effect": config.min_effect,
                "cells_bound": cells_bound(pair_ids, config.order, occupational), "batch_texts": config.batch_texts,
                "seed": config.seed}
    recorded = store.settings().get("adaptive_plan")
    if recorded is None:
        store.save_settings({"adaptive_plan": settings})
    elif recorded["batch_texts"] != config.batch_texts:
        raise InputError(f"this adaptive run asks in rounds of {recorded['batch_texts']} texts, not "
                         f"{config.batch_texts}", where="--batch-texts",
                         fix=f"Continue it with --batch-texts {recorded['batch_texts']}: its rounds decide which "
                             "mutants were asked.")
    else:
        settings = recorded
    return plan_of(settings, store.tested_rows(), occupational)


def _check_generative(config: RunConfig) -> dict:
    """A generative task's settings as the run records them ({} for labels): its samples are how many times each
    text is asked, so --repeats, which would ask each sample again, is refused rather than silently multiplied."""
    task = task_of(config)
    if not is_generative(task):
        return {}
    if config.repeats > 1:
        raise InputError(f"--repeats {config.repeats} with the generative task {task.name}: a generative task asks "
                         "each text as many times as its `samples`", where="--repeats",
                         fix="Leave --repeats out and set `samples:` in the task file (4 or more at temperature > 0).")
    judge = {}
    if "judge" in task.aspects:  # the judge model and its rubric: a changed judge is not mixed with old verdicts
        judge = judge_settings(task.judge)
    return {"generative": {"task": task.name, **task.settings(), "samples": task.samples,
                           "aspects": list(task.aspects)}, **judge}


def _run_checks(store: RunStore, model, records: list[TextRecord], config: RunConfig, d: Dictionary | None,
                suite, meter=None) -> None:
    """Once per run, kept with it: whether the model answers a text the same way twice, and which of its
    dictionary's pairs are evaluative."""
    several = answers_per_text(config) > 1
    noise = noise_of(task_of(config))
    if "checks.determinism" not in store.settings() and several and not noise.probe_when_several:
        # its samples are asked anyway, and their spread is the oracle's null: 8 more generations would add nothing
        store.save_settings({"checks.determinism": {"deterministic": None, "detail": "not asked: the generative "
                             "task's samples measure the model's own variation on every text"}})
    elif "checks.determinism" not in store.settings() and config.determinism_probes == 0:
        store.save_settings({"checks.determinism": {"deterministic": None, "probes": 0, "detail": NOT_CHECKED}})
    elif "checks.determinism" not in store.settings():
        probe = min((r.text for r in records[:config.batch_texts]), key=len)  # the cheapest to ask
        result, answer = check_determinism(model, probe, _probe_answers(store, model),
                                           _keep_probe_answers(store, model), meter, config.determinism_probes)
        store.save_settings({"checks.determinism": result})
        store.forget_settings([PROBE_ANSWERS])
        if result["deterministic"]:  # the run reuses the answer: the text is not asked again
            store.save_outcomes(model.fingerprint, [(text_key(probe), answer)])
    if "checks.evaluative" not in store.settings():
        # the run's evaluative pairs (lint.evaluative_check), kept with it: summary and report mark the
        # mutants that use one, the same way after a resume whatever the lexicon's version then
        store.save_settings({"checks.evaluative": evaluative_check(d.pairs) if suite is None else suite.evaluative})
    determinism = store.settings()["checks.determinism"]
    if determinism.get("deterministic") is False and not several:
        log.warning(noise.warning, determinism["detail"])
    elif determinism.get("deterministic") and not several and noise.reassurance:
        probes = determinism.get("probes", DETERMINISM_PROBES)
        log.info(noise.reassurance, probes, 100 * chance_to_catch(probes))
    elif determinism.get("probes") == 0 and not several:
        log.warning("the model's own noise was not checked (--determinism-probes 0): a flip may be its noise")


class StoreSink:
    """The run store: each batch's texts, mutants and counters committed together."""

    def __init__(self, store: RunStore):
        self.store = store

    def __call__(self, result: BatchResult) -> None:
        self.store.save_batch(result.texts, result.mutants, result.stats)
