"""The per-text pipeline, one implementation for every path: mutate -> validate -> ask -> judge -> store.

A plain run, a suite build, a suite run and `hinter serve`'s try-a-sentence are the same stages over the same
typed batch record (`TextBatch`), with another source of verdicts (parsed now, or recorded in a suite) or another
sink (the run store, a suite file, a reply). The judge is an object chosen by the run's settings (`judge_for`).
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Protocol, Sequence

from hinter.analysis import oracle
from hinter.analysis.adaptive import Answered, tested_of
from hinter.config import RunConfig
from hinter.mutation.dictionary import Dictionary, load_dictionary, with_packs
from hinter.errors import InputError
from hinter.languages import get_language
from hinter.executor.base import with_grammar_check
from hinter.pipeline.gcpause import per_batch
from hinter.generative.judge import judge_of
from hinter.mutation.lint import evaluative_check
from hinter.models.base import Outcome, OutcomeCache
from hinter.mutation.mutants import SELF_COMPARISON as SELF_COMPARISON_WHY, Mutant, components, generate
from hinter.mutation.person import PersonFilter
from hinter.records import Replacement, TextRecord, apply_replacements, pair_key, text_key
from hinter.store.rows import AspectRecord, MutantRow, TextRow
from hinter.models.tasks import answers_per_text as answers_of_task
from hinter.models.tasks import get_task, is_generative
from hinter.validity import changed_sentence_pairs, reference, sentence_spans
from hinter.validity.invariant import INFLECTION, SELF_COMPARISON
from hinter.models.window import window_bounds, windowed

Progress = Callable[[str, int, int], None]


# ---------------------------------------------------------------- the records that flow between the stages

@dataclass
class TextBatch:
    """A batch of texts and their mutants, as mutation (or a suite) gives them."""

    start: int                               # the first text's id of the batch (its unit of commit)
    texts: list[tuple[int, TextRecord]]      # (text_id, record) of the texts not yet stored
    mutants: list[Mutant]
    changed: list[int | None]                # per mutant: changed sentences (None: the sentence count changed)
    early: list[str | None] | None = None    # reasons decided before parsing (--validity reference: too_long)
    counters: Counter = field(default_factory=Counter)  # mutation's: overlaps, person-only skips, repairs
    seconds_mutation: float = 0.0


@dataclass
class Verdicts:
    """The validity stage's answer for one batch."""

    valid: list[bool]
    reasons: list[str | None]                # why each mutant was discarded (None: valid, or not recorded)
    sentences_tagged: int = 0
    sentences_parsed: int = 0


@dataclass
class Asked:
    """The model stage's answers for one batch."""

    answers: dict[str, tuple[Outcome, ...]]  # by text_key: every answer (one per repeat)
    views: dict[int, tuple[str, str, list]]  # per asked mutant: (original, mutant, edits) as the model read them
    keys: dict[str, str]                     # each text asked: its text_key (hashed once, not once per mutant)
    modal: dict[str, Outcome]                # by text_key: the most frequent answer (_modal)
    calls: int = 0
    errors: int = 0


@dataclass
class BatchResult:
    """What a sink receives: the batch, its verdicts, and (with a model) its stored rows and counters."""

    batch: TextBatch
    verdicts: Verdicts
    texts: list[TextRow] | None
    mutants: list[MutantRow] | None
    stats: dict


# ---------------------------------------------------------------- the campaign's texts and dictionary

def campaign_texts(config: RunConfig, texts: Sequence[str | TextRecord]) -> list[TextRecord]:
    """The texts as the campaign mutates them (--validity reference: the reference tool's formatting first)."""
    records = [t if isinstance(t, TextRecord) else TextRecord(t) for t in texts]
    if not records:
        raise InputError("the dataset holds no text", fix="Give at least one text to test.")
    for i, r in enumerate(records):
        if not isinstance(r.text, str) or not r.text.strip():
            raise InputError(f"text {i} is empty or not a string", where=f"texts[{i}]",
                             fix="Remove empty texts or fill them in.")
    if config.validity == "reference":  # the reference's LLM-campaign formatting, before mutation (reference.py)
        records = [TextRecord(reference.format_text(r.text), r.source_id, r.gold) for r in records]
    return records


