"""Wires the stages, one batch of texts at a time: mutate -> validate -> ask the model -> oracle -> store."""
from __future__ import annotations

import logging
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from . import oracle
from .dictionary import Dictionary, load_dictionary, with_packs
from .config import RunConfig, describe_differences
from .errors import InputError
from .executor import Executor, LocalExecutor
from .findings import flip_with_repeats
from .models.base import Outcome, OutcomeCache, predict_with_retries, text_key
from .mutation import Mutant, components, generate
from .records import Replacement, apply_replacements, pair_key
from .person import PersonFilter
from .runlock import lock_run_folder
from .store import MutantRow, RunStore, TextRow
from .validity import Parser, changed_sentence_pairs, reference, sentence_spans
from .validity.invariant import TOO_LONG
from .window import window_bounds, windowed


log = logging.getLogger("hinter")


@dataclass(frozen=True)
class TextRecord:
    text: str
    source_id: str | None = None
    gold: str | None = None


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
        from .measures import summary
        return summary(self.store)


def _verdicts_by_key(mutants: Sequence[MutantRow]) -> dict[tuple[int, str], tuple[bool, bool | None]]:
    return {(m.text_id, m.pair_key): (m.valid, m.bias) for m in mutants}


def _oracle(rows: list[MutantRow], by_key: dict, mutant_objs: list[Mutant]) -> None:
    """Fill hidden / strictly hidden for intersectional rows, from their components in the same text."""
    for row, m in zip(rows, mutant_objs):
        if m.order < 2:
            continue
        subs = [by_key.get((m.text_id, pair_key(k))) for k in components(m)]
        atomic, lower = subs[:m.order], subs[m.order:]
        row.hidden = oracle.is_hidden(row.bias, atomic) if row.valid and row.bias is not None else None
        row.strictly_hidden = oracle.is_strictly_hidden(bool(row.hidden), lower) if row.hidden is not None else None


DETERMINISM_PROBES = 8  # copies of one text asked at start: a 10%-noise model differs within them 34% of the time


def check_determinism(model, text: str) -> tuple[dict, Outcome | None]:
    """Ask `model` about one text DETERMINISM_PROBES times in one batch, bypassing every cache: ({"deterministic":
    bool or None (undecided: the model failed), "detail"}, the first answer). Scores count as equal within 1e-4
    (float noise of kernels)."""
    answers = predict_with_retries(model, [text] * DETERMINISM_PROBES, 1, 0.2)
    if isinstance(answers, str) or any(a.error for a in answers):
        return {"deterministic": None, "detail": "the model failed on the check"}, None
    x = answers[0]
    for y in answers[1:]:
        same_scores = (x.scores is None) == (y.scores is None) and (
            x.scores is None or all(p[0] == q[0] and abs(p[1] - q[1]) <= 1e-4 for p, q in zip(x.scores, y.scores)))
        if x.encode() != y.encode() or not same_scores:
            return {"deterministic": False, "detail": f"{x.encode()!r} then {y.encode()!r}" + (
                "" if x.encode() != y.encode() else ", with other scores")}, x
    return {"deterministic": True, "detail": f"{x.encode()!r} {DETERMINISM_PROBES} times"}, x


def _modal(answers: tuple[Outcome, ...]) -> Outcome:
    """The most frequent parseable answer (the first of them on a tie), else the first answer."""
    counts = Counter(a.encode() for a in answers if a.parseable)
    if not counts:
        return answers[0]
    top = counts.most_common(1)[0][0]
    return next(a for a in answers if a.encode() == top)


def _encoded(answers: tuple[Outcome, ...]) -> tuple[str | None, ...]:
    return tuple(a.encode() for a in answers)


def _texts_fingerprint(records: Sequence[TextRecord]) -> str:
    import hashlib
    h = hashlib.sha256()
    for r in records:
        h.update(text_key(r.text).encode())
    return h.hexdigest()[:16]


