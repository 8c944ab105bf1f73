"""Where the heavy stages run: validity parsing and model calls.

`local` (the default) parses in this process or a local process pool and asks the model in this process;
`ray` spreads both over the workers of a Ray cluster (`executor/ray_cluster.py`, `pip install 'hinter[ray]'`).
Either way the driver generates the mutants, applies the oracle and alone writes the run store, so results,
resume and the store are the same whichever executor ran.

Executors are registered by name (`EXECUTORS`, entry-point group `hinter_executors`): an entry is a factory
called as `factory(address=..., workers=..., cpus_per_worker=..., gpus_per_worker=...)`.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from hinter.config import Execution
from hinter.models import Model, resolve_model
from hinter.registry import Registry
from hinter.validity import Parser, SpacyParser, Validator
from hinter.validity.parsers import DEFAULT_SPACY_MODEL, default_processes
from hinter.executor.base import Executor, P, Pairs, ValidityResult, validate_jobs, with_grammar_check

class LocalExecutor:
    """This machine: spaCy in `processes` worker processes (default: one per core, at most 4; one for a small
    campaign, parsers.default_processes), the model here."""

    name = "local"

    def __init__(self, processes: int | None = None):
        self.processes = processes
        self._owned: SpacyParser | None = None
        self._parser: Parser | None = None

    def start(self, model, parser: Parser | None = None, spacy_model: str | None = None,
              characters: int | None = None) -> Model:
        if parser is None:  # before the model: the parser's workers fork before llama.cpp or torch start threads
            parser = self._owned = SpacyParser(spacy_model or DEFAULT_SPACY_MODEL,
                                               n_process=self.processes or default_processes(characters))
        self._parser = parser
        self.validator = Validator(parser)
        self.parser_fingerprint = parser.fingerprint
        return resolve_model(model)

    def validate(self, jobs: Iterable[tuple[P, Pairs]]) -> Iterator[tuple[P, ValidityResult]]:
        return validate_jobs(self.validator, jobs)

    def describe(self) -> str:
        parser = self._parser
        if parser is not None and not isinstance(parser, SpacyParser):
            return f"this machine, the parser {getattr(parser, 'fingerprint', type(parser).__name__)}"
        n = parser.n_process if parser is not None else self.processes or default_processes()
        return f"this machine, {n} spaCy process{'es' if n != 1 else ''}"

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()
            self._owned = None


def _local(*, workers: int | None = None, **_) -> LocalExecutor:
    """This machine (the default)."""
    return LocalExecutor(workers)


def _ray(*, address: str | None = None, workers: int | None = None, cpus_per_worker: float = 1.0,
         gpus_per_worker: float = 0.0, **_) -> Executor:
    """A Ray cluster (pip install 'hinter[ray]')."""
    from hinter.executor.ray_cluster import RayExecutor
    return RayExecutor(address=address, workers=workers, cpus_per_worker=cpus_per_worker,
                       gpus_per_worker=gpus_per_worker)


def _register_builtins() -> None:
    EXECUTORS.register("local", _local)
    EXECUTORS.register("ray", _ray)


EXECUTORS: Registry = Registry("executors", "executor", "--executor", builtins=_register_builtins)


def make_executor(name: str = "local", *, address: str | None = None, workers: int | None = None,
                  cpus_per_worker: float = 1.0, gpus_per_worker: float = 0.0) -> Executor:
    """An executor by name, as the CLI's --executor names it."""
    # the options are checked where they are declared (config.Execution: --workers at least 1...)
    Execution(name, address, workers, cpus_per_worker, gpus_per_worker)
    factory = EXECUTORS.get(name, fix="local is this machine, ray a Ray cluster.")
    return factory(address=address, workers=workers, cpus_per_worker=cpus_per_worker, gpus_per_worker=gpus_per_worker)


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "ValidityResult", "make_executor", "validate_jobs", "with_grammar_check"]