def campaign_dictionary(config: RunConfig, dictionary: Dictionary | None = None) -> Dictionary:
    """The campaign's pairs: `dictionary` (default: config.dictionary's), packs added, restricted to the
    attributes, evaluative pairs left out with --exclude-evaluative, sampled."""
    d = dictionary if dictionary is not None else load_dictionary(config.dictionary, language=config.language)
    d = with_packs(d, config.packs)  # a no-op for packs the given dictionary already holds
    d = d.restrict(config.attributes, config.include_occupational)
    if config.exclude_evaluative:  # before the sample: it draws from the pairs the run may use
        d = d.without(set(evaluative_check(d.pairs)["pairs"]))
    return d.sample(config.pairs_per_attribute, config.seed)


# ---------------------------------------------------------------- mutate

class Mutate:
    """Stage 1: each text's atomic and intersectional mutants, and the sentence pairs validity compares."""

    def __init__(self, config: RunConfig, dictionary: Dictionary):
        self.config, self.dictionary = config, dictionary
        # a word replaced only where it refers to a person (the default; --any-occurrence: every one), for a
        # language the filter reads; it reads the parse the language's rules made (one parse per sentence)
        if config.person_only and get_language(config.language).person_filter:
            self.person = PersonFilter()
        else:
            self.person = None

    def batch(self, start: int, texts: list[tuple[int, TextRecord]]) -> tuple[TextBatch, list]:
        """The batch's mutants, and per mutant the changed sentence pairs the validity stage must check (None:
        nothing to check, the verdict is already known)."""
        c = self.config
        t0 = time.perf_counter()
        counters: Counter = Counter()
        mutants: list[Mutant] = []
        uninflected: dict[int, str] = {}  # mutant index -> why its agreement could not be carried (--language fr)
        for text_id, rec in texts:
            gen = generate(text_id, rec.text, self.dictionary, c.attributes, c.order, c.max_pairs_per_text, c.seed,
                           person=self.person, repair=c.repair, language=c.language)
            uninflected.update({len(mutants) + i: why for i, why in gen.uninflected.items()})
            mutants.extend(gen.mutants)
            counters["overlaps_skipped"] += gen.overlaps_skipped
            if gen.person_skipped:
                counters["person_only_skipped"] += gen.person_skipped
            for kind, n in gen.repairs.items():
                counters[f"repairs.{kind}"] += n
        early: list[str | None] | None = None
        if c.validity == "reference":  # the reference's splitter; a too-long sentence is decided before parsing
            sentences = {text_id: reference.split_sentences(rec.text) for text_id, rec in texts}
            decided = [reference.changed_pairs(sentences[m.text_id], apply_replacements(m.original, m.edits))
                       for m in mutants]
            pairs, early = [p for p, _ in decided], [r for _, r in decided]
            asked = [p if r is None else None for p, r in decided]
        else:
            splits = {}
            for text_id, rec in texts:
                spans = sentence_spans(rec.text)
                splits[text_id] = (spans, [rec.text[a:b] for a, b in spans])
            pairs = asked = [changed_sentence_pairs(m.original, *splits[m.text_id], m.edits) for m in mutants]
            if uninflected:  # decided before parsing: not asked of the parser; the reason's start says which rule
                early = [None if i not in uninflected else SELF_COMPARISON
                         if uninflected[i].startswith(SELF_COMPARISON_WHY) else INFLECTION for i in range(len(mutants))]
                asked = [None if i in uninflected else p for i, p in enumerate(pairs)]
        batch = TextBatch(start, texts, mutants, [None if p is None else len(p) for p in pairs], early, counters,
                          time.perf_counter() - t0)
        return batch, asked


Batches = Iterable[tuple[int, list[tuple[int, TextRecord]]]]  # (first text id, [(text_id, record)]) per batch


def text_batches(records: Sequence[TextRecord], done: set[int], batch_texts: int) -> Batches:
    """The campaign's batches of texts not yet stored (a batch is the unit of commit: its first id is fixed by
    its position, so a resumed run cuts the same batches)."""
    for start in range(0, len(records), batch_texts):
        texts = [(i, r) for i, r in enumerate(records[start:start + batch_texts], start=start) if i not in done]
        if texts:
            yield start, texts


