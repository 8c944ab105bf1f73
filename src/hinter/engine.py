"""Wires the stages, one batch of texts at a time: mutate -> validate -> ask the model -> oracle -> store."""
from __future__ import annotations

import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from . import oracle
from .dictionary import Dictionary, load_dictionary
from .errors import InputError
from .executor import Executor, LocalExecutor
from .models.base import OutcomeCache, text_key
from .mutation import Mutant, Replacement, components, generate
from .store import MutantRow, RunStore
from .validity import Parser, changed_sentence_pairs, sentence_spans


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
            reps = tuple(Replacement(**{**r, "spans": tuple(map(tuple, r["spans"]))}) for r in m.replacements)
            yield MutantRecord(m.text_id, m.order, reps, m.text, m.valid, m.outcome, m.raw, m.bias, m.hidden,
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
        subs = [by_key.get((m.text_id, " & ".join(k))) for k in components(m)]
        atomic, lower = subs[:m.order], subs[m.order:]
        row.hidden = oracle.is_hidden(row.bias, atomic) if row.valid and row.bias is not None else None
        row.strictly_hidden = oracle.is_strictly_hidden(bool(row.hidden), lower) if row.hidden is not None else None


def _texts_fingerprint(records: Sequence[TextRecord]) -> str:
    import hashlib
    h = hashlib.sha256()
    for r in records:
        h.update(text_key(r.text).encode())
    return h.hexdigest()[:16]


def _open_store(out_dir: Path, settings: dict, overwrite: bool) -> RunStore:
    path = out_dir / "run.sqlite"
    if path.exists() and overwrite:
        for p in out_dir.glob("run.sqlite*"):
            p.unlink()
    store = RunStore(path)
    previous = store.settings()
    if previous and previous != settings:
        differ = sorted(k for k in set(previous) | set(settings) if previous.get(k) != settings.get(k))
        store.close()
        raise InputError(f"the folder holds a run with other settings ({', '.join(differ)} differ)",
                         where=str(out_dir), fix="Choose another output folder, or pass --overwrite to replace it.")
    store.save_settings(settings)
    return store


def run(texts: Sequence[str | TextRecord], model, attributes: Sequence[str] = ("race", "gender"), order: int = 2,
        dictionary: str | Path | Dictionary | None = None, *, out: str | Path | None = None, parser: Parser | None = None,
        pairs_per_attribute: int | None = None, max_pairs_per_text: int | None = None, seed: int = 0, include_occupational: bool = True,
        query_discarded: bool = False, batch_texts: int = 32, overwrite: bool = False, extra_settings: dict | None = None,
        progress: Callable[[str, int, int], None] | None = None, executor: Executor | None = None) -> Run:
    """Run a bias test: atomic mutants for each attribute and intersectional ones up to `order`.

    `model`: a spec ("gguf:default", "python:pkg.mod:fn"), a ModelSpec, a Model, or a function list[str] -> list[outcome].
    `dictionary`: None for the built-in one, a path, or a Dictionary. `pairs_per_attribute`: a seeded
    sample of that many pairs per attribute (None: all); `max_pairs_per_text`: per text and attribute, a seeded
    sample of at most that many of the pairs present (None: all). An `out` folder holding a run with the same
    settings is continued (texts already stored are skipped); one with other settings is an error unless `overwrite`. `progress(stage, done, total)` is called as work advances (stage "load" around loading the parser and the
    model, then "texts").
    `executor`: where parsing and model calls run (default: LocalExecutor(); hinter.executor.make_executor("ray")
    spreads them over a Ray cluster with the same results). The executor is not a setting: a run started on one
    may be continued on another.
    """
    if order < 1:
        raise InputError(f"order must be at least 1, got {order}", where="order")
    for name, value in (("pairs_per_attribute", pairs_per_attribute), ("max_pairs_per_text", max_pairs_per_text)):
        if value is not None and value < 1:
            raise InputError(f"{name} must be at least 1 (or unset for all pairs), got {value}",
                             where=f"--{name.replace('_', '-')}")
    attributes = tuple(sorted(dict.fromkeys(attributes)))
    if not attributes:
        raise InputError("no attribute to test", where="attributes", fix="Name at least one, e.g. race,gender.")
    records = [t if isinstance(t, TextRecord) else TextRecord(t) for t in texts]
    if not records:
        raise InputError("the dataset holds no text", fix="Give at least one text to test.")
    for i, r in enumerate(records):
        if not isinstance(r.text, str) or not r.text.strip():
            raise InputError(f"text {i} is empty or not a string", where=f"texts[{i}]",
                             fix="Remove empty texts or fill them in.")
    d = dictionary if isinstance(dictionary, Dictionary) else load_dictionary(dictionary)
    d = d.restrict(attributes, include_occupational).sample(pairs_per_attribute, seed)
    executor = executor or LocalExecutor()
    report = progress or (lambda stage, done, total: None)
    report("load", 0, 1)
    model = executor.start(model, parser)
    report("load", 1, 1)
    try:
        return _run_batches(records, model, executor, attributes, order, d, out, max_pairs_per_text, seed,
                            pairs_per_attribute, include_occupational, query_discarded, batch_texts, overwrite,
                            extra_settings, report)
    finally:
        executor.close()


def _run_batches(records, model, executor, attributes, order, d, out, max_pairs_per_text, seed, pairs_per_attribute,
                 include_occupational, query_discarded, batch_texts, overwrite, extra_settings, report) -> Run:
    out_dir = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="hinter-run-"))
    out_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    settings = {
        "attributes": list(attributes), "order": order, "dictionary": d.source, "dictionary_pairs": len(d.pairs),
        "dictionary_fingerprint": d.fingerprint(), "pairs_per_attribute": pairs_per_attribute,
        "max_pairs_per_text": max_pairs_per_text, "seed": seed,
        "include_occupational": include_occupational, "model": model.fingerprint, "parser": executor.parser_fingerprint,
        "query_discarded": query_discarded, "texts": len(records),
        "texts_fingerprint": _texts_fingerprint(records), **(extra_settings or {}),
    }
    store = _open_store(out_dir, settings, overwrite)
    done = {row[0] for row in store.db.execute("SELECT text_id FROM texts")}
    cache = OutcomeCache(model, store)

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
                gen = generate(text_id, rec.text, d, attributes, order, max_pairs_per_text, seed)
                mutants.extend(gen.mutants)
                overlaps += gen.overlaps_skipped
            splits = {}
            for text_id, rec in batch:
                spans = sentence_spans(rec.text)
                splits[text_id] = (spans, [rec.text[a:b] for a, b in spans])
            pairs = [changed_sentence_pairs(m.original, *splits[m.text_id], m.edits) for m in mutants]
            yield (start, batch, mutants, pairs, overlaps, time.perf_counter() - t0), pairs

    t1 = time.perf_counter()
    for (start, batch, mutants, pairs, overlaps, seconds_mutation), checked in executor.validate(jobs()):
        valid = checked.valid
        t2 = time.perf_counter()
        calls, errors = cache.calls, cache.errors
        # Each original, then its mutants in sorted order: consecutive texts then share long prefixes, which
        # a backend with a prefix cache (llama.cpp) does not compute again.
        asked_mutants: dict[int, list[str]] = {text_id: [] for text_id, _ in batch}
        for m, v in zip(mutants, valid):
            if v or query_discarded:
                asked_mutants[m.text_id].append(m.text)
        ask = [t for text_id, rec in batch for t in [rec.text, *sorted(asked_mutants[text_id])]]
        outcomes = cache.predict(ask)
        t3 = time.perf_counter()
        original_outcome = {text_id: outcomes[text_key(rec.text)] for text_id, rec in batch}
        rows = []
        for m, v, p in zip(mutants, valid, pairs):
            o = outcomes.get(text_key(m.text)) if (v or query_discarded) else None
            rows.append(MutantRow(
                m.text_id, m.order, "+".join(m.attributes), " & ".join(m.key),
                # discarded mutants' texts are not stored: the replacements' spans rebuild them on reading
                [{**asdict(r), "spans": [list(s) for s in r.spans]} for r in m.replacements],
                m.text if o is not None else None,
                None if p is None else len(p), v, o.encode() if o else None, o.raw if o else None, o is not None,
                oracle.is_bias(original_outcome[m.text_id].encode(), o.encode()) if o else None, None, None))
        _oracle(rows, _verdicts_by_key(rows), mutants)
        # The batch's texts, mutants and counters are committed together: a run killed at any moment
        # resumes at the first batch not committed, and its counters add up as if it had not stopped.
        stats = {"overlaps_skipped": overlaps, "model_calls": cache.calls - calls, "model_errors": cache.errors - errors,
                 "sentences_tagged": checked.sentences_tagged, "sentences_parsed": checked.sentences_parsed,
                 # the time the driver waited for the verdicts (mutation included): with an executor working
                 # ahead, validity time is hidden behind the model stage
                 "seconds_mutation": seconds_mutation, "seconds_validity": t2 - t1 - seconds_mutation,
                 "seconds_model": t3 - t2, "seconds_oracle_store": time.perf_counter() - t3}
        store.save_batch([(tid, rec.source_id, rec.text, rec.gold, original_outcome[tid].encode(),
                           original_outcome[tid].raw) for tid, rec in batch], rows, stats)
        report("texts", min(start + batch_texts, len(records)), len(records))
        t1 = time.perf_counter()
    result = Run(out_dir, store)
    from .report import write_outputs
    write_outputs(result)
    return result
