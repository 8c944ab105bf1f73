"""Model backends behind one interface; `load_model` reads a model spec from the CLI or Python."""
from __future__ import annotations

import builtins
from dataclasses import dataclass

from ..errors import InputError
from .base import BatchSpreadingModel, Model, Outcome, OutcomeCache, normalise
from .registry import Backend, find_backend, help_text, load_backend_model, register_backend


def load_model(spec: str, task=None, concurrency: int | None = None, threads: int | None = None) -> Model:
    """A model from its spec `PREFIX:REST`, through the backend registered for PREFIX (`registry.py`); `task` (a
    preset name, a task file or a Task; default imdb) gives generative models their prompt and answer parser, and
    tells classifiers whether the task is multi-label. `concurrency`: API models' requests at once (default 4);
    `threads`: llama.cpp's CPU threads (default: all)."""
    return load_backend_model(spec, task, concurrency, threads)


def __getattr__(name: str):
    # SPEC_HELP: the --model help, generated from the registry when first read (the built-in backends' modules
    # import hinter.tasks, which imports this package: they cannot be imported while it initialises).
    if name == "SPEC_HELP":
        return help_text()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class ModelSpec:
    """A model named by its spec, loaded where it runs (each Ray worker loads its own copy)."""

    spec: str
    task: object = None  # a preset name, a task file or a Task
    concurrency: int | None = None  # API models: requests at once, in all
    threads: int | None = None

    @property
    def backend(self) -> Backend | None:
        """The registered backend of the spec's prefix (None for an unknown one: loading it says so)."""
        return find_backend(self.spec.partition(":")[0])

    @property
    def is_api(self) -> bool:
        return self.backend is not None and self.backend.is_api

    def load(self) -> Model:
        return load_model(self.spec, self.task, self.concurrency, self.threads)


def resolve_model(model) -> Model:
    """A Model from a spec string, a ModelSpec, a Model, or a function list[str] -> list[outcome]."""
    if isinstance(model, str):
        return load_model(model)
    if isinstance(model, ModelSpec):
        return model.load()
    if hasattr(model, "predict") and hasattr(model, "fingerprint"):
        return model
    if builtins.callable(model):  # plain `callable` is this package's submodule once imported
        from .callable import CallableModel
        return CallableModel(model)
    raise InputError(f"cannot use {model!r} as a model",
                     fix="Pass a model spec string, an object with predict() and fingerprint, or a function.")


__all__ = ["Backend", "BatchSpreadingModel", "Model", "ModelSpec", "Outcome", "OutcomeCache", "help_text", "load_model",
           "normalise", "register_backend", "resolve_model"]