# ---------------------------------------------------------------- validate

class VerdictSource(Protocol):
    def verdicts(self, batches: Batches) -> Iterator[tuple[TextBatch, Verdicts]]: ...


class ParsedVerdicts:
    """Stage 2 now: mutation, then the dependency invariant by `validate` (an executor's validate: parsing may run
    in other processes or machines, ahead of the batch being stored)."""

    def __init__(self, mutate: Mutate, validate: Callable):
        self.mutate, self.validate = mutate, with_grammar_check(validate, mutate.config.grammar)  # --grammar

    def verdicts(self, batches: Batches) -> Iterator[tuple[TextBatch, Verdicts]]:
        for batch, checked in self.validate(self.mutate.batch(start, texts) for start, texts in batches):
            valid = checked.valid
            reasons = checked.reasons or [None] * len(valid)  # an executor that does not say leaves them unrecorded
            if batch.early is not None:  # decided before parsing (too_long, inflection): invalid for that reason
                valid = [v and r is None for v, r in zip(valid, batch.early)]
                reasons = [r or x for x, r in zip(reasons, batch.early)]
            yield batch, Verdicts(list(valid), list(reasons), checked.sentences_tagged, checked.sentences_parsed)


# ---------------------------------------------------------------- ask

def _modal(answers: tuple[Outcome, ...]) -> Outcome:
    """The most frequent parseable answer (the first of them on a tie), else the first answer."""
    if len(answers) == 1:
        return answers[0]
    counts = Counter(a.encode() for a in answers if a.parseable)
    if not counts:
        return answers[0]
    top = counts.most_common(1)[0][0]
    return next(a for a in answers if a.encode() == top)


def encoded(answers: tuple[Outcome, ...]) -> tuple[str | None, ...]:
    return tuple(a.encode() for a in answers)


def texts_to_ask(batch: TextBatch, verdicts: Verdicts, config: RunConfig, selected: set[int] | None = None
                 ) -> tuple[list[str], dict[int, tuple[str, str, list]]]:
    """The texts stage 3 asks the model about for one batch, in order and distinct, and per asked mutant what the
    model reads (`Asked.views`). hinter.pipeline.estimate counts them before a campaign. `selected`: with --adaptive, the
    mutants the plan asks this round (the other valid ones stay unasked)."""
    # Each original, then its mutants in sorted order: consecutive texts then share long prefixes, which a backend
    # with a prefix cache (llama.cpp) does not compute again.
    asked_mutants: dict[int, list[str]] = {text_id: [] for text_id, _ in batch.texts}
    # What the model reads for each mutant it is asked about: (original, mutant, edits in the original's
    # coordinates); with --window a slice of the mutant and the same slice of the original. A mutant's text is
    # built only here: building every discarded mutant's text (cached on it) doubled a long-text campaign's
    # memory (ECtHR: 815 -> 1,593 MiB).
    views: dict[int, tuple[str, str, list]] = {}
    for i, (m, v) in enumerate(zip(batch.mutants, verdicts.valid)):
        if (v or config.query_discarded) and (selected is None or i in selected):
            edits = m.edits
            if config.window is not None:
                views[i] = windowed(m.original, edits, window_bounds(len(m.original), edits, config.window))
            else:  # m.text built from these edits and kept as its cached_property keeps it (judge reads it), without
                # the property's lock and a second pass over the replacements: a text asked is built here
                text = m.__dict__.get("text")
                if text is None:
                    text = m.__dict__["text"] = apply_replacements(m.original, edits)
                views[i] = (m.original, text, edits)
            asked_mutants[m.text_id] += views[i][:2]
    texts = [t for text_id, rec in batch.texts for t in dict.fromkeys([rec.text, *sorted(asked_mutants[text_id])])]
    return texts, views


def ask(batch: TextBatch, verdicts: Verdicts, cache: OutcomeCache, config: RunConfig,
        report: Progress = lambda *a: None, selected: set[int] | None = None) -> Asked:
    """Stage 3: the model's answers about each original and each mutant it is asked about (valid ones, or every
    one with --query-discarded; with --adaptive the plan's `selected`), through the cache: a text is never asked
    twice."""
    return ask_together([(batch, verdicts, selected)], cache, config, report)[0]


