"""Parses made before validity asks for them: English mutation parses the original's sentences its rules read
(english.ParsedSentences), and the Validator takes their tags and labels from here (validity.parsers.known_parses)
instead of parsing them again, so an original sentence is parsed once per process, not at mutation and again at
validity. Here, below validity in the layers, so that a language's module may remember what it parsed.

Per parser fingerprint, sentence -> (tags, labels). Bounded: the oldest are dropped (a later ask parses again, with
the same result)."""
from __future__ import annotations

from typing import Sequence

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
