"""What every executor shares: the validity stage's result per batch, the Executor protocol, and the validity
stage run by one Validator in this process."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Protocol, Sequence, TypeVar

from hinter.models import Model
from hinter.validity import Parser, Validator
from hinter.validity.invariant import SentencePair

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

    def start(self, model, parser: Parser | None = None, spacy_model: str | None = None,
              characters: int | None = None) -> Model:
        """Load the parser(s) and model(s) where they run; returns the model to ask (through an OutcomeCache).
        `spacy_model`: the pipeline of the run's language (languages.Language.spacy_model; None: English);
        `characters`: the campaign's texts' characters, when known (a default worker count may depend on it)."""
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


def grammar_checked(result: ValidityResult, pairs: Pairs, checker, max_drop: float) -> ValidityResult:
    """`result` with the grammar check applied to the mutants it found valid (validity/grammar.py): a mutant whose
    changed sentences score more than `max_drop` below the original's is discarded, for the reason GRAMMAR."""
    checked = [p if v else None for p, v in zip(pairs, result.valid)]
    grammar = checker.reasons(checked, max_drop)
    if not any(grammar):
        return result
    reasons = result.reasons or [None] * len(result.valid)
    return ValidityResult([v and g is None for v, g in zip(result.valid, grammar)], result.sentences_tagged,
                          result.sentences_parsed, [g or r for g, r in zip(grammar, reasons)])


def with_grammar_check(validate: Callable, max_drop: float | None, checker=None) -> Callable:
    """An executor's `validate` followed by the grammar check (--grammar MAX_DROP), run here, on the driver, on
    each job's mutants as they come back; `validate` itself when `max_drop` is None."""
    if max_drop is None:
        return validate
    if checker is None:
        from hinter.validity.grammar import default_checker
        checker = default_checker()  # here, before any job: a missing package fails before the first batch

    def validate_then_check(jobs: Iterable[tuple[P, Pairs]]) -> Iterator[tuple[P, ValidityResult]]:
        # each job's pairs travel with its payload (a payload stays on the driver, whatever the executor)
        for (payload, pairs), result in validate(((payload, pairs), pairs) for payload, pairs in jobs):
            yield payload, grammar_checked(result, pairs, checker, max_drop)
    return validate_then_check
