"""What every executor shares: the validity stage's result per batch, the Executor protocol, and the validity
stage run by one Validator in this process."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Protocol, Sequence, TypeVar

from ..models import Model
from ..validity import Parser, Validator
from ..validity.invariant import SentencePair

P = TypeVar("P")
Pairs = Sequence[Sequence[SentencePair] | None]  # per mutant: its changed sentence pairs (None: counts differ)


@dataclass(frozen=True)
class ValidityResult:
    valid: list[bool]
    sentences_tagged: int
    sentences_parsed: int
    # per mutant, why it was discarded (None: valid; see validity.invariant.DISCARD_REASONS); None when an
    # executor does not say
    reasons: list[str | None] | None = None


class Executor(Protocol):
    name: str
    parser_fingerprint: str

    def start(self, model, parser: Parser | None = None) -> Model:
        """Load the parser(s) and model(s) where they run; returns the model to ask (through an OutcomeCache)."""
        ...

    def validate(self, jobs: Iterable[tuple[P, Pairs]]) -> Iterator[tuple[P, ValidityResult]]:
        """Verdicts for each job (a batch of texts' mutants), in the jobs' order. Jobs are read lazily, and
        an executor may work ahead on later jobs while the caller handles the one it was given."""
        ...

    def describe(self) -> str:
        """Where the work runs, for the progress line (e.g. "this machine, 4 spaCy processes")."""
        ...

    def close(self) -> None: ...


def validate_jobs(validator: Validator, jobs: Iterable[tuple[P, Pairs]]) -> Iterator[tuple[P, ValidityResult]]:
    """Verdicts for each job by one Validator in this process (the local executor; serve's try-a-sentence)."""
    for payload, pairs in jobs:
        tagged, parsed = validator.sentences_tagged, validator.sentences_parsed
        reasons = validator.reasons(pairs)
        yield payload, ValidityResult([r is None for r in reasons], validator.sentences_tagged - tagged,
                                      validator.sentences_parsed - parsed, reasons)