def ask_together(items: Sequence[tuple[TextBatch, Verdicts, set[int] | None]], cache: OutcomeCache,
                 config: RunConfig, report: Progress = lambda *a: None) -> list[Asked]:
    """`ask` for several batches in one model call (a model that `asks_ahead`: see _grouped); each batch's Asked
    holds the answers of all of them, its calls and errors are the first batch's (the totals stay exact)."""
    return start_asking(items, cache, config, report)()


def start_asking(items: Sequence[tuple[TextBatch, Verdicts, set[int] | None]], cache: OutcomeCache,
                 config: RunConfig, report: Progress = lambda *a: None) -> Callable[[], list[Asked]]:
    """`ask_together` in two steps (OutcomeCache.start_repeats): the texts to ask gathered and, with a model that
    `launches_ahead`, sent; the function returned waits for the answers. In between the pipeline judges and
    stores the group before, while a GPU answers this one."""
    # the calls and errors this group's answers add, counted when they are read: the pipeline may start the next
    # group before this one is read (_asked)
    before = [cache.calls, cache.errors]
    texts: list[str] = []
    views = []
    for batch, verdicts, selected in items:
        batch_texts, batch_views = texts_to_ask(batch, verdicts, config, selected)
        texts += batch_texts
        views.append(batch_views)
    texts = list(dict.fromkeys(texts)) if len(items) > 1 else texts
    # --repeats N: every text asked N times; a verdict then compares the answers' distributions
    n = answers_per_text(config)  # a generative task's samples: their spread is the free-text oracle's null
    # each asked mutant's original and edits: a model that reads them tokenizes only what changed (hf:)
    derived = ({mutant: (original, edits) for batch_views in views for original, mutant, edits in batch_views.values()}
               if getattr(cache.model, "reads_edits", False) else None)
    keys = {t: text_key(t) for t in texts}
    answered = cache.start_repeats(texts, range(n), progress=lambda _: report("model", cache.calls - before[0],
                                                                              n * len(texts)), derived=derived,
                                   keys=keys)

    def finish() -> list[Asked]:
        before[:] = cache.calls, cache.errors
        per_repeat = answered()
        calls, errors = before
        answers = {k: tuple(a[k] for a in per_repeat) for k in per_repeat[0]}
        modal = {k: _modal(a) for k, a in answers.items()}  # once per text asked, not once per mutant
        return [Asked(answers, v, keys, modal, cache.calls - calls, cache.errors - errors) if k == 0 else
                Asked(answers, v, keys, modal) for k, v in enumerate(views)]
    return finish


# ---------------------------------------------------------------- judge

@dataclass(frozen=True)
class Judgement:
    """A judge's answer on one mutant: whether its answers differ from its original's (None: undecided, no
    parseable answer), and for free text each aspect's record."""

    bias: bool | None
    aspects: dict[str, AspectRecord] | None = None


class Judge(Protocol):
    """Whether a mutant's answers differ from its original's. `replacements`: the mutant's (what free text masks)."""

    def __call__(self, original: tuple[Outcome, ...], mutant: tuple[Outcome, ...],
                 replacements: Sequence[Replacement]) -> Judgement: ...


class LabelJudge:
    """The paper's oracle: the outcomes differ (the most frequent answer of each, with one answer the answer)."""

    def __call__(self, original, mutant, replacements=()):
        return Judgement(oracle.is_bias(_modal(original).encode(), _modal(mutant).encode()))


class RepeatsJudge:
    """--repeats: the answers' distributions differ beyond the model's own noise (oracle.flip_with_repeats)."""

    def __call__(self, original, mutant, replacements=()):
        return Judgement(oracle.flip_with_repeats(encoded(original), encoded(mutant)))