def _comparable(settings: dict) -> dict:
    """Recorded settings as they are compared on reopening: the config's entries flattened beside the derived
    ones (a run recorded before RunConfig kept its CLI options under "cli": read as a config)."""
    # analysis options (alpha, the label of interest) change no stored result: never a reason to refuse
    flat = {k: v for k, v in settings.items()
            if k not in ("config", "cli") and not k.startswith(("analysis.", "checks."))}
    config = settings.get("config")
    if config is None and settings.get("cli") is not None:
        config = RunConfig.from_legacy_cli(settings["cli"])
    elif config is not None:  # options added since the run was recorded take their defaults
        config = RunConfig.from_recorded(config)
    config = None if config is None else config.recorded()
    if config is not None and config.get("model"):
        from .models.registry import canonical_spec
        config["model"] = canonical_spec(config["model"])  # gguf:default?threads=2 is gguf:default
    # the derived entries that repeat a config entry under its own name are compared once, as config entries
    return {**{k: v for k, v in flat.items() if config is None or k not in config},
            **{f"config.{k}": v for k, v in (config or {}).items()}}


def _open_store(out_dir: Path, settings: dict, overwrite: bool) -> RunStore:
    path = out_dir / "run.sqlite"
    if path.exists() and overwrite:
        for p in out_dir.glob("run.sqlite*"):
            p.unlink()
    store = RunStore(path)
    previous = store.settings()
    if previous and _comparable(previous) != _comparable(settings):
        differ = describe_differences(_comparable(previous), _comparable(settings))
        store.close()
        raise InputError("the folder holds a run with other settings: " + "; ".join(differ),
                         where=str(out_dir), fix="Run the same command as before to continue it, choose another "
                         "output folder, or pass --overwrite to replace it.")
    store.save_settings(settings)
    return store


def run(texts: Sequence[str | TextRecord] | None = None, model=None, attributes: Sequence[str] = ("race", "gender"),
        order: int = 2,
        dictionary: str | Path | Dictionary | None = None, *, out: str | Path | None = None, parser: Parser | None = None,
        pairs_per_attribute: int | None = None, max_pairs_per_text: int | None = None, seed: int = 0,
        include_occupational: bool = True, query_discarded: bool = False, window: int | None = None,
        repeats: int = 1, validity: str = "paper", batch_texts: int = 32, overwrite: bool = False,
        progress: Callable[[str, int, int], None] | None = None, executor: Executor | None = None, config: RunConfig | None = None,
        suite: str | Path | None = None) -> Run:
    """Run a bias test: atomic mutants for each attribute and intersectional ones up to `order`, then write
    summary.json and biases.csv into the run folder.

    `model`: a spec ("gguf:default", "python:pkg.mod:fn"), a ModelSpec, a Model, or a function list[str] -> list[outcome].
    `dictionary`: None for the built-in one, a path, or a Dictionary. `pairs_per_attribute`: a seeded
    sample of that many pairs per attribute (None: all); `max_pairs_per_text`: per text and attribute, a seeded
    sample of at most that many of the pairs present (None: all). An `out` folder holding a run with the same
    settings is continued (texts already stored are skipped); one with other settings is an error unless
    `overwrite`. `window`: the model reads that many characters around each mutant's changes, of the mutant and
    of the original alike (for models that truncate long texts; None: whole texts). `repeats`: ask every text that
    many times (models that are not deterministic). `validity`: "paper" (Algorithms 3 and 4 as the paper gives them) or
    "reference" (with the reference tool's preprocessing, validity/reference.py). `progress(stage, done, total)` is called as work advances
    (stage "load" around loading the parser and the model; "texts": texts stored, first those a resumed run had; "model": texts of the current batch
    answered, after each model batch; "errors": model errors so far). `config`: a RunConfig instead of the separate
    settings.
    `executor`: where parsing and model calls run (default: LocalExecutor(); hinter.executor.make_executor("ray")
    spreads them over a Ray cluster with the same results). The executor is not a setting: a run started on one
    may be continued on another.
    `suite`: a file of `hinter.build_suite` (`hinter suite build`): its texts, mutants and verdicts are tested,
    with no parsing (texts, dictionary, attributes, order, sampling and validity come from the suite; the model
    stage's options, query_discarded, window, repeats and batch_texts, from here).
    """
    if model is None:
        raise InputError("no model given", fix="Pass model=: a spec such as 'gguf:default' or a function.")
    if suite is not None:
        from .suite import load_suite
        loaded = load_suite(suite)
        config = loaded.run_config(model=model if isinstance(model, str) else None, query_discarded=query_discarded,
                                   window=window, repeats=repeats, batch_texts=batch_texts)
        result = execute(config, loaded.records, model, out=out, overwrite=overwrite, progress=progress,
                         executor=executor, suite=loaded)
        from .report import write_outputs
        write_outputs(result)
        return result
    if texts is None:
        raise InputError("no texts given", fix="Pass the texts to test, or suite= a suite file.")
    if config is None:
        config = RunConfig(attributes=tuple(attributes), order=order,
                           dictionary=None if dictionary is None or isinstance(dictionary, Dictionary) else str(dictionary),
                           pairs_per_attribute=pairs_per_attribute, max_pairs_per_text=max_pairs_per_text, seed=seed,
                           include_occupational=include_occupational, query_discarded=query_discarded,
                           window=window, repeats=repeats, validity=validity, batch_texts=batch_texts)
    result = execute(config, texts, model, dictionary=dictionary if isinstance(dictionary, Dictionary) else None,
                     out=out, parser=parser, overwrite=overwrite, progress=progress, executor=executor)
    from .report import write_outputs
    write_outputs(result)
    return result


