"""Parses made before validity asks for them: English mutation parses the original's sentences its rules read
(english.ParsedSentences), and the Validator takes their tags and labels from here (validity.parsers.known_parses)
instead of parsing them again, so an original sentence is parsed once per process, not at mutation and again at
validity. Here, below validity in the layers, so that a language's module may remember what it parsed.

Per parser fingerprint, sentence -> (tags, labels). Bounded: the oldest are dropped (a later ask parses again, with
the same result)."""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from functools import lru_cache
from typing import Sequence

# What thinc (spaCy's machine-learning library) tries to import when it loads, for pipelines on a GPU
GPU_LIBRARIES = ("torch", "cupy", "cupyx", "tensorflow", "mxnet")

_KNOWN: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {}
KNOWN_LIMIT = 20_000


def spacy_fingerprint(meta: dict) -> str:
    """A spaCy pipeline's fingerprint from its meta (validity.parsers.SpacyParser.fingerprint)."""
    return f"spacy:{meta.get('lang')}_{meta.get('name')}-{meta.get('version')}"


def remember_parses(fingerprint: str, sentences: Sequence[str], parses: Sequence[tuple]) -> None:
    """Keep these sentences' (tags, dependency labels), made by the pipeline of `fingerprint`, for the Validator."""
    known = _KNOWN.setdefault(fingerprint, {})
    for s, p in zip(sentences, parses):
        known.pop(s, None)
        known[s] = p
    while len(known) > KNOWN_LIMIT:
        del known[next(iter(known))]


def remembered(fingerprint: str | None, sentences: Sequence[str]) -> list[tuple | None]:
    """The (tags, labels) remembered for these sentences by a pipeline of `fingerprint` (None where there is none)."""
    known = _KNOWN.get(fingerprint) if fingerprint else None
    return [known.get(s) for s in sentences] if known else [None] * len(sentences)


class _ThincOnTheCPU(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Loads `thinc.compat` with the GPU libraries hidden: thinc imports torch (and cupy, which asks CUDA for its
    devices) when they are installed, for GPU pipelines hinter's parsers never use (spaCy's small pipelines run on
    the CPU). On an H200 machine a parser's load took 9.4 s with them (2.6 s without), and CUDA started in a process
    about to fork; on a CPU, about 1.5 s of every command that parses. Hidden while that one module runs, they fail
    as if not installed; a later import (an hf model's torch) finds them. One already imported stays visible."""

    def find_spec(self, name, path=None, target=None):
        if name != "thinc.compat":
            return None
        sys.meta_path.remove(self)  # once: thinc is loaded once a process
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            self.loader, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        hidden = [name for name in GPU_LIBRARIES if name not in sys.modules]
        sys.modules.update(dict.fromkeys(hidden))  # None: `import torch` raises ImportError
        try:
            self.loader.exec_module(module)
        finally:
            for name in hidden:
                if name in sys.modules and sys.modules[name] is None:
                    del sys.modules[name]


def import_spacy():
    """spaCy, imported so that thinc, if it loads now, does not import the GPU libraries (_ThincOnTheCPU): every
    hinter module that loads a spaCy pipeline imports spaCy through here."""
    if "thinc.compat" not in sys.modules and not any(isinstance(f, _ThincOnTheCPU) for f in sys.meta_path):
        sys.meta_path.insert(0, _ThincOnTheCPU())
    import spacy
    import spacy.util

    return spacy


@lru_cache(maxsize=4)
def loaded_pipeline(model: str):
    """The spaCy pipeline `model` with every component, loaded once per process: English mutation reads it whole
    (entities, lemmas) and the validity parser a view of it (`pipeline_view`). A second load of English's took as
    long as the first (0.24 s), whatever it excluded."""
    return import_spacy().load(model)


def pipeline_view(model: str, exclude: Sequence[str] = (), disable: Sequence[str] = ()):
    """What `spacy.load(model, exclude=..., disable=...)` gives, made of loaded_pipeline(model)'s own tokenizer and
    components (the same objects, the same results) instead of a second load. Enabling or disabling a component,
    or `select_pipes`, changes the view alone."""
    full = loaded_pipeline(model)
    view = type(full)(vocab=full.vocab, meta=dict(full.meta), create_tokenizer=lambda _: full.tokenizer)
    for name in full.component_names:
        if name not in exclude:
            view.add_pipe(name, source=full)
    for name in (*full.disabled, *disable):
        if name in view.component_names and name not in view.disabled:
            view.disable_pipe(name)
    return view