class GenerativeJudge:
    """A generative task: each aspect of the masked answers, the mutant's against the spread of the original's own
    samples (generative.judge.FreeTextJudge); the mutant differs when it differs on any aspect."""

    def __init__(self, task, judge_cache=None, language: str = "en"):
        self.judge = judge_of(task, judge_cache=judge_cache, language=language)

    def __call__(self, original, mutant, replacements=()):
        x = [a.value for a in original if a.parseable]
        y = [a.value for a in mutant if a.parseable]
        if not x or not y:  # every generation failed or came back empty: a model error, not an answer
            return Judgement(None)
        verdicts = self.judge.judge(x, y, replacements)
        return Judgement(any(v.differs for v in verdicts.values()),
                         {k: AspectRecord(v.original, v.mutant, v.p_value, v.differs) for k, v in verdicts.items()})


def task_of(config: RunConfig):
    """The run's task (None: the model's own labels, e.g. a classifier's)."""
    if config.task is None:
        return None
    return get_task(config.task)


def answers_per_text(config: RunConfig) -> int:
    """How many times each text is asked: a generative task's `samples`, else --repeats."""
    return answers_of_task(task_of(config), config.repeats)


def judge_for(config: RunConfig, judge_cache=None) -> Judge:
    """The oracle of the run's task; `judge_cache(model)`: the run's metered cache for a judge model."""
    task = task_of(config)
    if is_generative(task):
        return GenerativeJudge(task, judge_cache, config.language)
    return RepeatsJudge() if config.repeats > 1 else LabelJudge()


def judge(batch: TextBatch, verdicts: Verdicts, asked: Asked, decide: Judge, config: RunConfig
          ) -> tuple[list[TextRow], list[MutantRow]]:
    """Stage 4: each asked mutant's verdict, then the hidden marks of intersectional mutants from their
    components in the same text; the rows the store keeps."""
    answers, modal, several = asked.answers, asked.modal, answers_per_text(config) > 1
    key = asked.keys.__getitem__  # every text judged here was asked
    views, reasons, windowed = asked.views, verdicts.reasons, config.window is not None
    rows = []
    for i, (m, v, changed) in enumerate(zip(batch.mutants, verdicts.valid, batch.changed)):
        attributes, pairs = "+".join(m.attributes), pair_key(m.key)
        view = views.get(i)
        if view is None:  # not asked (discarded, or left unasked by --adaptive): no outcome, no verdict
            # discarded mutants' texts are not stored: the replacements' spans rebuild them on reading
            rows.append(MutantRow(m.text_id, m.order, attributes, pairs, m.replacements, None, changed, v, None, None,
                                  False, None, None, None, discard_reason=None if v else reasons[i]))
            continue
        original_text, mutant_text, edits = view
        original_key, mutant_key = key(original_text), key(mutant_text)
        original_answers, original = answers[original_key], modal[original_key]
        mutant_answers, o = answers[mutant_key], modal[mutant_key]
        unseen = oracle.unseen(edits, original.seen, o.seen)
        verdict = Judgement(None) if unseen else decide(original_answers, mutant_answers, m.replacements)
        outcome = o.encode()
        rows.append(MutantRow(
            m.text_id, m.order, attributes, pairs, m.replacements, m.text, changed, v, outcome, o.raw, True,
            verdict.bias, None, None, scores=o.scores, seen=o.seen, unseen=unseen,
            base=(original.encode(), original.scores) if windowed else None,
            answers=encoded(mutant_answers) if several else None,
            discard_reason=None if v else reasons[i], aspects=verdict.aspects))
    _mark_hidden(rows, batch.mutants)
    # per text, its answers (and its mutants') that were model errors: such a text is asked again by a rerun
    asked_keys: dict[int, set[str]] = {tid: {key(rec.text)} for tid, rec in batch.texts}
    for i, (original_text, mutant_text, _) in asked.views.items():
        asked_keys[batch.mutants[i].text_id].update((key(original_text), key(mutant_text)))
    texts = [TextRow(tid, rec.source_id, rec.text, rec.gold, o.encode(), o.raw, o.scores, o.seen,
                     encoded(answers[key(rec.text)]) if several else None,
                     sum(a.error for k in asked_keys[tid] for a in answers[k]))
             for tid, rec in batch.texts for o in [modal[key(rec.text)]]]
    return texts, rows