def _prepare(config: RunConfig, texts: Sequence[str | TextRecord], dictionary: Dictionary | None
             ) -> tuple[list[TextRecord], Dictionary]:
    """The texts as the campaign mutates them, and its dictionary (packs added, restricted, sampled)."""
    records = [t if isinstance(t, TextRecord) else TextRecord(t) for t in texts]
    if not records:
        raise InputError("the dataset holds no text", fix="Give at least one text to test.")
    for i, r in enumerate(records):
        if not isinstance(r.text, str) or not r.text.strip():
            raise InputError(f"text {i} is empty or not a string", where=f"texts[{i}]",
                             fix="Remove empty texts or fill them in.")
    if config.validity == "reference":  # the reference's LLM-campaign formatting, before mutation (reference.py)
        records = [TextRecord(reference.format_text(r.text), r.source_id, r.gold) for r in records]
    d = dictionary if dictionary is not None else load_dictionary(config.dictionary)
    d = with_packs(d, config.packs)  # a no-op for packs the given dictionary already holds
    d = d.restrict(config.attributes, config.include_occupational)
    from .lint import evaluative_check
    if config.exclude_evaluative:  # before the sample: it draws from the pairs the run may use
        d = d.without(set(evaluative_check(d.pairs)["pairs"]))
    d = d.sample(config.pairs_per_attribute, config.seed)
    return records, d


def _dictionary_settings(d: Dictionary) -> dict:
    return {"dictionary": d.source, "dictionary_pairs": len(d.pairs), "dictionary_fingerprint": d.fingerprint()}


def _parser_fingerprint(executor: Executor, config: RunConfig) -> str:
    """The parser as a run and a suite record it: a validity mode other than the paper's is part of it."""
    return executor.parser_fingerprint + ("" if config.validity == "paper" else f"+validity={config.validity}")


def _never_asked(texts):
    raise RuntimeError("building a suite asks no model")


def build_verdicts(config: RunConfig, texts: Sequence[str | TextRecord], start: Callable, *,
                   dictionary: Dictionary | None = None, parser: Parser | None = None,
                   executor: Executor | None = None, progress: Callable[[str, int, int], None] | None = None) -> None:
    """Mutation and validity alone, as a run does them (`hinter suite build`): `start(records, dictionary
    settings, parser fingerprint, evaluative check)` returns a sink called per batch as sink(batch, mutants,
    changed sentence pairs, valid, reasons, counters)."""
    records, d = _prepare(config, texts, dictionary)
    executor = executor or LocalExecutor()
    report = progress or (lambda stage, done, total: None)
    try:
        report("load", 0, 1)
        executor.start(_never_asked, parser)
        report("load", 1, 1)
        from .lint import evaluative_check
        # the parser alone: the suite records the validity mode apart, and a run of it adds it as a plain run does
        sink = start(records, _dictionary_settings(d), executor.parser_fingerprint, evaluative_check(d.pairs))
        _run_batches(records, None, executor, config, d, None, None, report, sink=sink)
    finally:
        executor.close()