def _mark_hidden(rows: list[MutantRow], mutants: list[Mutant]) -> None:
    """Fill hidden / strictly hidden for intersectional rows, from their components in the same text; with free
    text, each aspect's hidden mark too (the row is hidden when it is on some aspect)."""
    by_key = {(m.text_id, m.key): r for r, m in zip(rows, mutants)}
    for row, m in zip(rows, mutants):
        if m.order < 2 or not row.valid or row.bias is None:
            continue
        if not row.bias and row.aspects is None:  # no bias: hidden on no account (oracle.is_hidden), whatever its parts
            row.hidden = row.strictly_hidden = False
            continue
        subs = [by_key.get((m.text_id, k)) for k in components(m)]
        atomic, lower = subs[:m.order], subs[m.order:]
        if row.aspects is not None:
            for name, record in row.aspects.items():
                parts = [None if s is None or not s.valid or s.aspects is None else (True, s.aspects[name].differs)
                         for s in atomic]
                row.aspects[name] = replace(record, hidden=oracle.is_hidden(record.differs, parts))
            row.hidden = any(r.hidden for r in row.aspects.values())
        else:
            row.hidden = oracle.is_hidden(row.bias, [None if s is None else (s.valid, s.bias) for s in atomic])
        row.strictly_hidden = oracle.is_strictly_hidden(row.hidden, [None if s is None else (s.valid, s.bias)
                                                                     for s in lower])


def plan_round(plan, texts: list[TextRow], rows: list[MutantRow]) -> None:
    """--adaptive: a round's tested mutants (valid, judged), with their original's answers, to the plan."""
    originals = {t.text_id: t.answers or (t.outcome,) for t in texts}
    plan.update(tested_of(plan, (
        Answered(r.text_id, tuple(r.pair_key.split(" & ")), originals[r.text_id], r.answers or (r.outcome,))
        for r in rows if r.valid and r.bias is not None)))


# ---------------------------------------------------------------- the pipeline

class Sink(Protocol):
    def __call__(self, result: BatchResult) -> None: ...


def run_pipeline(batches: Batches, source: VerdictSource, sink: Sink, config: RunConfig, *,
                 cache: OutcomeCache | None = None, total: int = 0, done: int = 0,
                 report: Progress = lambda *a: None, plan=None, decide: Judge | None = None,
                 again: frozenset[int] = frozenset()) -> None:
    """Every batch through the stages: verdicts from `source`, then (with a model's `cache`) ask and judge; each
    batch's result goes to `sink` (the store commits it whole: a run killed at any moment resumes at the first
    batch not committed, and its counters add up as if it had not stopped). `total`, `done`: texts in all and
    already stored, for `report`. `plan`: --adaptive's hinter.analysis.adaptive.Plan, which picks the mutants each batch
    asks and learns from its answers. `decide`: the oracle (default: the task's, `judge_for`). `again`: stored
    texts asked again (their answers had model errors): their mutation counters were counted when first stored."""
    decide = decide or judge_for(config)
    with per_batch() as next_batch:
        _run_batches(batches, source, sink, config, cache, total, done, report, plan, decide, again, next_batch)


def _grouped(pairs: Iterator[tuple[TextBatch, Verdicts]], ahead: int
             ) -> Iterator[list[tuple[TextBatch, Verdicts, float]]]:
    """The batches in groups asked together: one batch each, or with a model that `asks_ahead` (texts it wants
    per call: a GPU's classifier, whose forward batches are only full and overlapped with the tokenizing when
    given thousands of texts at a time) as many as reach that many texts (originals and valid mutants). Each
    batch is still judged and stored on its own (the unit of commit). With each batch, the seconds the driver
    waited for its verdicts."""
    group: list[tuple[TextBatch, Verdicts, float]] = []
    size, t = 0, time.perf_counter()
    for batch, verdicts in pairs:
        group.append((batch, verdicts, time.perf_counter() - t))
        size += len(batch.texts) + sum(verdicts.valid)
        if size >= ahead:
            yield group
            group, size = [], 0
        t = time.perf_counter()
    if group:
        yield group