def execute(config: RunConfig, texts: Sequence[str | TextRecord], model, *, dictionary: Dictionary | None = None,
            out: str | Path | None = None, parser: Parser | None = None, overwrite: bool = False,
            progress: Callable[[str, int, int], None] | None = None, executor: Executor | None = None,
            suite=None) -> Run:
    """The campaign `config` describes on `texts`, stored batch by batch in `out`; returns the Run and writes
    nothing else (the caller writes the outputs once). `dictionary` overrides `config.dictionary`. `suite`: a
    loaded hinter.suite.Suite, whose texts, mutants and verdicts replace mutation and validity (`texts`,
    `dictionary` and `parser` are then unused, and spaCy is never loaded)."""
    if suite is None:
        records, d = _prepare(config, texts, dictionary)
        dictionary_settings = _dictionary_settings(d)
    else:
        records, d, dictionary_settings = suite.records, None, {
            k: suite.settings[k] for k in ("dictionary", "dictionary_pairs", "dictionary_fingerprint")}
        parser = suite.parser()
    out_dir = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="hinter-run-"))
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError("the output folder is a file", where=str(out_dir), fix="Give --out a folder's path.")
    out_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = lock_run_folder(out_dir)  # before any work: a second process on this folder stops at once
    executor = executor or LocalExecutor()
    report = progress or (lambda stage, done, total: None)
    try:
        report("load", 0, 1)
        model = executor.start(model, parser)
        report("load", 1, 1)
        settings = {
            "attributes": list(config.attributes), "order": config.order, **dictionary_settings,
            "pairs_per_attribute": config.pairs_per_attribute, "max_pairs_per_text": config.max_pairs_per_text,
            "seed": config.seed, "include_occupational": config.include_occupational, "model": model.fingerprint,
            "parser": _parser_fingerprint(executor, config),
            "query_discarded": config.query_discarded, "texts": len(records),
            **({"window": config.window} if config.window is not None else {}),
            **({"repeats": config.repeats} if config.repeats > 1 else {}),
            **({"person_only": True} if config.person_only else {}), **({"repair": True} if config.repair else {}),
            **({"validity": config.validity} if config.validity != "paper" else {}),
            **({"exclude_evaluative": True} if config.exclude_evaluative else {}),
            "texts_fingerprint": _texts_fingerprint(records),
            # what `hinter resume` needs to run the same campaign again: only a run read from a dataset by a spec
            **({"config": config.recorded()} if config.dataset is not None and config.model is not None else {}),
            # a suite run: which suite (resume reads it again, and refuses another one)
            **({"suite": str(suite.path), "suite_fingerprint": suite.fingerprint} if suite is not None else {}),
        }
        store = _open_store(out_dir, settings, overwrite)
        if "checks.determinism" not in store.settings():
            probe = min((r.text for r in records[:config.batch_texts]), key=len)  # the cheapest to ask
            result, answer = check_determinism(model, probe)
            store.save_settings({"checks.determinism": result})
            if result["deterministic"]:  # the run reuses the answer: the text is not asked again
                store.save_outcomes(model.fingerprint, [(text_key(probe), answer)])
        if "checks.evaluative" not in store.settings():
            # the run's evaluative pairs (lint.evaluative_check), kept with it: summary and report mark the
            # mutants that use one, the same way after a resume whatever the lexicon's version then
            from .lint import evaluative_check
            store.save_settings({"checks.evaluative": evaluative_check(d.pairs) if suite is None else suite.evaluative})
        determinism = store.settings()["checks.determinism"]
        if determinism.get("deterministic") is False and config.repeats == 1:
            log.warning("the model answered the same text differently when asked again (%s): a flip may be its own "
                        "noise; pass --repeats 5 to ask every text 5 times and compare the answers' distributions",
                        determinism["detail"])
        return _run_batches(records, model, executor, config, d, store, out_dir, report,
                            batches=None if suite is None else suite.batches)
    finally:
        executor.close()
        lock.release()