def _asked(groups: Iterator[list[tuple[TextBatch, Verdicts, float]]], cache: OutcomeCache | None, config: RunConfig,
           report: Progress, together: bool) -> Iterator[tuple[list, list[Asked] | None, float]]:
    """Each group with its answers (None without a model, or when its batches are asked one at a time) and the
    seconds the driver spent asking them. With a model that `launches_ahead` (hf:), the next group's texts are sent
    before this group is judged and stored: on CUDA the GPU answers them meanwhile, where it had waited for the
    driver (on an H200, a large campaign's oracle and store writes took 4.4 s beside its 10.5 s model stage). The
    seconds are then the driver's asking and waiting alone, less the GPU's work done behind the oracle."""
    if cache is None or not together:
        for group in groups:
            yield group, None, 0.0
        return

    def start(group) -> tuple[Callable[[], list[Asked]], float]:
        t = time.perf_counter()
        return start_asking([(b, v, None) for b, v, _ in group], cache, config, report), time.perf_counter() - t

    def answered(started) -> tuple[list[Asked], float]:
        finish, seconds = started
        t = time.perf_counter()
        return finish(), seconds + time.perf_counter() - t

    if not getattr(cache.model, "launches_ahead", False):
        for group in groups:
            yield group, *answered(start(group))
        return
    # the next group is sent before this one's answers are read, not after: its texts gathered and its calls
    # queued behind this group's, so that the GPU does not wait for the driver between two groups (reading the
    # last call's answers, storing them, gathering the next group's texts and keys); the cache asks a text out in
    # this group's calls once (OutcomeCache._asking)
    group = next(groups, None)
    started = start(group) if group is not None else None
    while group is not None:
        following = next(groups, None)
        started_next = start(following) if following is not None else None
        asks, seconds = answered(started)
        yield group, asks, seconds
        group, started = following, started_next


def _run_batches(batches, source, sink, config, cache, total, done, report, plan, decide, again, next_batch) -> None:
    report("texts", done, total)
    # the plan picks each batch's mutants from the answers before it: its batches are asked one at a time
    ahead = getattr(cache.model, "asks_ahead", 0) if cache is not None and plan is None else 0
    for group, asks, seconds_model in _asked(_grouped(source.verdicts(batches), ahead), cache, config, report,
                                             plan is None):
        for k, (batch, verdicts, waited) in enumerate(group):
            # one young collection a batch, and what earlier batches left alive (the outcome cache, the store's
            # tables, the model) out of later ones: a large campaign's collections had cost more than its model
            # stage
            next_batch()
            # a batch is stored whole: its texts are all new, or all asked again (the counters then counted already)
            counted = not (batch.texts and batch.texts[0][0] in again)
            stats = {**(batch.counters if counted else {}), "sentences_tagged": verdicts.sentences_tagged,
                     "sentences_parsed": verdicts.sentences_parsed}
            if cache is None:  # a suite's build: the verdicts are what it keeps
                sink(BatchResult(batch, verdicts, None, None, stats))
            else:
                t2 = time.perf_counter()
                if asks is None:  # --adaptive: this batch's mutants as the plan selects them now
                    selected = plan.select([(m.text_id, m.key) for m in batch.mutants], verdicts.valid)
                    asked = ask(batch, verdicts, cache, config, report, selected)
                    seconds_model = time.perf_counter() - t2
                else:
                    asked = asks[k]
                t3 = time.perf_counter()
                texts, rows = judge(batch, verdicts, asked, decide, config)
                if plan is not None:
                    plan_round(plan, texts, rows)
                stats.update({"model_calls": asked.calls, "model_errors": sum(t.errors for t in texts),
                              # the time the driver waited for the verdicts (mutation included): with an executor
                              # working ahead, validity time is hidden behind the model stage
                              "seconds_mutation": batch.seconds_mutation,
                              "seconds_validity": waited - batch.seconds_mutation,
                              # a group's model time is its first batch's
                              "seconds_model": seconds_model if k == 0 or asks is None else 0.0,
                              "seconds_oracle_store": time.perf_counter() - t3})
                sink(BatchResult(batch, verdicts, texts, rows, stats))
                report("errors", cache.errors, cache.calls)
                # let go of the stored batch's rows and answers (and the group's hold on them) before the next
                # batch's collection: freed by their reference count rather than scanned, kept and frozen
                texts = rows = asked = group[k] = None
                if asks is not None:
                    asks[k] = None
            report("texts", min(batch.start + config.batch_texts, total), total)