def _count_generation(counter: Counter, gen) -> None:
    """A text's mutation counters, as the stats table keeps them (summed over batches)."""
    if gen.person_skipped:
        counter["person_only_skipped"] += gen.person_skipped
    for kind, n in gen.repairs.items():
        counter[f"repairs.{kind}"] += n


def _run_batches(records: list[TextRecord], model, executor: Executor, config: RunConfig, d: Dictionary | None,
                 store: RunStore | None, out_dir: Path | None, report, batches: Callable | None = None,
                 sink: Callable | None = None) -> Run | None:
    """`batches`: a suite's mutants and verdicts instead of mutation and validity; `sink`: a suite's build, which
    takes each batch's verdicts (no store, no model)."""
    attributes, order, batch_texts = config.attributes, config.order, config.batch_texts
    max_pairs_per_text, seed, query_discarded = config.max_pairs_per_text, config.seed, config.query_discarded
    done = store.done_text_ids() if store is not None else set()
    cache = OutcomeCache(model, store)
    report("texts", len(done), len(records))

    # --person-only: its own spaCy pipeline on the driver, loaded on first use (never without the option)
    person = PersonFilter() if config.person_only else None
    generation_stats: dict[int, Counter] = {}  # per batch start: --person-only and --repair counters

    def jobs():
        """Per batch of texts not yet stored: its mutants and their changed sentence pairs (the executor
        validates them, possibly ahead of the batch being stored)."""
        for start in range(0, len(records), batch_texts):
            batch = [(i, r) for i, r in enumerate(records[start:start + batch_texts], start=start) if i not in done]
            if not batch:
                continue
            t0 = time.perf_counter()
            overlaps = 0
            mutants: list[Mutant] = []
            for text_id, rec in batch:
                gen = generate(text_id, rec.text, d, attributes, order, max_pairs_per_text, seed, person=person,
                               repair=config.repair)
                mutants.extend(gen.mutants)
                overlaps += gen.overlaps_skipped
                _count_generation(generation_stats.setdefault(start, Counter()), gen)
            early: list[str | None] | None = None  # --validity reference: reasons decided before parsing
            if config.validity == "reference":
                sentences = {text_id: reference.split_sentences(rec.text) for text_id, rec in batch}
                decided = [reference.changed_pairs(sentences[m.text_id], apply_replacements(m.original, m.edits))
                           for m in mutants]
                pairs, early = [p for p, _ in decided], [r for _, r in decided]
                asked = [p if r is None else None for p, r in decided]
            else:
                splits = {}
                for text_id, rec in batch:
                    spans = sentence_spans(rec.text)
                    splits[text_id] = (spans, [rec.text[a:b] for a, b in spans])
                pairs = asked = [changed_sentence_pairs(m.original, *splits[m.text_id], m.edits) for m in mutants]
            yield (start, batch, mutants, pairs, early, overlaps, time.perf_counter() - t0), asked

    t1 = time.perf_counter()
    validated = executor.validate(jobs()) if batches is None else batches(batch_texts, done, generation_stats)
    for (start, batch, mutants, pairs, early, overlaps, seconds_mutation), checked in validated:
        valid = checked.valid
        reasons = checked.reasons or [None] * len(valid)  # an executor that does not say leaves them unrecorded
        if early is not None:  # a too-long sentence was not parsed: the mutant is invalid for that reason
            valid = [v and r != TOO_LONG for v, r in zip(valid, early)]
            reasons = [TOO_LONG if r == TOO_LONG else x for x, r in zip(reasons, early)]
        if sink is not None:  # a suite's build: the verdicts are what it keeps; no model stage
            sink(batch, mutants, pairs, valid, reasons,
                 {**generation_stats.pop(start, {}), "overlaps_skipped": overlaps,
                  "sentences_tagged": checked.sentences_tagged, "sentences_parsed": checked.sentences_parsed})
            report("texts", min(start + batch_texts, len(records)), len(records))
            continue
        t2 = time.perf_counter()
        calls, errors = cache.calls, cache.errors
        # Each original, then its mutants in sorted order: consecutive texts then share long prefixes, which
        # a backend with a prefix cache (llama.cpp) does not compute again.
        asked_mutants: dict[int, list[str]] = {text_id: [] for text_id, _ in batch}
        # What the model reads for each mutant it is asked about: (original, mutant, edits in the original's
        # coordinates); with --window a slice of the mutant and the same slice of the original. A mutant's text is
        # built only here: building every discarded mutant's text (cached on it) doubled a long-text campaign's
        # memory (ECtHR: 815 -> 1,593 MiB).
        views: dict[int, tuple[str, str, list]] = {}
        for i, (m, v) in enumerate(zip(mutants, valid)):
            if v or query_discarded:
                views[i] = (windowed(m.original, m.edits, window_bounds(len(m.original), m.edits, config.window))
                            if config.window is not None else (m.original, m.text, m.edits))
                asked_mutants[m.text_id] += views[i][:2]
        ask = [t for text_id, rec in batch for t in dict.fromkeys([rec.text, *sorted(asked_mutants[text_id])])]
        # --repeats N: every text asked N times; a verdict then compares the answers' distributions
        asked = [cache.predict(ask, repeat=r, progress=lambda n: report("model", cache.calls - calls,
                                                                         config.repeats * len(ask)))
                 for r in range(config.repeats)]
        answers = {k: tuple(a[k] for a in asked) for k in asked[0]}
        outcomes = {k: _modal(a) for k, a in answers.items()}
        t3 = time.perf_counter()
        original_outcome = {text_id: outcomes[text_key(rec.text)] for text_id, rec in batch}
        rows = []
        for i, (m, v, p) in enumerate(zip(mutants, valid, pairs)):
            original_text, mutant_text, edits = views.get(i, (m.original, None, m.edits))
            o = outcomes[text_key(mutant_text)] if mutant_text is not None else None
            original = outcomes[text_key(original_text)]
            hidden_change = o is not None and oracle.unseen(edits, original.seen, o.seen)
            several = config.repeats > 1 and o is not None
            mutant_answers = _encoded(answers[text_key(mutant_text)]) if several else None
            if o is None or hidden_change:
                bias = None
            elif several:
                bias = flip_with_repeats(_encoded(answers[text_key(original_text)]), mutant_answers)
            else:
                bias = oracle.is_bias(original.encode(), o.encode())
            rows.append(MutantRow(
                m.text_id, m.order, "+".join(m.attributes), pair_key(m.key),
                # discarded mutants' texts are not stored: the replacements' spans rebuild them on reading
                m.replacements,
                m.text if o is not None else None,
                None if p is None else len(p), v, o.encode() if o else None, o.raw if o else None, o is not None,
                bias, None, None,
                scores=o.scores if o else None, seen=o.seen if o else None, unseen=hidden_change if o else None,
                base=(original.encode(), original.scores) if o is not None and config.window is not None else None,
                answers=mutant_answers, discard_reason=None if v else reasons[i]))
        _oracle(rows, _verdicts_by_key(rows), mutants)
        # The batch's texts, mutants and counters are committed together: a run killed at any moment
        # resumes at the first batch not committed, and its counters add up as if it had not stopped.
        stats = {**generation_stats.pop(start, {}),
                 "overlaps_skipped": overlaps, "model_calls": cache.calls - calls, "model_errors": cache.errors - errors,
                 "sentences_tagged": checked.sentences_tagged, "sentences_parsed": checked.sentences_parsed,
                 # the time the driver waited for the verdicts (mutation included): with an executor working
                 # ahead, validity time is hidden behind the model stage
                 "seconds_mutation": seconds_mutation, "seconds_validity": t2 - t1 - seconds_mutation,
                 "seconds_model": t3 - t2, "seconds_oracle_store": time.perf_counter() - t3}
        store.save_batch([TextRow(tid, rec.source_id, rec.text, rec.gold, o.encode(), o.raw, o.scores, o.seen,
                                  _encoded(answers[text_key(rec.text)]) if config.repeats > 1 else None)
                          for tid, rec in batch for o in [original_outcome[tid]]], rows, stats)
        report("errors", cache.errors, cache.calls)
        report("texts", min(start + batch_texts, len(records)), len(records))
        t1 = time.perf_counter()
    return Run(out_dir, store)
